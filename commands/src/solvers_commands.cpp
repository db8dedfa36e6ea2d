// flux, counting, formula (flux.hpp, counting.hpp, formula.hpp) and the model
// input of every command (model_input.hpp).
#include <fmt/format.h>

#include <cmath>
#include <type_traits>

#include "ctmc/commands/command_text.hpp"
#include "ctmc/commands/counting.hpp"
#include "ctmc/commands/flux.hpp"
#include "ctmc/commands/formula.hpp"
#include "ctmc/solvers/counting.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/solvers/number_text.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/solvers/stationary.hpp"
#include "ctmc/solvers/tree_theorem.hpp"

namespace ctmc::commands {
namespace {

template <class T>
unsigned bits_of() {
  if constexpr (std::is_same_v<T, double>)
    return 53;
  else
    return ctmc::precision_bits();
}

// |a - b| / |b| as a double (0 when both are 0).
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

template <class T>
FluxResult flux_rows(const solvers::Model& model, const std::string& source, const FluxOptions& o) {
  const auto hs = solvers::parse_input_list(o.h_list, "--H");
  const std::string family = solvers::family_name(model);
  FluxResult out;
  for (const auto& h : hs) {
    const auto r = solvers::solve_stationary<T>(model, h, solvers::Method::Auto, source);
    FluxRow row;
    row.H = solvers::exact_text(h);
    for (std::size_t i = 0; i < model.size(); ++i) row.pi.emplace_back(model.states[i], show(r.pi[i], o.precision));
    row.flux = show(r.flux, o.precision);
    auto cf = solvers::closed_form_flux<T>(model, h);
    if (cf && cf->den == 0) cf.reset();  // no spanning tree: the solver has already refused such a chain
    bool overflows = false;  // the closed form's products beyond double's range (inf / inf printed -nan)
    if constexpr (std::is_same_v<T, double>) overflows = cf && !std::isfinite(cf->value());
    if (overflows) {
      row.family = family;
      row.closed_form = "not evaluated: its products overflow a double at this H (use the default MPFR mode or "
                        "--exact)";
    } else if (cf) {
      const T value = cf->value();
      row.family = family;
      row.closed_form = solvers::closed_form_text(family);
      row.closed_form_value = show(value, o.precision);
      if constexpr (std::is_same_v<T, solvers::Rational>) {
        row.difference = solvers::exact_text(r.flux - value);
      } else {
        const double rel = relative_difference(r.flux, value);
        row.relative_difference = rel;
        row.correct_bits = solvers::correct_bits(rel, bits_of<T>());
      }
    } else if (!family.empty()) {
      row.family = family;
      // Why there is none, so that a valid model does not read as broken.
      if (family == "general")
        row.closed_form = "none for the general family (the flux above is from GTH)";
      else if (!solvers::closed_form_text(family).empty())
        row.closed_form = "unavailable: the model's states and transitions do not have the " + family +
                          " family's structure (meta.family says " + family + ")";
      else
        row.closed_form = "none: meta.family '" + family +
                          "' is not one with a closed form (two-state, three-state, full-three-state, bernstein)";
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

template <class A, class F>
CountingResult counting_in(const solvers::Model& model, const std::string& source, const CountingOptions& o) {
  const auto h = solvers::parse_input_value(o.h_text, "--H");
  const auto horizon = solvers::parse_input_value(o.t_text, "--T");
  if (horizon <= 0) throw InputError(fmt::format("--T: '{}' must be > 0", o.t_text));
  {
    // Every mode runs the matrix exponential of (rates x T), whose scaling
    // step is planned in double: T must be finite (and, in --double, nonzero)
    // there.
    const double t_double = solvers::from_rational<double>(horizon);
    if (!std::isfinite(t_double))
      throw InputError(fmt::format("--T: '{}' is beyond the range of double (at most about 1.8e308)", o.t_text));
    if (std::is_same_v<F, double> && !(t_double > 0))
      throw InputError(fmt::format("--T: '{}' rounds to 0 in double arithmetic (use the default MPFR mode)", o.t_text));
  }
  const auto as = solvers::asymptotic_counting<A>(model, h, source);
  std::vector<F> pi0(model.size(), F(0));
  std::string start = "stationary";
  if (!o.from.empty()) {
    std::size_t idx;
    try {
      idx = model.state_index(o.from);
    } catch (const std::out_of_range&) {
      throw InputError(fmt::format("--from: unknown state '{}' in {}", o.from, source));
    }
    pi0[idx] = F(1);
    start = o.from;
  } else {
    for (std::size_t i = 0; i < model.size(); ++i) {
      if constexpr (std::is_same_v<A, F>)
        pi0[i] = as.theta[i];
      else
        pi0[i] = solvers::from_rational<F>(as.theta[i]);
    }
  }
  const auto mom = solvers::counting_moments<F>(model, h, pi0, solvers::from_rational<F>(horizon), source);
  const unsigned p = o.precision;
  CountingResult c;
  c.model = source;
  c.H = solvers::exact_text(h);
  c.T = solvers::exact_text(horizon);
  c.start = start;
  c.mean = show(mom.mean, p);
  c.variance = show(mom.variance, p);
  c.fano_T = mom.mean > 0 ? show(F(mom.variance / mom.mean), p) : std::string("undefined (no spikes)");
  c.rate = show(as.rate, p);
  c.variance_rate = show(as.variance_rate, p);
  c.fano = as.rate > 0 ? show(as.fano(), p) : std::string("undefined (no spikes)");
  return c;
}

}  // namespace

solvers::Model load_model(const ModelInput& in) {
  return in.is_path ? solvers::read_model_file(in.text) : solvers::model_from_json_text(in.text, in.source);
}

unsigned checked_precision(unsigned precision) {
  if (precision < 53 || precision > 100000)
    throw InputError(fmt::format("--precision: Value {} not in range [53 - 100000]", precision));
  return precision;
}

FluxResult run_flux(const solvers::Model& model, const std::string& source, const FluxOptions& o) {
  switch (o.arithmetic) {
    case Arithmetic::Exact:
      return flux_rows<solvers::Rational>(model, source, o);
    case Arithmetic::Double:
      return flux_rows<double>(model, source, o);
    case Arithmetic::Mpfr:
      break;
  }
  const ctmc::PrecisionScope precision(checked_precision(o.precision));
  return flux_rows<solvers::Mpfr>(model, source, o);
}

CountingResult run_counting(const solvers::Model& model, const std::string& source, const CountingOptions& o) {
  if (o.arithmetic == Arithmetic::Double) return counting_in<double, double>(model, source, o);
  const ctmc::PrecisionScope precision(checked_precision(o.precision));
  if (o.arithmetic == Arithmetic::Exact) return counting_in<solvers::Rational, solvers::Mpfr>(model, source, o);
  return counting_in<solvers::Mpfr, solvers::Mpfr>(model, source, o);
}

FormulaResult run_formula(const solvers::Model& model, const std::string& source) {
  const auto f = solvers::flux_formula(model, source);
  const auto& tree = f.tree;
  FormulaResult r;
  r.model = source;
  r.states = model.states;
  r.transitions = model.transitions.size();
  for (const auto& s : f.symbols.legend) {
    const auto& t = model.transitions[s.transition];
    r.symbols.push_back({s.name, s.latex, model.states[t.from], model.states[t.to], t.spike, s.rate_text});
  }
  for (std::size_t i = 0; i < model.size(); ++i) {
    r.tree_sums.push_back(tree.tree_sums[i].to_text());
    r.tree_sums_latex.push_back(tree.tree_sums[i].to_latex());
  }
  r.spanning_trees = tree.trees;
  r.numerator = tree.flux_num.to_text();
  r.denominator = tree.flux_den.to_text();
  r.text = f.text;
  r.latex = f.latex;
  return r;
}

}  // namespace ctmc::commands
