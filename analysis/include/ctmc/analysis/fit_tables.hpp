// The fit tables of `ctmc-snn report fits`: the targets and domains,
// the families compared, and the Bernstein-chain state count used as the
// reference column of the "states needed" table.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ctmc/activations/activation.hpp"
#include "ctmc/analysis/fit.hpp"

namespace ctmc::analysis {

// A row group of the main table: alpha * phi on [lo, hi] (401-point grid).
struct FitTarget {
  std::string label;       // "sigmoid", "softplus x 1/14"
  std::string slug;        // file-name form: "sigmoid", "softplus_x_1_14"
  std::string activation;  // parse_activation name
  std::string alpha = "1", lo, hi;  // exact texts
  // The paper's published MSE (Figure 2 caption, Appendix B figure) and the
  // family it belongs to ("" = not stated: the "low-state variant").
  std::optional<double> paper_mse;
  std::string paper_family;
};

// sigmoid [-6,6], relu [-1,5], softplus [-6,6], cliprelu_K on [-2,K+2] for
// K in {1,2,4,6,10}, sigmoid_shift_2 on [-4,8], and (1/14) softplus on
// [-26,14] (the fully connected three-state comparison of Appendix B; alpha =
// 1/14 makes the target's maximum softplus(14)/14 = 1.00000006).
std::vector<FitTarget> fit_table_targets();
// two-state, three-state, full-three-state, general-4, general-5.
std::vector<FamilySpec> fit_table_families();
// The fit problem of a target and family (grid of `points` points, default bounds).
FitProblem make_fit_problem(const FitTarget& t, const FamilySpec& f, std::size_t points = 401);

// Parameters of the general n-state family -> general (n+1)-state parameters
// with the same flux: the new state n has rates into it max(0, -1 + 0 H) = 0
// and rates out of it 1, so it is transient. (full-three-state parameters are
// general-3 parameters: same order.)
std::vector<double> embed_general(const std::vector<double>& theta, std::size_t n);

// A general-n row after a general-(n-1) row (tables, states-needed table)
// also gets the splits of that row's optimum as starts 1, 2, ... (split_state,
// FitOptions::seeded_starts): state k keeps a fixed share of the rates into
// it (kSplitShare in analysis/src/fit/fit_internal.hpp).

// Starts of a general-n fit of `problem` from a general-m chain `smaller`
// (m < n; general-m parameter order): start 0 is it embedded up to n states
// (embed_general, repeatedly: the same flux), and, if `split`, the splits of
// its (n-1)-state form are starts 1, 2, ... How the tables grow a row, and
// what `fit --warm-start` does with a smaller chain. InputError for m >= n
// or a parameter count other than 2 m (m - 1).
void start_from_smaller(FitOptions& o, const std::vector<double>& smaller, std::size_t m, std::size_t n,
                        const FitProblem& problem, bool split);

// One fit per (target, family), in target-major order, each with `options`.
// A general-n row that follows a general-(n-1) (or full-three-state, n = 4)
// row of the same target gets that row's optimum, embedded, as start 0.
// With options.threads != 1 (0: all cores) the targets run concurrently,
// each fit on one thread; the rows are the same for any thread count.
struct FitRow {
  FitTarget target;
  FamilySpec family;
  FitResult result;
  double seconds = 0;  // wall time of this fit (incl. widened refits; one thread
                       // where targets run concurrently)
};
std::vector<FitRow> run_fit_table(const std::vector<FitTarget>& targets, const std::vector<FamilySpec>& families,
                                  const FitOptions& options);

// The second, independent optimizer of the report's check: Powell's dogleg
// (non-monotonic steps) instead of Levenberg-Marquardt, 2x the starts drawn
// from another seed (main seed + 1000003), plain multistart (polish and kink
// hops as in the main fit, no basin hopping or time-scale moves, no widened refits).
FitOptions second_check_options(const FitOptions& main);
// A check result `check_mse` beats a row `mse` when it is lower by more than
// kBeatTolerance relative (below that: convergence noise of the same minimum)
// and kBeatFloor absolute (an MSE below ~1e-26, max error ~1e-13, is an exact
// fit up to double rounding of the parameters; differences there are noise).
inline constexpr double kBeatTolerance = 1e-3;
inline constexpr double kBeatFloor = 1e-26;
inline bool check_beats(double check_mse, double mse) {
  return check_mse < mse * (1 - kBeatTolerance) && mse - check_mse > kBeatFloor;
}

// "States needed": best general-n fits for n = n_min..n_max, judged by max
// |error| against each tolerance (fit in least squares as everywhere else).
// Each general-n fit starts from the target's (n-1)-state optimum and its
// splits; with several threads the targets run at once, as in run_fit_table
// (the rows do not depend on the thread count).
struct StatesNeededRow {
  FitTarget target;
  std::vector<std::size_t> states;        // n_min..n_max
  std::vector<double> mse, max_abs_error; // per n
  std::vector<solvers::Model> models;     // per n: the fitted chains
  std::vector<double> tolerances;
  std::vector<std::optional<std::size_t>> min_states;       // per tolerance; nullopt: > n_max
  std::vector<std::optional<std::size_t>> bernstein_degree; // per tolerance: N (states 2(N+1))
};
std::vector<StatesNeededRow> run_states_needed(const std::vector<FitTarget>& targets, std::size_t n_min,
                                               std::size_t n_max, const std::vector<double>& tolerances,
                                               const FitOptions& options);

// --- Bernstein chain (DESIGN.md section 6) as a state-count reference -------
// With psi(u) = alpha phi(lo + u (hi - lo)), rho = 2 max psi,
// h = rho psi / (rho - psi) and kappa_i = h(i/N), the chain's flux is
// F_N(u) = rho M_N(u) / (rho + M_N(u)), M_N = sum_i kappa_i C(N,i) u^i (1-u)^(N-i).
// This is a lightweight double-precision estimate (not a certified bound):
// M_N is summed around the binomial mode until the terms fall below 1e-18 of
// the largest, and the sup is taken over a uniform grid of `grid` points in u
// plus the activation's kinks (relu: H = 0; cliprelu_K: H = 0, K).
struct BernsteinTarget {
  activations::Activation activation;
  double alpha = 1, lo = 0, hi = 1;
};
double bernstein_sup_error(const BernsteinTarget& t, std::size_t degree, std::size_t grid = 4001);
// Smallest N (by doubling, then bisection, assuming the error decreases with
// N) with sup error <= tol; nullopt when N = max_degree does not reach it.
std::optional<std::size_t> bernstein_min_degree(const BernsteinTarget& t, double tol,
                                                std::size_t max_degree = std::size_t(1) << 23,
                                                std::size_t grid = 4001);

}  // namespace ctmc::analysis
