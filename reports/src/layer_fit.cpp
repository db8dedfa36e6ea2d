#include "ctmc/reports/layer_fit.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ctmc::reports {

bool rectified_linear(const std::string& activation) {
  return activation == "relu" || activation.rfind("cliprelu_", 0) == 0;
}

std::string conversion_family(const std::string& activation) {
  if (rectified_linear(activation)) return "two-state";
  if (activation == "softplus") return "full-three-state";
  return "three-state";
}

double conversion_rate_bound(const std::string& activation) { return rectified_linear(activation) ? 1000 : 10; }

std::string quantile_samples_text(const std::vector<float>& sorted, std::size_t n, const std::string& header) {
  n = std::min(n, sorted.size());
  std::string text = "# " + header + "\n";
  for (std::size_t k = 0; k < n; ++k) {
    const auto at = static_cast<std::size_t>((static_cast<double>(k) + 0.5) / static_cast<double>(n) *
                                             static_cast<double>(sorted.size()));
    text += fmt::format("{:.9g}\n", sorted[std::min(at, sorted.size() - 1)]);
  }
  return text;
}

}  // namespace ctmc::reports
