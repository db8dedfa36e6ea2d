#include "ctmc/commands/layer_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "ctmc/activations/activation.hpp"
#include "ctmc/analysis/fit_flux.hpp"

namespace ctmc::commands {

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

LayerFit fit_layer_neuron(const std::string& folder, const std::string& samples, const std::string& target,
                          int starts, unsigned long long seed, int threads) {
  namespace fs = std::filesystem;
  LayerFit lf;
  analysis::FitProblem& p = lf.problem;
  p.family = analysis::parse_family(conversion_family(target), 0);
  p.activation = activations::parse_activation(target);
  p.bounds.rate_bound = conversion_rate_bound(target);
  p.data = analysis::read_samples((fs::path(folder) / samples).string());
  const std::string prefix = (fs::path(folder) / "").string();
  if (const auto pos = p.data.description.find(prefix); pos != std::string::npos)
    p.data.description.replace(pos, prefix.size(), "");
  analysis::FitOptions fo;
  fo.starts = starts;
  fo.seed = seed;
  fo.threads = threads;
  fo.widen_on_bound = false;
  lf.result = analysis::fit(p, fo);
  return lf;
}

FitCommandOptions layer_fit_options(const std::string& samples, const std::string& target, int starts,
                                    unsigned long long seed, const std::string& output) {
  FitCommandOptions o;
  o.activation = target;
  o.family = conversion_family(target);
  o.samples = samples;
  o.bounds.rate_bound = conversion_rate_bound(target);
  o.search.widen_on_bound = false;
  o.search.starts = starts;
  o.search.seed = seed;
  o.output = output;
  return o;
}

}  // namespace ctmc::commands
