// Built against the installed ctmc_snn package (tests/package_consumer/run.sh):
// solves a two-state neuron with the library's GTH in exact rational, MPFR and
// double arithmetic and checks the flux against the closed form a d / (a + d)
// computed here. Exit 0 when every check holds, 1 otherwise.
#include <cmath>
#include <iostream>

#include "ctmc/activations/activation.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/stationary.hpp"

int main() {
  using ctmc::solvers::Rational;
  // B -> R spike at a(H) = 1/3 + 2 H, R -> B at d = 5/7.
  const std::string text = R"({"states": ["B", "R"], "transitions": [
    {"from": "B", "to": "R", "offset": "1/3", "slope": 2, "spike": true},
    {"from": "R", "to": "B", "offset": "5/7"}]})";
  const auto model = ctmc::solvers::model_from_json_text(text, "consumer model");
  const Rational H(1, 4);
  const Rational a = Rational(1, 3) + 2 * H, d(5, 7);
  const Rational expected = a * d / (a + d);
  int failures = 0;

  const auto exact = ctmc::solvers::solve_stationary<Rational>(model, H);
  if (exact.flux != expected) {
    std::cerr << "exact flux " << exact.flux << " != " << expected << "\n";
    ++failures;
  }
  const auto dbl = ctmc::solvers::solve_stationary<double>(model, H);
  const double ref = ctmc::solvers::to_double(expected);
  if (std::abs(dbl.flux - ref) > 4e-16 * ref) {
    std::cerr << "double flux " << dbl.flux << " != " << ref << "\n";
    ++failures;
  }
  const ctmc::PrecisionScope precision_256_at_35(256);
  const auto mp = ctmc::solvers::solve_stationary<ctmc::solvers::Mpfr>(model, H);
  if (ctmc::solvers::relative_error(mp.flux, expected) > 1e-70) {
    std::cerr << "MPFR flux relative error " << ctmc::solvers::relative_error(mp.flux, expected) << "\n";
    ++failures;
  }
  // A symbol of activations (linked through ctmc_snn::activations).
  const auto relu = ctmc::activations::parse_activation("relu");
  if (relu.name != "relu") {
    std::cerr << "activation name " << relu.name << "\n";
    ++failures;
  }
  std::cout << "consumer: flux " << exact.flux << " (closed form " << expected << "), "
            << (failures ? "FAILED" : "ok") << "\n";
  return failures ? 1 : 0;
}
