// flux, counting, formula: argument conversion over reports/commands.hpp,
// the bodies the CLI runs.
#include <fmt/format.h>

#include "core.hpp"
#include "ctmc/reports/commands.hpp"
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

reports::Arithmetic arithmetic(const std::string& mode) {
  if (mode == "exact") return reports::Arithmetic::Exact;
  if (mode == "double") return reports::Arithmetic::Double;
  if (mode == "mpfr") return reports::Arithmetic::Mpfr;
  throw InputError(fmt::format("mode: '{}' is not one of exact, mpfr, double", mode));
}

}  // namespace

std::string flux_json(const ModelInput& mi, const std::vector<std::string>& hs, const std::string& mode,
                      unsigned precision) {
  const auto model = load_model(mi);
  reports::FluxOptions o;
  o.h_list = h_list(hs);
  o.arithmetic = arithmetic(mode);
  o.precision = precision;
  return reports::flux_json(model, mi.source, o).dump();
}

std::vector<double> flux_double(const ModelInput& mi, const std::vector<std::string>& hs) {
  const auto model = load_model(mi);
  std::vector<double> out;
  out.reserve(hs.size());
  for (const auto& h : solvers::parse_input_list(h_list(hs), "--H"))
    out.push_back(solvers::solve_stationary<double>(model, h, solvers::Method::Auto, mi.source).flux);
  return out;
}

std::string counting_json(const ModelInput& mi, const std::string& h, const std::string& t, const std::string& from,
                          const std::string& mode, unsigned precision) {
  const auto model = load_model(mi);
  reports::CountingOptions o;
  o.h_text = h;
  o.t_text = t;
  o.from = from;
  o.arithmetic = arithmetic(mode);
  o.precision = precision;
  return reports::counting_json(model, mi.source, o).dump();
}

std::string formula_json(const ModelInput& mi) {
  return reports::formula_json(load_model(mi), mi.source).dump();
}

}  // namespace ctmc::python
