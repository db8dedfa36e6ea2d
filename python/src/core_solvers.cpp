// flux, counting: argument conversion over the command layer, the bodies
// the CLI runs.
#include <fmt/format.h>

#include "core.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/number_text.hpp"
#include "ctmc/solvers/stationary.hpp"

namespace ctmc::python {
namespace {

// Items as the CLI's --H list; an empty list refused as there.
std::string h_list(const std::vector<std::string>& hs) {
  if (hs.empty()) throw InputError("--H: empty list");
  std::string joined;
  for (const auto& h : hs) joined += (joined.empty() ? "" : ",") + h;
  return joined;
}

commands::Arithmetic arithmetic(const std::string& mode) {
  if (mode == "exact") return commands::Arithmetic::Exact;
  if (mode == "double") return commands::Arithmetic::Double;
  if (mode == "mpfr") return commands::Arithmetic::Mpfr;
  throw InputError(fmt::format("mode: '{}' is not one of exact, mpfr, double", mode));
}

}  // namespace

commands::FluxResult flux(const ModelInput& mi, const std::vector<std::string>& hs, const std::string& mode,
                          unsigned precision) {
  const auto model = load_model(mi);
  commands::FluxOptions o;
  o.h_list = h_list(hs);
  o.arithmetic = arithmetic(mode);
  o.precision = precision;
  return commands::run_flux(model, mi.source, o);
}

std::vector<double> flux_double(const ModelInput& mi, const std::vector<std::string>& hs) {
  const auto model = load_model(mi);
  std::vector<double> out;
  out.reserve(hs.size());
  for (const auto& h : solvers::parse_input_list(h_list(hs), "--H"))
    out.push_back(solvers::solve_stationary<double>(model, h, solvers::Method::Auto, mi.source).flux);
  return out;
}

commands::CountingResult counting(const ModelInput& mi, const std::string& h, const std::string& t,
                                  const std::string& from, const std::string& mode, unsigned precision) {
  const auto model = load_model(mi);
  commands::CountingOptions o;
  o.h_text = h;
  o.t_text = t;
  o.from = from;
  o.arithmetic = arithmetic(mode);
  o.precision = precision;
  return commands::run_counting(model, mi.source, o);
}

}  // namespace ctmc::python
