// Benchmark: the certificates of `report fits`, per row, one core.
//   - certified global optimum of the two-state fit (interval branch and
//     bound to 0.1%), beside the baseline: the same search with the natural
//     (per-point range) bound alone, no mean-value bound or monotonicity test;
//   - certified lower bound on the three-state optimum to 1% within the box
//     budget of `report fits`, searched on the faces of the box (which hold
//     every three-state curve, fit_optimality.hpp) with the Taylor-model
//     bound, the reciprocal relaxation, the mirror halves of the b faces,
//     cuts towards 0, the straddle split, the monotonicity discard and the
//     corner split score, beside the baseline: the same search and budget
//     with the reciprocal relaxation's bound 0 on every box where one
//     point's term cannot be enclosed (a rate whose range is 0 up to
//     rounding, the previous method; OptimalityOptions::reciprocal_edge_terms)
//     (`bench_certificates three-state` runs this table alone);
//   - certified sup |nu - alpha phi| over the domain to 1% of the two-state,
//     three-state and general-4 fits, beside the baseline: the monotone
//     (tree-theorem) cell bound alone, no centred form.
// The fits themselves (16 starts, seed 1) are not timed.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "ctmc/analysis/solver_logging.hpp"
#include "ctmc/analysis/fit_tables.hpp"
#include "ctmc/proofs_check/chain_sup.hpp"
#include "ctmc/proofs_check/fit_optimality.hpp"
#include "ctmc/commands/fit_certificates.hpp"
#include "thread_clock.hpp"

using namespace ctmc;

namespace {
template <class F>
double seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

using Models = std::vector<std::pair<analysis::FitTarget, std::vector<solvers::Model>>>;

// The three-state certificate of `report fits` (commands::certify_fit_optimum:
// faces of the box, the Taylor-model bound, the reciprocal relaxation, the
// mirror halves, cuts towards 0, the straddle split, the monotonicity
// discard, the corner split score, to 1%, kThreeStateBoxes) beside the
// previous method, the same search where a point at a rate's edge zeroes
// the reciprocal relaxation's bound (reciprocal_edge_terms off), at the
// same box budget, per row; `disc` counts the boxes the monotonicity
// discard removed.
// Targets: each row within 10 minutes on one core (seconds: CPU time of the
// thread), the gap within 1%.
void three_state_section(const Models& models) {
  fmt::print("three-state optimum to {:g}% within {} boxes (faces of the box), one thread | "
             "baseline: the previous method (a point at a rate's edge zeroes the reciprocal bound), same budget\n",
             100 * commands::kThreeStateGap, commands::kThreeStateBoxes);
  fmt::print("{:<16} {:>10} {:>10} {:>9} {:>8} {:>7} {:>8} | {:>10} {:>9} {:>8} {:>8}\n", "target", "MSE", "bound",
             "gap", "boxes", "disc", "s", "bound", "gap", "boxes", "s");
  auto gap = [](const proofs_check::OptimalityResult& x) {
    if (x.certified) return std::string("certified");
    return x.lower_bound > 0 ? fmt::format("{:.3g}", x.gap) : std::string("none");
  };
  double total = 0, total_base = 0, slowest = 0;
  int certified = 0;
  for (const auto& [t, ms] : models) {
    const auto p = analysis::make_fit_problem(t, {analysis::FitFamily::ThreeState, 3});
    const double mse = analysis::evaluate_exactly(ms[1], p, 128).mse;
    double t0 = thread_cpu_seconds();
    const auto r = commands::certify_fit_optimum(p, mse, 128);
    const double s = thread_cpu_seconds() - t0;
    proofs_check::OptimalityOptions o;
    o.rel_gap = commands::kThreeStateGap;
    o.max_boxes = commands::kThreeStateBoxes;
    o.reciprocal_edge_terms = false;
    t0 = thread_cpu_seconds();
    const auto b = proofs_check::certify_optimality(commands::optimality_problem(p), mse, o);
    const double sb = thread_cpu_seconds() - t0;
    total += s;
    total_base += sb;
    slowest = std::max(slowest, s);
    certified += r.certified;
    fmt::print("{:<16} {:>10.3e} {:>10.3e} {:>9} {:>8} {:>7} {:>8.2f} | {:>10.3e} {:>9} {:>8} {:>8.2f}{}\n", t.label,
               mse, r.lower_bound, gap(r), r.boxes, r.discarded, s, b.lower_bound, gap(b), b.boxes, sb,
               r.best_centre.empty() ? "" : fmt::format("  (search found MSE {:.4e})", r.incumbent));
    std::fflush(stdout);
  }
  fmt::print("total: {:.1f} s (baseline {:.1f} s) of CPU time; slowest row {:.1f} s (target 600 s); {} of {} rows "
             "within {:g}%\n\n",
             total, total_base, slowest, certified, models.size(), 100 * commands::kThreeStateGap);
}

}  // namespace

int main(int argc, char** argv) {
  ctmc::analysis::quiet_solver_logging();  // the fits' solver: FATAL messages only
  // `three-state [ROW...]`: that table alone, for the rows named (all if
  // none), so that rows can run as separate processes.
  const bool only_three = argc > 1 && std::string(argv[1]) == "three-state";
  if (argc > 1 && !only_three) {
    fmt::print(stderr, "usage: bench_certificates [three-state [ROW...]]\n");
    return 2;
  }
  const std::vector<std::string> rows(argv + std::min(argc, 2), argv + argc);
  analysis::FitOptions fo;
  fo.starts = 16;
  fo.threads = 1;
  fo.widen_on_bound = false;
  constexpr std::int64_t kBaselineBoxes = 50000;
  if (!only_three) {
    fmt::print("two-state optimum to {:g}% (boxes, seconds) | baseline: natural bound only (budget {} boxes)\n",
               100 * commands::kOptimalityGap, kBaselineBoxes);
    fmt::print("{:<16} {:>10} {:>9} {:>8} | {:>10} {:>9} {:>8}\n", "target", "MSE", "boxes", "s", "gap", "boxes",
               "s");
  }
  double total = 0, total_base = 0;
  Models models;
  for (const auto& t : analysis::fit_table_targets()) {
    if (!rows.empty() && std::find(rows.begin(), rows.end(), t.label) == rows.end()) continue;
    std::vector<solvers::Model> ms;
    for (const analysis::FamilySpec f : {analysis::FamilySpec{analysis::FitFamily::TwoState, 2},
                                         analysis::FamilySpec{analysis::FitFamily::ThreeState, 3},
                                         analysis::FamilySpec{analysis::FitFamily::General, 4}})
      ms.push_back(analysis::fit(analysis::make_fit_problem(t, f), fo).model);
    models.push_back({t, ms});
    if (only_three) continue;
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
  }
  if (!only_three)
    fmt::print("total: {:.2f} s (baseline {:.2f} s, stopped by its budget where not certified)\n\n", total,
               total_base);

  three_state_section(models);
  if (only_three) return 0;

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
