// Internal header of the fitter (analysis/src/fit/): the search's tuning
// constants, the chain transformations its moves use, and the state that the
// driver (fit.cpp) hands from one search move to the next. Not installed;
// the analysis library and its tests include it as "fit/fit_internal.hpp".
//
// The search (paper eq. 3 minimised over theta within FitBounds) is a list of
// moves run in a fixed order (fit.cpp, search_moves()): multistart and
// polish on the exploration problem, monotonic basin hopping (Leary 2000)
// there, the transfer of its best points to the full problem, then the
// full-problem moves (kink hops, repolishing, state exchanges, a local phase
// of small steps, time-scale moves, relay rescaling). Each move lives in
// moves/<name>.cpp. Every random draw comes from start_seed(seed, stream)
// with a stream from the move's own block (Search::streams), and every
// reduction is by (MSE, index), so a fit does not depend on the thread count.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ctmc/analysis/fit.hpp"
#include "ctmc/core/seeding.hpp"

namespace ctmc::analysis {

// ---- Tuning constants, by the move that uses them -------------------------
// Chosen on the fit table's rows over several seeds (bench_fit prints the
// table's MSEs and time); the measurements are in the commit history.

// basin_hop: rounds per options.basin_rounds for the closed-form families,
// whose solves are cheap enough for longer chains than a general family's.
inline constexpr int kClosedFormBasinFactor = 8;
// basin_hop: rounds per options.basin_rounds for the general family when it
// explores on a subsample (about a quarter of the full grid's cost a solve),
// where its chains need the length to settle.
inline constexpr int kGeneralBasinFactor = 8;

// transfer: how many of the best distinct minima of the exploration problem
// are solved on the full problem (two minima are distinct if their MSEs
// differ by more than 1e-7 relative): on a subsample the order of near-equal
// minima can differ from the full problem's.
inline constexpr std::size_t kExplorationPool = 8;

// relay_rescale: a fit with a rate above kFastRate x max |alpha phi| on the
// domain is offered the bridges slow_fast_rates(..., target = c x max |alpha
// phi|) for c in kSlowedRateTargets, and its fast rates sped up by
// fast_rate_headroom. The bridge out of a relay minimum works only for some
// c, with candidates between them that polish to far worse fits: hence a
// list of targets rather than one.
inline constexpr double kFastRate = 100;
inline constexpr double kSlowedRateTargets[] = {2.0, 2.5, 3.2, 4.0, 5.0, 6.3};

// time_scale: the factors a state's exit rates are scaled by, at most this
// many rounds (each accepting the best improvement of at least
// kTimeScaleMinGain relative: smaller gains are kink-cell steps, which kink
// hops and the local phase make), and for the general family how many of the
// candidates (ranked on the exploration problem) are polished on the full
// problem (polishing all of them costs several times the row).
inline constexpr double kTimeScaleFactors[] = {0.1, 0.3, 3.0, 10.0};
inline constexpr int kTimeScaleRounds = 4;
inline constexpr double kTimeScaleMinGain = 1e-4;
inline constexpr int kTimeScalePolished = 2;

// ---- Chain transformations (chain_transforms.cpp, moves/relay_rescale.cpp) --

// theta of a chain of every transition between n states (full-three-state:
// n = 3, B, G, R = 0, 1, 2; general-n), parameters (offset, slope) per
// transition i -> j in the family's order (by i, then j != i), with states 0
// and k exchanged: transition i -> j becomes sigma(i) -> sigma(j). Not a
// symmetry (the spikes stay on the transitions into state 0), but it maps a
// local minimum in which state k paces the spikes onto one in which state 0
// does, which perturbations rarely reach. The relabellings that fix state 0 are
// symmetries, so these n - 1 are all the others up to symmetry. The
// state_exchange move tries them (full-three-state). InputError for k = 0,
// k >= n or a parameter count other than 2 n (n - 1).
std::vector<double> exchange_states(const std::vector<double>& theta, std::size_t n, std::size_t k);

// The chain theta (every transition between n states, rectified affine, in
// the family's parameter order: full-three-state with n = 3, or general-n)
// with every exit rate of state k multiplied by `factor` (offset and slope,
// so its kinks stay). Row k of the generator times f: pi' (i != k) = pi_i / Z
// and pi'_k = pi_k / (f Z) with Z = 1 + pi_k (1/f - 1) solve pi' Q' = 0, so
// only the time spent in k changes (its jump chain is the same), and the
// spike flux becomes F / Z. A move between minima that differ in one state's
// speed (moves/time_scale.cpp). InputError for k >= n, a factor not > 0 and finite, or a
// parameter count other than 2 n (n - 1).
std::vector<double> scale_state_exits(const std::vector<double>& theta, std::size_t n, std::size_t k, double factor);

// The chain theta on n states (parameter order as in scale_state_exits) as a
// chain on n + 1 states in which state k (1 <= k < n) is split in two: the
// new state n leaves to every other state as k does, every rate into k is
// shared, `share` of it into k and 1 - share into n, and k and n exchange at
// the constant rate `internal`. The two states lump exactly (same exit rates
// to every other state), so pi, with pi_k split, and the spike flux into
// state 0 are those of theta. The fit tables seed general-5 fits with these
// (fit_tables.hpp). InputError for k = 0, k >= n, share not in (0, 1),
// internal not > 0 and finite, or a parameter count other than 2 n (n - 1).
std::vector<double> split_state(const std::vector<double>& theta, std::size_t n, std::size_t k, double share,
                                double internal);

// start_from_smaller (fit_tables.hpp): the share of the rates into state k
// that stays with k when the tables split an (n-1)-state optimum into
// general-n starts.
inline constexpr double kSplitShare = 0.25;

// theta with every rectified-affine rate (an Offset parameter and the Slope
// after it in `params`) whose larger value at the domain ends lo, hi exceeds
// `fast` scaled (offset and slope) by one common factor, chosen so that the
// largest of them becomes `target`; its kinks stay where they are. The other
// parameters are unchanged, and theta is returned unchanged if no rate
// exceeds `fast`. A move out of a "fast relay" minimum
// (moves/relay_rescale.cpp, kFastRate). InputError for a size mismatch or
// target, fast not > 0 and finite, or hi < lo.
std::vector<double> slow_fast_rates(const std::vector<ParamInfo>& params, const std::vector<double>& theta, double lo,
                                    double hi, double fast, double target);

// The largest factor f >= 1 by which the rates that slow_fast_rates(params,
// theta, lo, hi, fast, .) scales can be sped up (offsets and slopes x f)
// while staying within `bounds`; 1 if none exceeds `fast` or one is already
// on its bound.
double fast_rate_headroom(const std::vector<ParamInfo>& params, const std::vector<double>& theta, double lo, double hi,
                          double fast, const FitBounds& bounds);

// ---- Data and evaluation helpers (data.cpp, solve.cpp) ----------------------

// The exploration subsample of a fit: `data` itself if it has at most
// max_points points (or max_points is 0); otherwise every k-th point in
// increasing H, k = ceil((n - 1) / (max_points - 1)), always with the
// largest, each carrying the weights of the points nearest to it in that
// order (a tie is shared): on a uniform grid of 401 points and max_points
// 101, the 101-point grid with weights 2.5, 4, ..., 4, 2.5 (the ends' and
// midpoints' shares). Samples keep their empirical distribution (quantiles).
FitData exploration_data(const FitData& data, std::size_t max_points);

// theta with the offset of every rectified-affine rate that is positive at a
// data point only by rounding (its double value p + s H_m, computed as the
// objective computes it, positive but below 1e-12 x (|p| + |s H_m|), while
// p + s H_m is <= 0 at the exact H_m) raised by a few ulps, up to the upper
// offset bound, until it is positive at the exact H_m too. The objective
// evaluates rates at the double H_m, the written model at the exact one; a
// kink on a data point to the last bit can leave the exact chain without a
// rate the optimizer saw, and reducible there (the exact re-evaluation then
// fails). Other parameters unchanged.
std::vector<double> nudge_kinks_off_points(const std::vector<ParamInfo>& params, std::vector<double> theta,
                                           const FitData& data, const FitBounds& bounds);

// Threads a fit with these options uses: options.threads, or for 0 the
// OpenMP default (1 without OpenMP).
int fit_threads(const FitOptions& options);
// Double MSE of theta on the problem's data (weighted); +inf when the flux is
// not finite at some point.
double mse_double(const FitProblem& problem, const std::vector<double>& theta);
// The seed of random stream `index` of a fit (starts, then basin-hopping and
// local-phase candidates): the toolkit's multistart stream (seeding.hpp).
inline std::uint64_t start_seed(std::uint64_t seed, std::uint64_t index) {
  return ctmc::multistart_seed(seed, index);
}

namespace fit_search {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// Targets alpha phi(H_m) and residual scales sqrt(w_m / sum w) in double;
// ymax = max |alpha phi| (1 if the target is 0), the scale of start rates
// and basin-hopping steps.
struct Targets {
  std::vector<double> y, scale;
  double ymax = 1;
};
Targets make_targets(const FitProblem& p);

// One problem the fit works on (the full one, or its exploration subsample)
// with its targets, sorted distinct points (kink hops) and rounding floor:
// an MSE below kRoundingFloor * mean (alpha phi)^2 is an exact fit up to
// double rounding of the parameters (max error ~1e-10 of the target's size);
// nothing can lower it by a meaningful amount. Not copyable: the cost
// functions point at problem and targets.
struct Stage {
  explicit Stage(const FitProblem& p);
  Stage(const Stage&) = delete;
  Stage& operator=(const Stage&) = delete;
  const FitProblem* problem;
  Targets own;
  const Targets* targets;
  std::vector<double> points;
  double floor_mse = 0;
};

// A solved point: its parameters, its weighted MSE on the stage it was
// solved on (+inf: the solve failed) and the solver's iterations.
struct StartOutcome {
  std::vector<double> theta;
  double mse = kInf;
  long iterations = 0;
};

// Weighted MSE of theta on p with targets t (the Ceres cost times 2); +inf
// where the flux is not finite or GTH finds the chain reducible.
double weighted_mse(const FitProblem& p, const Targets& t, const std::vector<double>& theta);
// One bounded Ceres solve from theta (solve.cpp).
StartOutcome solve_start(const FitProblem& p, const Targets& t, const std::vector<ParamInfo>& params,
                         std::vector<double> theta, const FitOptions& o);
void clamp_to_bounds(const FitBounds& b, const std::vector<ParamInfo>& params, std::vector<double>& theta);
// Indices sorted by (MSE, index).
std::vector<int> order_by_mse(const std::vector<StartOutcome>& outcomes);
// Index of the outcome with the smallest finite MSE (the first on ties), or
// -1 if none is finite.
int best_finite(const std::vector<StartOutcome>& outcomes);
// A random starting point (moves/multistart.cpp).
std::vector<double> draw_start(const FitProblem& p, const Targets& t, const std::vector<ParamInfo>& params,
                               std::mt19937_64& rng);
// The larger value at the domain ends of the rate whose offset is theta[i]
// (affine, so its largest on [lo, hi]), and the largest of them over the
// rectified rates (0 if none).
double peak_rate(const std::vector<double>& theta, std::size_t i, double lo, double hi);
double fastest_rate(const std::vector<ParamInfo>& params, const std::vector<double>& theta, double lo, double hi);
// "name=value (lower|upper bound)" of every parameter on its bound.
std::vector<std::string> parameters_on_bound(const std::vector<ParamInfo>& params, const std::vector<double>& theta,
                                             const FitBounds& b);

// What every move reads and none changes: the problem and its options, the
// two stages, and what follows from them. Set once by the driver.
struct SearchSetup {
  SearchSetup(const FitProblem& problem, const FitOptions& options, const Stage& full, const Stage& ex,
              std::vector<double> warm, int n);

  const FitProblem& problem;
  const FitOptions& options;
  // The polish's options: 10x the iterations, polish_tolerance.
  const FitOptions polish_options;
  const std::vector<ParamInfo> params;
  const Stage& full;
  const Stage& ex;              // the exploration stage (full itself without a subsample)
  const bool coarse;            // ex is a proper subsample of the full problem
  const double floor_mse;       // the full problem's rounding floor
  const int threads;
  const double ymax, lo, hi, width;  // max |alpha phi|, the domain as doubles
  const bool hop_kinks;         // kink hops run (options.kink_hops, closed forms, polish > 0)
  const std::size_t relabel_states;  // n of exchange_states, 0: no state exchanges
  const std::vector<double> warm;    // the warm start clamped into the bounds (empty: none)
  const int n;                  // starts run
};

// What the moves write for the later ones: the search's progress. The moves
// run in the driver's order; each reads what the earlier ones left
// (multistart: outcomes; polish: best; basin_hop: chain ends; transfer:
// result.theta and result.mse_double on the full problem) and leaves its own.
struct SearchProgress {
  long total_iterations = 0;
  // The best distinct minima seen on the exploration problem (kExplorationPool).
  std::vector<StartOutcome> pool;
  std::vector<StartOutcome> outcomes;  // per start, on ex
  int best = -1;                       // best start (after polish)
  int basin_rounds = 0, chains = 0;
  bool hopping = false;                // basin hopping ran (and so may the local phase)
  std::vector<StartOutcome> ends;      // chain ends (or the best start), on ex
  std::vector<int> end_hops;
  double explore_best = kInf;          // best MSE of starts and chain ends on ex
  // The blocks of random streams, reserved by the moves that draw, in the
  // driver's order (start_seed(seed, index) of each index).
  StreamBlocks streams;
  // Set by transfer when no point is feasible on the full problem: the driver
  // then fits again exploring on the full problem.
  bool restart_on_full = false;
  // theta, mse_double and the move counters are the search's current fit.
  FitResult result;
};

// Everything the moves share: the setup they read and the progress they write.
struct Search : SearchSetup, SearchProgress {
  using SearchSetup::SearchSetup;

  // Solves every theta on stage st (in parallel; results in order); adds
  // the iterations, and remembers the minima found on a subsample in pool.
  std::vector<StartOutcome> solve_all(const Stage& st, const std::vector<std::vector<double>>& thetas,
                                      const FitOptions& so);
  // Index of the best of `solved` that lowers `current` by more than rounding
  // noise of the same minimum, or -1.
  int best_improvement(const std::vector<StartOutcome>& solved, double current) const;

 private:
  void remember(const std::vector<StartOutcome>& found);
};

// Shared by the moves (search.cpp, moves/*.cpp).
// moves/basin_hop.cpp: candidate c of a perturbation of theta0.
std::vector<double> perturb(const Search& s, const std::vector<double>& theta0, int c, std::mt19937_64& rng,
                            double sigma, bool redraws);
// moves/basin_hop.cpp: solve the candidates on st; move to the best if it
// improves, polished if `polish`, its kinks hopped if `kinks`.
bool hop_to_best(Search& s, const Stage& st, const std::vector<std::vector<double>>& cands,
                 std::vector<double>& theta, double& mse, bool polish, bool kinks);
// moves/kink_hop.cpp: kink hops of (theta, mse) on the full problem.
void kink_hop(Search& s, std::vector<double>& theta, double& mse);
// moves/state_exchange.cpp: n of exchange_states for the family, 0 for none;
// and one round of exchanges of (theta, mse) on st (basin_hop, local_phase).
std::size_t relabelable_states(const FamilySpec& f);
bool try_exchanges(Search& s, const Stage& st, std::vector<double>& theta, double& mse, bool kinks);

// A search move: its name and one-line description (search_moves()), the
// families the driver runs it for, and the move itself, which checks its
// options and the fit's state (most do nothing at the rounding floor or with
// polish = 0). A new move is a file moves/<name>.cpp defining <name>_move(),
// declared below and placed in all_moves() (fit.cpp), with its test in
// tests/analysis/fit_moves_test.cpp.
struct SearchMove {
  const char* name;
  std::string (*description)(const FamilySpec& family);
  bool (*runs_for)(const FamilySpec& family);
  void (*run)(Search& s);
};

// The moves, one per file under moves/, in the driver's order.
SearchMove multistart_move();
SearchMove polish_move();
SearchMove basin_hop_move();
SearchMove transfer_move();
SearchMove kink_hop_move();
SearchMove general_repolish_move();
SearchMove local_phase_move();
SearchMove time_scale_move();
SearchMove relay_rescale_move();

// Every move in the driver's order (fit.cpp).
std::vector<SearchMove> all_moves();

}  // namespace fit_search
}  // namespace ctmc::analysis
