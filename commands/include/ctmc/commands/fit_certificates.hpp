// The certificates of a fit, for `ctmc-snn fit --certify` and `report fits`:
// the certified sup error of a chain against the fit's target over the whole
// domain (proofs_check/chain_sup.hpp) and, for the two- and three-state
// families, the certified lower bound on the family's least-squares optimum
// over the fit's parameter box (proofs_check/fit_optimality.hpp). Here,
// above both analysis (the fit problem) and proofs_check (the bounds).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "ctmc/analysis/fit.hpp"
#include "ctmc/proofs_check/chain_sup.hpp"
#include "ctmc/proofs_check/fit_optimality.hpp"

namespace ctmc::commands {

// Certified optimum: boxes within this gap of the fit's MSE are discarded
// (two-state 0.1%; three-state 1%, the target of its certificate).
inline constexpr double kOptimalityGap = 1e-3;
inline constexpr double kThreeStateGap = 1e-2;

// The box budgets of the certified-optimum search (certify_fit_optimum),
// which `report fits` states beside its tables. The two-state search ends
// well inside its budget (about 3e4 boxes per row of the fit table). Every
// three-state row of the fit table is certified to 1% inside its budget
// (bench_certificates three-state), the last ones at 4.5e5 (cliprelu_1 and
// 2), 5.3e5 (relu), 5.6e5 (sigmoid_shift_2) and 7.2e5 boxes (sigmoid, under
// 10 minutes of CPU on one core). No earlier budget tells the rows that close
// from those that do not: relu's bound is 0 until 2e5 boxes. A row that does
// not close stops at a bound and says so.
inline constexpr std::int64_t kTwoStateBoxes = 2000000;
inline constexpr std::int64_t kThreeStateBoxes = 800000;

// The gap the certificate of a closed family works to.
inline double optimality_gap(const analysis::FamilySpec& f) {
  return f.family == analysis::FitFamily::TwoState ? kOptimalityGap : kThreeStateGap;
}

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

// The certified sup, or why it is not defined: `error` is the InputError's
// text when the chain's flux is not defined somewhere on the domain.
struct SupCell {
  std::optional<proofs_check::ChainSupResult> sup;
  std::string error;
};
SupCell try_certified_sup(const solvers::Model& model, const analysis::FitProblem& p,
                          const proofs_check::ChainSupOptions& opt = {});

// The optimality certificate of a fit with MSE `mse` (box budget by family);
// `precision`: MPFI bits of the targets; `threads`: the search's threads (0:
// OpenMP's default), which do not change its result.
proofs_check::OptimalityResult certify_fit_optimum(const analysis::FitProblem& p, double mse, unsigned precision,
                                                   int threads = 1);

}  // namespace ctmc::commands
