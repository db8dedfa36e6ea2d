// Activation tables (activations/activation.hpp, `table:FILE`): parse_activation
// on the input as the CSV; an accepted table is evaluated at its knots, between
// and beyond them, and its coverage checked, and the values must be finite.
#include <cmath>
#include <limits>

#include "ctmc/activations/activation.hpp"
#include "fuzz_common.hpp"

using namespace ctmc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_file("phi.csv", data, size);
  activations::Activation a;
  if (!fuzz::reject_only("parse_activation(table:)", [&] { a = activations::parse_activation("table:" + path); })) return 0;
  if (a.xs.empty() || a.xs.size() != a.ys.size()) fuzz::finding("accepted table without matching knots");
  const double big = std::numeric_limits<double>::max();
  std::vector<double> at = {-big, big, 0.0, a.xs.front() - 1, a.xs.back() + 1};
  for (std::size_t i = 0; i < a.xs.size(); ++i) {
    at.push_back(a.xs[i]);
    if (i + 1 < a.xs.size()) at.push_back(a.xs[i] / 2 + a.xs[i + 1] / 2);
  }
  for (double x : at) {
    const double y = a.eval(x);
    if (!std::isfinite(y)) fuzz::finding("table value not finite at x = " + std::to_string(x));
  }
  fuzz::reject_only("table_coverage_violation", [&] { (void)activations::table_coverage_violation(a, -1, 1); });
  return 0;
}
