// Fit benchmarks (issue 4 targets), each printed beside a baseline from the
// same run:
//   single   one three-state fit (sigmoid on [-6, 6], 64 starts) with 2 threads
//            and 1 thread; target < 0.5 s. Also general-4 with the adjoint
//            gradient vs automatic differentiation through GTH on Jets.
//   table    the main fits table of `report fits` (10 targets x 5 families,
//            64 starts per row, incl. widened refits) with 2 threads (two
//            targets at once, one thread per fit); target < 60 s.
//   states   the states-needed table (general 2..6 states, 32 starts, plus the
//            Bernstein estimate); target < 600 s.
//   row      one row: bench_fit row SLUG FAMILY-INDEX (0..4), for profiling
//            (the 16 best start MSEs; all of them with BENCH_FIT_ALL set).
//   seeds    one row with seeds 1..N beside the report's second check: how
//            reliably the fitter reaches the row's best MSE.
// Usage: bench_fit [single|table|states|check|all|row SLUG K|seeds SLUG K [N]]
// (default: single).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <string>

#include "ctmc/analysis/solver_logging.hpp"
#include "ctmc/analysis/fit_tables.hpp"

using namespace ctmc::analysis;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void bench_single() {
  const auto targets = fit_table_targets();
  const auto p = make_fit_problem(targets[0], {FitFamily::ThreeState, 3});
  for (int threads : {2, 1})
    for (auto method : {GradientMethod::Analytic, GradientMethod::Jet}) {
      if (threads == 1 && method == GradientMethod::Jet) continue;
      FitOptions o;
      o.threads = threads;
      o.widen_on_bound = false;
      o.gradient = method;
      const auto t0 = std::chrono::steady_clock::now();
      const auto r = fit(p, o);
      const double s = seconds_since(t0);
      fmt::print("three-state sigmoid [-6,6], 64 starts + {} basin hops, {} thread(s), {:<8}: {:.3f} s "
                 "(target < 0.5 s); MSE {:.6e}, {} within 1%; {} LM iterations, {:.1f} us per iteration-thread\n",
                 r.basin_hops, threads, method == GradientMethod::Analytic ? "analytic" : "Jet", s, r.mse,
                 r.within_1pct, r.iterations, 1e6 * s * threads / r.iterations);
    }
  const auto g = make_fit_problem(targets[2], {FitFamily::General, 4});
  for (auto method : {GradientMethod::Analytic, GradientMethod::Jet}) {
    FitOptions o;
    o.threads = 2;
    o.starts = 8;
    o.widen_on_bound = false;
    o.gradient = method;
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = fit(g, o);
    fmt::print("general-4 softplus [-6,6], 8 starts, 2 threads, {:<8}: {:.3f} s; MSE {:.6e}; {} iterations\n",
               method == GradientMethod::Analytic ? "adjoint" : "Jet GTH", seconds_since(t0), r.mse, r.iterations);
  }
}

// Fit options of the table, with BENCH_FIT_* environment overrides (for
// trying fitter settings on one row).
FitOptions row_options() {
  FitOptions o;
  o.threads = 2;
  if (const char* e = std::getenv("BENCH_FIT_THREADS")) o.threads = std::atoi(e);
  if (const char* e = std::getenv("BENCH_FIT_POLISH")) o.polish = std::atoi(e);
  if (const char* e = std::getenv("BENCH_FIT_EXPLORE")) o.explore_points = std::strtoul(e, nullptr, 10);
  if (const char* e = std::getenv("BENCH_FIT_STARTS")) o.starts = std::atoi(e);
  if (const char* e = std::getenv("BENCH_FIT_SEED")) o.seed = std::strtoull(e, nullptr, 10);
  if (const char* e = std::getenv("BENCH_FIT_ITERATIONS")) o.max_iterations = std::atoi(e);
  if (const char* e = std::getenv("BENCH_FIT_TOL")) o.function_tolerance = std::atof(e);
  if (const char* e = std::getenv("BENCH_FIT_BASIN")) o.basin_rounds = std::atoi(e);
  if (const char* e = std::getenv("BENCH_FIT_BASIN_CANDIDATES")) o.basin_candidates = std::atoi(e);
  if (const char* e = std::getenv("BENCH_FIT_BASIN_SIGMA")) o.basin_sigma = std::atof(e);
  if (const char* e = std::getenv("BENCH_FIT_CHAINS")) o.basin_chains = std::atoi(e);
  if (const char* e = std::getenv("BENCH_FIT_LOCAL")) o.local_rounds = std::atoi(e);
  if (const char* e = std::getenv("BENCH_FIT_LOCAL_SIGMA")) o.local_sigma = std::atof(e);
  if (std::getenv("BENCH_FIT_DOGLEG")) o.method = TrustRegion::Dogleg;
  if (std::getenv("BENCH_FIT_NO_WIDEN")) o.widen_on_bound = false;
  if (std::getenv("BENCH_FIT_NO_KINK")) o.kink_hops = false;
  if (std::getenv("BENCH_FIT_NO_RESCALE")) o.rescale_relays = false;
  if (std::getenv("BENCH_FIT_NO_TIME_SCALE")) o.time_scale_moves = false;
  return o;
}

void bench_table() {
  FitOptions o = row_options();
  const auto t0 = std::chrono::steady_clock::now();
  const auto rows = run_fit_table(fit_table_targets(), fit_table_families(), o);
  const double total = seconds_since(t0);
  for (const auto& r : rows)
    fmt::print("  {:<16} {:<17} {:7.2f} s  {:7d} it  MSE {:.4e}  within 1% {:2d}/64{}\n", r.target.label,
               family_name(r.family), r.seconds, r.result.iterations, r.result.mse, r.result.within_1pct,
               !r.result.widened.empty()        ? "  (+ widened refits)"
               : r.result.mse_at_rounding_floor && !r.result.on_bound.empty() ? "  (on bound, MSE at rounding floor: no refit)"
                                                                                : "");
  // The total is wall time; run_fit_table runs two targets at once, one
  // thread per fit, so each row's time above is one thread's.
  fmt::print("main fits table: {} rows x 64 starts, 2 threads: {:.1f} s (target < 60 s)\n", rows.size(), total);
}

// The report's second-optimizer check (dogleg, 2x starts, other seed) on the
// whole table: prints the rows it beats.
void bench_check() {
  FitOptions o;
  o.threads = 2;
  auto t0 = std::chrono::steady_clock::now();
  const auto rows = run_fit_table(fit_table_targets(), fit_table_families(), o);
  const double main_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  const auto checks = run_fit_table(fit_table_targets(), fit_table_families(), second_check_options(o));
  const double check_s = seconds_since(t0);
  int beaten = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const bool beat = check_beats(checks[i].result.mse, rows[i].result.mse);
    beaten += beat;
    fmt::print("  {:<16} {:<17} MSE {:.4e} ({:2d}/64, {} basin hops)  check {:.4e}{}\n", rows[i].target.label,
               family_name(rows[i].family), rows[i].result.mse, rows[i].result.within_1pct, rows[i].result.basin_hops,
               checks[i].result.mse, beat ? "  BEATEN" : "");
  }
  fmt::print("main table {:.1f} s, second check {:.1f} s: {} of {} rows beaten\n", main_s, check_s, beaten, rows.size());
}

void bench_states() {
  FitOptions o;
  o.threads = 2;
  o.starts = 32;
  const auto t0 = std::chrono::steady_clock::now();
  const auto rows = run_states_needed(fit_table_targets(), 2, 6, {1e-1, 1e-2, 1e-3}, o);
  fmt::print("states-needed table: {} targets x general 2..6 states, 32 starts, 2 threads: {:.1f} s (target < 600 s)\n",
             rows.size(), seconds_since(t0));
}


const FitTarget& table_target(const std::string& slug) {
  static const auto targets = fit_table_targets();
  for (const auto& t : targets)
    if (t.slug == slug) return t;
  fmt::print(stderr, "bench_fit: unknown target '{}'\n", slug);
  std::exit(2);
}

// One row of the main table (for profiling): bench_fit row SLUG FAMILY-INDEX(0-4).
void bench_row(const std::string& slug, int family) {
  const auto& t = table_target(slug);
  const FitOptions o = row_options();
  const auto f = fit_table_families().at(static_cast<std::size_t>(family));
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = fit(make_fit_problem(t, f), o);
  fmt::print("{} {}: {:.2f} s, {} it, MSE {:.6e}, within 1% {}, widened {}, best start {}, "
             "kink hops {}, basin hops {}\n  theta", t.label, family_name(f), seconds_since(t0), r.iterations, r.mse,
             r.within_1pct, r.widened.size(), r.best_start, r.kink_hops, r.basin_hops);
  for (double x : r.theta) fmt::print(" {:.9g}", x);
  fmt::print("\n  sorted start MSEs:");
  auto sorted = r.start_mse;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t shown = std::getenv("BENCH_FIT_ALL") ? sorted.size() : std::min<std::size_t>(sorted.size(), 16);
  for (std::size_t k = 0; k < shown; ++k) fmt::print(" {:.4e}", sorted[k]);
  fmt::print("\n");
}

// Reliability of one row: the whole fit with seeds 1..N (other options as in
// the table, BENCH_FIT_* overrides apply), against the report's second check
// at the table's seed. bench_fit seeds SLUG FAMILY-INDEX [N] (default 5).
// A general-n row is fitted as the table fits it: after the same target's
// rows before it (run_fit_table), warm-started from the (n-1)-state row, so
// at seed 1 it is the table's row and the seconds include those rows.
// BENCH_FIT_POINTS sets the grid (default 401: the table's; any other grid
// fits the row alone, without that warm start).
void bench_seeds(const std::string& slug, int family, int seeds) {
  const auto& t = table_target(slug);
  const auto f = fit_table_families().at(static_cast<std::size_t>(family));
  const std::size_t points = std::getenv("BENCH_FIT_POINTS") ? std::strtoul(std::getenv("BENCH_FIT_POINTS"), nullptr, 10) : 401;
  const auto problem = make_fit_problem(t, f, points);
  auto fit_row = [&](const FitOptions& o) {
    if (f.family != FitFamily::General || points != 401) return fit(problem, o);
    const auto& families = fit_table_families();
    const std::vector<FamilySpec> upto(families.begin(), families.begin() + family + 1);
    return run_fit_table({t}, upto, o).back().result;
  };
  // BENCH_FIT_NO_CHECK: skip the check (its MSE counts as +inf).
  const FitOptions check = second_check_options(FitOptions{});
  const double check_mse =
      std::getenv("BENCH_FIT_NO_CHECK") ? std::numeric_limits<double>::infinity() : fit_row(check).mse;
  fmt::print("{} {}: second check (dogleg, {} starts, seed {}) MSE {:.6e}\n", t.label, family_name(f), check.starts,
             check.seed, check_mse);
  std::vector<double> mse;
  double total = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    FitOptions o = row_options();
    o.seed = static_cast<std::uint64_t>(seed);
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = fit_row(o);
    const double sec = seconds_since(t0);
    total += sec;
    mse.push_back(r.mse);
    fmt::print("  seed {:3d}: MSE {:.6e}  {:6.2f} s{}\n", seed, r.mse, sec,
               check_beats(check_mse, r.mse) ? "  (beaten by the check)" : "");
  }
  const double best = *std::min_element(mse.begin(), mse.end());
  const auto at_best = std::count_if(mse.begin(), mse.end(), [&](double m) { return !check_beats(best, m); });
  const auto beaten = std::count_if(mse.begin(), mse.end(), [&](double m) { return check_beats(check_mse, m); });
  fmt::print("best {:.6e}; {} of {} seeds at the best (within {:g}); {} of {} beaten by the check; {:.1f} s per seed\n",
             best, at_best, seeds, kBeatTolerance, beaten, seeds, total / seeds);
}

}  // namespace

int main(int argc, char** argv) {
  ctmc::analysis::quiet_solver_logging();  // the fits' solver: FATAL messages only
  const std::string what = argc > 1 ? argv[1] : "single";
  if (what == "row" && argc > 3) bench_row(argv[2], std::stoi(argv[3]));
  if (what == "seeds" && argc > 3) bench_seeds(argv[2], std::stoi(argv[3]), argc > 4 ? std::stoi(argv[4]) : 5);
  if (what == "single" || what == "all") bench_single();
  if (what == "table" || what == "all") bench_table();
  if (what == "states" || what == "all") bench_states();
  if (what == "check") bench_check();
  return 0;
}
