// The certificates of a fit, for `report fits` and
// `ctmc-snn fit --certify`: the certified sup error of a chain against the
// fit's target over the whole domain (proofs_check/chain_sup.hpp) and, for
// the two- and three-state families, the certified lower bound on the
// family's least-squares optimum over the fit's parameter box
// (proofs_check/fit_optimality.hpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "ctmc/analysis/fit.hpp"
#include "ctmc/proofs_check/chain_sup.hpp"
#include "ctmc/proofs_check/fit_optimality.hpp"

namespace ctmc::reports {

// Certified optimum: boxes within 0.1% of the fit's MSE are discarded. The
// search's box budget per family is internal (reports/src/certificate_budgets.hpp).
inline constexpr double kOptimalityGap = 1e-3;

// The closed family of a FamilySpec (two-state, three-state), if it is one.
std::optional<proofs_check::ClosedFamily> closed_family(const analysis::FamilySpec& f);

// Whether `model` is a chain of family f: the same states and transitions
// (from, to, spike) as the family's chain, in any order, with slope 0 where
// the family has a constant rate. Otherwise the reason, naming the first
// difference.
std::optional<std::string> family_mismatch(const solvers::Model& model, const analysis::FamilySpec& f);

// The optimality problem of a fit: its points, weights, target and box
// (FitBounds at its widen factor). InputError unless the family is two- or
// three-state.
proofs_check::OptimalityProblem optimality_problem(const analysis::FitProblem& p);

// Certified sup |nu - alpha phi| of `model` over the fit's domain.
proofs_check::ChainSupResult certified_sup_error(const solvers::Model& model, const analysis::FitProblem& p,
                                                 const proofs_check::ChainSupOptions& opt = {},
                                                 const std::string& source = "model");

// One cell for tables: "1.234e-02" (tight to 1%), "<= 4.1e-09 (>= 2.0e-18)"
// (stopped by rounding or the budget), "not bounded (>= ...)", or
// "undefined (see summary)" (the reason is in `error`).
struct SupCell {
  std::optional<proofs_check::ChainSupResult> sup;
  std::string error;  // the InputError's text when the sup is not defined
};
SupCell try_certified_sup(const solvers::Model& model, const analysis::FitProblem& p,
                          const proofs_check::ChainSupOptions& opt = {});
std::string sup_text(const SupCell& c);
// "within 0.1% (certified)", "gap 3.2% (lower bound 1.234e-03)", ...
std::string optimality_text(const proofs_check::OptimalityResult& r, double rel_gap);

// The optimality certificate of a fit with MSE `mse` (box budget by family);
// `precision`: MPFI bits of the targets.
proofs_check::OptimalityResult certify_fit_optimum(const analysis::FitProblem& p, double mse, unsigned precision);

}  // namespace ctmc::reports
