// Benchmark: the certificates of `report fits` (issue 20), per row, one core.
//   - certified global optimum of the two-state fit (interval branch and
//     bound to 0.1%), beside the baseline: the same search with the natural
//     (per-point range) bound alone, no mean-value bound or monotonicity test;
//   - certified lower bound on the three-state optimum within a box budget,
//     searched on the faces of the box (which hold every three-state curve,
//     fit_optimality.hpp), beside the baseline: the same budget on the
//     whole 6-dimensional box;
//   - certified sup |nu - alpha phi| over the domain to 1% of the two-state,
//     three-state and general-4 fits, beside the baseline: the monotone
//     (tree-theorem) cell bound alone, no centred form.
// The fits themselves (16 starts, seed 1) are not timed.
#include <fmt/format.h>

#include <chrono>

#include "ctmc/analysis/solver_logging.hpp"
#include "ctmc/analysis/fit_tables.hpp"
#include "ctmc/proofs_check/chain_sup.hpp"
#include "ctmc/proofs_check/fit_optimality.hpp"
#include "ctmc/commands/fit_certificates.hpp"

using namespace ctmc;

namespace {
template <class F>
double seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main() {
  ctmc::analysis::quiet_solver_logging();  // the fits' solver: FATAL messages only
  analysis::FitOptions fo;
  fo.starts = 16;
  fo.threads = 1;
  fo.widen_on_bound = false;
  constexpr std::int64_t kBaselineBoxes = 50000;
  fmt::print("two-state optimum to {:g}% (boxes, seconds) | baseline: natural bound only (budget {} boxes)\n",
             100 * commands::kOptimalityGap, kBaselineBoxes);
  fmt::print("{:<16} {:>10} {:>9} {:>8} | {:>10} {:>9} {:>8}\n", "target", "MSE", "boxes", "s", "gap", "boxes", "s");
  double total = 0, total_base = 0;
  std::vector<std::pair<analysis::FitTarget, std::vector<solvers::Model>>> models;
  for (const auto& t : analysis::fit_table_targets()) {
    std::vector<solvers::Model> ms;
    for (const analysis::FamilySpec f : {analysis::FamilySpec{analysis::FitFamily::TwoState, 2},
                                         analysis::FamilySpec{analysis::FitFamily::ThreeState, 3},
                                         analysis::FamilySpec{analysis::FitFamily::General, 4}})
      ms.push_back(analysis::fit(analysis::make_fit_problem(t, f), fo).model);
    const auto p = analysis::make_fit_problem(t, {analysis::FitFamily::TwoState, 2});
    const double mse = analysis::evaluate_exactly(ms[0], p, 128).mse;
    proofs_check::OptimalityResult r, b;
    const double s = seconds([&] { r = commands::certify_fit_optimum(p, mse, 128); });
    proofs_check::OptimalityOptions base;
    base.rel_gap = commands::kOptimalityGap;
    base.max_boxes = kBaselineBoxes;
    base.mean_value = false;
    const double sb = seconds([&] { b = proofs_check::certify_optimality(commands::optimality_problem(p), mse, base); });
    total += s;
    total_base += sb;
    fmt::print("{:<16} {:>10.3e} {:>9} {:>8.3f} | {:>10} {:>9} {:>8.3f}{}\n", t.label, mse, r.boxes, s,
               b.certified ? std::string("certified") : fmt::format("{:.2e}", b.gap), b.boxes, sb,
               r.certified ? "" : "  (NOT certified)");
    models.push_back({t, ms});
  }
  fmt::print("total: {:.2f} s (baseline {:.2f} s, stopped by its budget where not certified)\n\n", total, total_base);

  constexpr std::int64_t kThreeBoxes = 30000;
  fmt::print("three-state lower bound within {} boxes: faces of the box | baseline: the whole box\n", kThreeBoxes);
  fmt::print("{:<16} {:>10} {:>10} {:>8} {:>8} | {:>10} {:>8} {:>8}\n", "target", "MSE", "bound", "gap", "s",
             "bound", "gap", "s");
  for (const auto& [t, ms] : models) {
    const auto p = analysis::make_fit_problem(t, {analysis::FitFamily::ThreeState, 3});
    const double mse = analysis::evaluate_exactly(ms[1], p, 128).mse;
    proofs_check::OptimalityOptions o;
    o.rel_gap = commands::kOptimalityGap;
    o.max_boxes = kThreeBoxes;
    proofs_check::OptimalityResult r, b;
    const double s = seconds([&] { r = proofs_check::certify_optimality(commands::optimality_problem(p), mse, o); });
    o.faces = false;
    const double sb = seconds([&] { b = proofs_check::certify_optimality(commands::optimality_problem(p), mse, o); });
    auto gap = [](const proofs_check::OptimalityResult& x) {
      return x.lower_bound > 0 ? fmt::format("{:.3g}", x.gap) : std::string("none");
    };
    fmt::print("{:<16} {:>10.3e} {:>10.3e} {:>8} {:>8.2f} | {:>10.3e} {:>8} {:>8.2f}\n", t.label, mse, r.lower_bound,
               gap(r), s, b.lower_bound, gap(b), sb);
  }
  fmt::print("\n");

  fmt::print("certified sup |err| to 1% (cells, seconds) | baseline: monotone cell bound only\n");
  fmt::print("{:<16} {:<12} {:>10} {:>8} {:>8} | {:>10} {:>8} {:>8}\n", "target", "family", "sup", "cells", "s",
             "sup", "cells", "s");
  double sup_total = 0, sup_base = 0;
  const char* names[] = {"two-state", "three-state", "general-4"};
  for (const auto& [t, ms] : models)
    for (std::size_t k = 0; k < ms.size(); ++k) {
      const auto p = analysis::make_fit_problem(t, {analysis::FitFamily::TwoState, 2});
      commands::SupCell c, cb;
      const double s = seconds([&] { c = commands::try_certified_sup(ms[k], p); });
      proofs_check::ChainSupOptions o;
      o.centred = false;
      const double sb = seconds([&] { cb = commands::try_certified_sup(ms[k], p, o); });
      sup_total += s;
      sup_base += sb;
      fmt::print("{:<16} {:<12} {:>10} {:>8} {:>8.3f} | {:>10} {:>8} {:>8.3f}\n", t.label, names[k],
                 c.sup ? fmt::format("{:.3e}", c.sup->upper) : "undefined", c.sup ? c.sup->cells : 0, s,
                 cb.sup ? fmt::format("{:.3e}", cb.sup->upper) : "undefined", cb.sup ? cb.sup->cells : 0, sb);
    }
  fmt::print("total: {:.2f} s (baseline {:.2f} s; the baseline stops at its cell budget where it does not converge)\n",
             sup_total, sup_base);
}
