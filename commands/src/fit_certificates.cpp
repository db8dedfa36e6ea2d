#include "ctmc/commands/fit_certificates.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "ctmc/core/errors.hpp"

namespace ctmc::commands {

std::optional<proofs_check::ClosedFamily> closed_family(const analysis::FamilySpec& f) {
  if (f.family == analysis::FitFamily::TwoState) return proofs_check::ClosedFamily::TwoState;
  if (f.family == analysis::FitFamily::ThreeState) return proofs_check::ClosedFamily::ThreeState;
  return std::nullopt;
}

std::optional<std::string> family_mismatch(const solvers::Model& model, const analysis::FamilySpec& f) {
  const auto ref = analysis::model_of(f, std::vector<double>(analysis::parameter_count(f), 1.0));
  const auto params = analysis::family_parameters(f);
  if (model.states.size() != ref.states.size())
    return fmt::format("{} states, the {} family has {}", model.states.size(), analysis::family_name(f),
                       ref.states.size());
  // (from, to, spike, constant) by state names.
  using Key = std::tuple<std::string, std::string, bool>;
  std::set<Key> want, have;
  std::set<std::pair<std::string, std::string>> constants;
  std::size_t k = 0;
  for (const auto& t : ref.transitions) {
    want.insert({ref.states[t.from], ref.states[t.to], t.spike});
    // Parameters come in family order: a rectified rate takes two, a constant one.
    if (analysis::is_rectified_rate(params, k)) {
      k += 2;
    } else {
      constants.insert({ref.states[t.from], ref.states[t.to]});
      k += 1;
    }
  }
  for (const auto& t : model.transitions) {
    have.insert({model.states[t.from], model.states[t.to], t.spike});
    if (constants.count({model.states[t.from], model.states[t.to]}) && t.slope.value != 0)
      return fmt::format("transition {} -> {} depends on H; in the {} family it is a constant rate",
                         model.states[t.from], model.states[t.to], analysis::family_name(f));
  }
  if (have != want || model.transitions.size() != ref.transitions.size()) {
    std::string names;
    for (const auto& [from, to, spike] : want) names += fmt::format("{}{} -> {}{}", names.empty() ? "" : ", ", from, to, spike ? " (spike)" : "");
    return fmt::format("its transitions are not those of the {} family ({})", analysis::family_name(f), names);
  }
  return std::nullopt;
}

proofs_check::OptimalityProblem optimality_problem(const analysis::FitProblem& p) {
  const auto cf = closed_family(p.family);
  if (!cf)
    throw InputError(fmt::format("optimality certificate: only the two- and three-state families (not {})",
                                 analysis::family_name(p.family)));
  proofs_check::OptimalityProblem o;
  o.family = *cf;
  o.h = p.data.h_exact;
  o.w = p.data.w_exact;
  o.activation = p.activation;
  o.alpha = p.alpha;
  for (const auto& par : analysis::family_parameters(p.family)) {
    o.lower.push_back(p.bounds.lower(par.kind));
    o.upper.push_back(p.bounds.upper(par.kind));
  }
  return o;
}

proofs_check::ChainSupResult certified_sup_error(const solvers::Model& model, const analysis::FitProblem& p,
                                                 const proofs_check::ChainSupOptions& opt, const std::string& source) {
  return proofs_check::certified_chain_sup(model, p.activation, p.alpha, p.data.lo, p.data.hi, opt, source);
}

SupCell try_certified_sup(const solvers::Model& model, const analysis::FitProblem& p,
                          const proofs_check::ChainSupOptions& opt) {
  SupCell c;
  try {
    c.sup = certified_sup_error(model, p, opt, "model");
  } catch (const InputError& e) {
    std::string what = e.what();
    if (what.rfind("model: ", 0) == 0) what = what.substr(7);
    c.error = what;
  }
  return c;
}

proofs_check::OptimalityResult certify_fit_optimum(const analysis::FitProblem& p, double mse, unsigned precision,
                                                   int threads) {
  proofs_check::OptimalityOptions o;
  o.rel_gap = optimality_gap(p.family);
  o.max_boxes = p.family.family == analysis::FitFamily::TwoState ? kTwoStateBoxes : kThreeStateBoxes;
  o.precision = precision;
  o.threads = threads;
  return proofs_check::certify_optimality(optimality_problem(p), mse, o);
}

}  // namespace ctmc::commands
