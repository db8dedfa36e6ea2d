// flux, counting, formula: the bodies of cli/cmd_flux.cpp, cmd_counting.cpp
// and cmd_formula.cpp (their --json documents), over the same library calls.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "core.hpp"
#include "ctmc/solvers/counting.hpp"
#include "ctmc/solvers/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/solvers/stationary.hpp"
#include "ctmc/solvers/tree_theorem.hpp"

namespace ctmc::python {
namespace {

using ojson = nlohmann::ordered_json;

// cli/scalar_text.hpp's show(): exact text, 17 digits, or the MPFR precision's digits.
template <class T>
std::string show(const T& x, unsigned precision) {
  if constexpr (std::is_same_v<T, solvers::Rational>) {
    return solvers::exact_text(x);
  } else if constexpr (std::is_same_v<T, double>) {
    return fmt::format("{:.17g}", x);
  } else {
    return solvers::to_string(x, static_cast<int>(precision * 0.30103) + 1);
  }
}

template <class T>
unsigned bits_of() {
  if constexpr (std::is_same_v<T, double>)
    return 53;
  else
    return solvers::precision_bits();
}

template <class T>
double relative_difference(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, double>) {
    if (a == b) return 0;
    return std::abs(a - b) / std::abs(b);
  } else {
    if (a == b) return 0;
    return solvers::to_double(T(abs(a - b) / abs(b)));
  }
}

// Items as the CLI's --H list: each item checked as parse_input_list checks
// them, an empty list refused as there.
std::vector<solvers::Rational> parse_hs(const std::vector<std::string>& hs) {
  if (hs.empty()) throw InputError("--H: empty list");
  std::string joined;
  for (const auto& h : hs) joined += (joined.empty() ? "" : ",") + h;
  return solvers::parse_input_list(joined, "--H");
}

template <class T>
std::string run_flux(const solvers::Model& model, const std::string& source, const std::vector<std::string>& h_items,
                     unsigned precision) {
  const auto hs = parse_hs(h_items);
  const std::string family = solvers::family_name(model);
  ojson out = ojson::array();
  for (const auto& h : hs) {
    const auto r = solvers::solve_stationary<T>(model, h, solvers::Method::Auto, source);
    ojson row;
    row["H"] = solvers::exact_text(h);
    ojson pi = ojson::object();
    for (std::size_t i = 0; i < model.size(); ++i) pi[model.states[i]] = show(r.pi[i], precision);
    row["pi"] = pi;
    row["flux"] = show(r.flux, precision);
    auto cf = solvers::closed_form_flux<T>(model, h);
    if (cf && cf->den == 0) cf.reset();
    bool overflows = false;
    if constexpr (std::is_same_v<T, double>) overflows = cf && !std::isfinite(cf->value());
    if (overflows) {
      row["family"] = family;
      row["closed_form"] = "not evaluated: its products overflow a double at this H (use the default MPFR mode or "
                           "--exact)";
    } else if (cf) {
      const T value = cf->value();
      row["family"] = family;
      row["closed_form"] = solvers::closed_form_text(family);
      row["closed_form_value"] = show(value, precision);
      if constexpr (std::is_same_v<T, solvers::Rational>) {
        row["difference"] = solvers::exact_text(r.flux - value);
      } else {
        const double rel = relative_difference(r.flux, value);
        row["relative_difference"] = rel;
        row["correct_bits"] = solvers::correct_bits(rel, bits_of<T>());
      }
    } else if (!family.empty()) {
      row["family"] = family;
      if (family == "general")
        row["closed_form"] = "none for the general family (the flux above is from GTH)";
      else if (!solvers::closed_form_text(family).empty())
        row["closed_form"] = "unavailable: the model's states and transitions do not have the " + family +
                             " family's structure (meta.family says " + family + ")";
      else
        row["closed_form"] = "none: meta.family '" + family +
                             "' is not one with a closed form (two-state, three-state, full-three-state, bernstein)";
    }
    out.push_back(row);
  }
  return out.dump();
}

unsigned checked_precision(unsigned precision) {
  // CLI11's Range(53, 100000) on --precision.
  if (precision < 53 || precision > 100000)
    throw InputError(fmt::format("--precision: Value {} not in range [53 - 100000]", precision));
  return precision;
}

template <class A, class F>
std::string run_counting(const solvers::Model& model, const std::string& source, const std::string& h_text,
                         const std::string& t_text, const std::string& from, unsigned precision) {
  const auto h = solvers::parse_input_value(h_text, "--H");
  const auto horizon = solvers::parse_input_value(t_text, "--T");
  if (horizon <= 0) throw InputError(fmt::format("--T: '{}' must be > 0", t_text));
  {
    const double t_double = solvers::from_rational<double>(horizon);
    if (!std::isfinite(t_double))
      throw InputError(fmt::format("--T: '{}' is beyond the range of double (at most about 1.8e308)", t_text));
    if (std::is_same_v<F, double> && !(t_double > 0))
      throw InputError(fmt::format("--T: '{}' rounds to 0 in double arithmetic (use the default MPFR mode)", t_text));
  }
  const auto as = solvers::asymptotic_counting<A>(model, h, source);
  std::vector<F> pi0(model.size(), F(0));
  std::string start = "stationary";
  if (!from.empty()) {
    std::size_t idx;
    try {
      idx = model.state_index(from);
    } catch (const std::out_of_range&) {
      throw InputError(fmt::format("--from: unknown state '{}' in {}", from, source));
    }
    pi0[idx] = F(1);
    start = from;
  } else {
    for (std::size_t i = 0; i < model.size(); ++i) {
      if constexpr (std::is_same_v<A, F>)
        pi0[i] = as.theta[i];
      else
        pi0[i] = solvers::from_rational<F>(as.theta[i]);
    }
  }
  const auto mom = solvers::counting_moments<F>(model, h, pi0, solvers::from_rational<F>(horizon), source);
  const unsigned p = precision;
  ojson j;
  j["model"] = source;
  j["H"] = solvers::exact_text(h);
  j["T"] = solvers::exact_text(horizon);
  j["start"] = start;
  j["mean"] = show(mom.mean, p);
  j["variance"] = show(mom.variance, p);
  j["fano_T"] = mom.mean > 0 ? show(F(mom.variance / mom.mean), p) : std::string("undefined (no spikes)");
  j["rate"] = show(as.rate, p);
  j["variance_rate"] = show(as.variance_rate, p);
  j["fano"] = as.rate > 0 ? show(as.fano(), p) : std::string("undefined (no spikes)");
  return j.dump();
}

}  // namespace

solvers::Model load_model(const ModelInput& in) {
  return in.is_path ? solvers::read_model_file(in.text) : solvers::model_from_json_text(in.text, in.source);
}

std::string flux_json(const ModelInput& mi, const std::vector<std::string>& hs, const std::string& mode,
                      unsigned precision) {
  const auto model = load_model(mi);
  if (mode == "exact") return run_flux<solvers::Rational>(model, mi.source, hs, precision);
  if (mode == "double") return run_flux<double>(model, mi.source, hs, precision);
  if (mode != "mpfr") throw InputError(fmt::format("mode: '{}' is not one of exact, mpfr, double", mode));
  solvers::set_precision_bits(checked_precision(precision));
  return run_flux<solvers::Mpfr>(model, mi.source, hs, precision);
}

std::vector<double> flux_double(const ModelInput& mi, const std::vector<std::string>& hs) {
  const auto model = load_model(mi);
  std::vector<double> out;
  out.reserve(hs.size());
  for (const auto& h : parse_hs(hs))
    out.push_back(solvers::solve_stationary<double>(model, h, solvers::Method::Auto, mi.source).flux);
  return out;
}

std::string counting_json(const ModelInput& mi, const std::string& h, const std::string& t, const std::string& from,
                          const std::string& mode, unsigned precision) {
  const auto model = load_model(mi);
  if (mode == "double") return run_counting<double, double>(model, mi.source, h, t, from, precision);
  if (mode != "mpfr" && mode != "exact")
    throw InputError(fmt::format("mode: '{}' is not one of exact, mpfr, double", mode));
  solvers::set_precision_bits(checked_precision(precision));
  if (mode == "exact") return run_counting<solvers::Rational, solvers::Mpfr>(model, mi.source, h, t, from, precision);
  return run_counting<solvers::Mpfr, solvers::Mpfr>(model, mi.source, h, t, from, precision);
}

std::string formula_json(const ModelInput& mi) {
  const auto model = load_model(mi);
  const auto f = solvers::flux_formula(model, mi.source);
  const auto& tree = f.tree;
  ojson j;
  j["model"] = mi.source;
  j["states"] = model.states;
  ojson legend = ojson::array();
  for (const auto& s : f.symbols.legend) {
    const auto& t = model.transitions[s.transition];
    legend.push_back({{"symbol", s.name},
                      {"latex", s.latex},
                      {"from", model.states[t.from]},
                      {"to", model.states[t.to]},
                      {"spike", t.spike},
                      {"rate", s.rate_text}});
  }
  j["symbols"] = legend;
  ojson sums = ojson::object();
  for (std::size_t i = 0; i < model.size(); ++i) sums[model.states[i]] = tree.tree_sums[i].to_text();
  j["tree_sums"] = sums;
  j["spanning_trees"] = tree.trees;
  j["flux"] = {{"numerator", tree.flux_num.to_text()},
               {"denominator", tree.flux_den.to_text()},
               {"text", f.text},
               {"latex", f.latex}};
  return j.dump();
}

}  // namespace ctmc::python
