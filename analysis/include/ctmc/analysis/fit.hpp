// Constrained least-squares fits of CTMC neuron families to a target
// activation (paper section 3.2, eq. 3; DESIGN.md sections 4, 5, 8).
//
//   min_theta  sum_m w_m [F_theta(H_m) - alpha phi(H_m)]^2 / sum_m w_m
//
// over a uniform grid (default 401 points) or a sample of preactivations read
// from a file, w_m = 1 unless a weights file is given. alpha (alpha_fit) is
// fixed, never a free parameter: alpha -> 0 would drive the MSE to 0 for any
// family. It is stored in the model's meta (DESIGN.md section 7).
//
// Solver: Ceres Levenberg-Marquardt with bounds. Jacobian: by default the
// analytic one of family_flux_gradient (fit_flux.hpp: hand-derived
// derivatives of the closed forms of the two-, three- and full-three-state
// families, the adjoint of the stationary equations with pi from GTH for the
// general one); GradientMethod::Jet differentiates family_flux automatically
// (ceres::Jet through the closed forms, or through GTH), the reference the
// analytic Jacobian is tested against. Same minimizer, about 3.5x faster.
//
// Bounds are part of a fit's definition (the infimum MSE of ReLU is 0, reached
// only as rates go to infinity, so a ReLU fit is decided by its bounds). With
// R = rate_bound * widen and floor = min_const_rate / widen:
//   offsets p in [-R, R], slopes s in [-R, R], constant rates in [floor, R].
// Constant rates stay > 0 through their lower bound. When the best fit has a
// parameter on a bound, fit() refits with the bounds widened 10x and 100x and
// records those MSEs, so one can see how much the bound costs -- unless the
// MSE is already at the rounding floor (< 1e-20 mean((alpha phi)^2)), where
// widening cannot lower it; the result states that instead. Those refits
// start from the bounded optimum (so they can only improve on it) plus
// max(8, starts/8) random starts.
//
// Multistart: `starts` seeded starting points (stream of start k seeded from
// splitmix64(seed, k)), solved in parallel with OpenMP; the best is chosen by
// (MSE, start index), so the result is identical for any thread count. The
// count of starts within 1% of the best MSE measures how reliably the optimum
// is found. Then, from the best start: polishing, kink hopping (closed-form
// families), monotonic basin hopping, (closed-form families) a local phase
// of small moves, and (full-three-state and general) time-scale moves
// (fit.cpp), all seeded or deterministic and reduced in a fixed order, so
// still thread-independent. A warm start that is already at the rounding
// floor is the answer: the random starts are skipped.
//
// Exactness: the best parameters are converted to exact rationals (every
// double is a dyadic rational), so the written model is exactly the fitted
// one; MSE and max |error| are then re-evaluated in MPFR (default 128 bits) on
// that exact model with solvers::solve_stationary (which also handles inputs
// where a rectified rate is 0 and the chain is reducible), so the reported
// figures do not depend on double rounding.
//
// Errors: InputError (one line naming the option or file) for an empty
// domain, too few samples, non-finite samples or weights, bad alpha (also
// one that puts max |alpha phi| on the data outside [1e-100, 1e100], where
// the MSE's scale leaves the normal doubles).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ctmc/analysis/activation.hpp"
#include "ctmc/analysis/fit_flux.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/scalar.hpp"

namespace ctmc::analysis {

// The points H_m of eq. 3 with their weights, exactly and in double.
struct FitData {
  std::vector<solvers::Rational> h_exact;
  std::vector<double> h;
  std::vector<solvers::Rational> w_exact;  // empty: unweighted
  std::vector<double> w;                   // empty: unweighted
  solvers::Rational lo{0}, hi{0};          // domain (grid ends, or sample min/max)
  std::string description;                 // "401-point grid on [-6, 6]" / "samples: FILE (n values)"
  // Samples only: how many values the file had, and which of them (0-based,
  // in file order) were kept inside --domain, so that a weights file with one
  // weight per sample is filtered with them.
  std::size_t source_values = 0;
  std::vector<std::size_t> kept;
};

// Uniform grid H_m = lo + (hi - lo) m / (points - 1), m = 0..points-1, exact.
// Throws InputError for hi <= lo ("--domain: empty domain"), ends outside the
// range of a double or a width hi - lo that overflows one, points < 2 or
// > 10^7, or grid points that are not distinct once rounded to doubles.
FitData make_grid(const solvers::Rational& lo, const solvers::Rational& hi, std::size_t points);
// "LO,HI" (exact decimals or p/q) -> (lo, hi); InputError naming --domain,
// also for ends that overflow a double or are equal as doubles, and for a
// width that overflows one.
std::pair<solvers::Rational, solvers::Rational> parse_domain(const std::string& text);
// One value per line (blank lines and '#' comments skipped), each an exact
// decimal or p/q; InputError naming the file and line for anything else,
// including nan/inf and values that overflow a double; also when the samples
// are all equal as doubles or their range overflows one. If `restrict_to_domain`, values outside [lo, hi] are dropped.
FitData read_samples(const std::string& path, const solvers::Rational* lo = nullptr,
                     const solvers::Rational* hi = nullptr);
// Attaches weights (same format, >= 0, positive sum; each a finite double and
// their double sum positive and finite): one per grid point, or for samples
// one per value of the samples file, in its order, before the --domain filter
// (the weights of dropped samples are dropped with them).
void read_weights(FitData& data, const std::string& path);
// The exploration subsample of a fit (see fit.cpp): `data` itself if it has
// at most max_points points (or max_points is 0); otherwise every k-th point
// in increasing H, k = ceil((n - 1) / (max_points - 1)), always with the
// largest, each carrying the weights of the points nearest to it in that
// order (a tie is shared): on a uniform grid of 401 points and max_points
// 101, the 101-point grid with weights 2.5, 4, ..., 4, 2.5 (the ends' and
// midpoints' shares). Samples keep their empirical distribution (quantiles).
FitData exploration_data(const FitData& data, std::size_t max_points);

struct FitBounds {
  double rate_bound = 1000;     // R before widening
  double min_const_rate = 1e-6;  // floor before widening
  double widen = 1;             // factor applied to both (R * widen, floor / widen)
  double lower(ParamKind k) const;
  double upper(ParamKind k) const;
};

struct FitProblem {
  FamilySpec family;
  Activation activation;
  solvers::Rational alpha{1};
  FitData data;
  FitBounds bounds;
};

enum class GradientMethod { Analytic, Jet };
// Ceres trust-region strategy: Levenberg-Marquardt (default), or Powell's
// dogleg with non-monotonic steps (the report's second, independent optimizer).
enum class TrustRegion { LevenbergMarquardt, Dogleg };

struct FitOptions {
  int starts = 64;
  std::uint64_t seed = 1;
  int threads = 0;            // 0: OpenMP default
  int max_iterations = 200;   // per start
  // Starts, polishing and basin hopping run on exploration_data(data,
  // explore_points); the best distinct minima found there are then solved on
  // the full problem, where (closed-form families) kink hops and the local
  // phase run. 0: explore on the full problem.
  std::size_t explore_points = 101;
  // Whether the best distinct minima of the exploration (kExplorationPool)
  // go on to the full problem beside the chain ends and the warm start. Off in
  // the widened refits, which are warm-started from the bounded optimum: there
  // the pool's polishes on the full problem were most of a refit's cost
  // (softplus general-5 without a warm start: 4.4-5.5 s per refit, then 1.3 s).
  bool pool_to_full = true;
  // At most this many extra polishes of a general fit on the full problem
  // after the transfer from the subsample, while they improve it (fit.cpp).
  // 1 in the widened refits: a fit on a bound crawls towards the wider bound,
  // so each of 8 polishes improved it (softplus general-4 at seed 8: 16008
  // iterations, 5.2 s per refit).
  int general_repolish = 8;
  // The `polish` best starts are continued with 10x the iterations and
  // polish_tolerance (counted in within_1pct after polishing).
  int polish = 4;
  // Ceres' relative cost-decrease tolerance (also the parameter tolerance) of
  // the starts and basin-hopping candidates, and of polishing and kink hops.
  // Starts only need to rank their minima: the best are polished.
  double function_tolerance = 1e-8;
  double polish_tolerance = 1e-14;
  unsigned mpfr_bits = 128;   // re-evaluation precision
  bool widen_on_bound = true; // refit with bounds x10, x100 when the best is on a bound
  // Derivatives: Analytic (default; family_flux_gradient in fit_flux.hpp:
  // hand-derived for the closed forms, the adjoint for the general family;
  // about 5x (closed forms) and 20x (general, 4-6 states) faster) or Jet
  // (automatic differentiation through the closed forms or through GTH on
  // ceres::Jet: the reference the analytic Jacobian is tested against).
  GradientMethod gradient = GradientMethod::Analytic;
  TrustRegion method = TrustRegion::LevenbergMarquardt;
  // After polishing, move each kink of the best fit's rectified rates one
  // data interval left/right and re-solve (families with closed forms only;
  // see fit.cpp): escapes minima of one smooth piece of the objective.
  bool kink_hops = true;
  // After the local phase (full-three-state and general; not in the widened
  // refits), rounds of time-scale moves: every state's exit rates scaled by
  // each of kTimeScaleFactors (scale_state_exits), re-solved, the best kept
  // if it improves; see fit.cpp.
  bool time_scale_moves = true;
  // Last (full-three-state; after the local phase where it runs), a fit with
  // a rate above kFastRate x max |alpha phi| tries its fast rates slowed (a
  // bridge out of "fast relay" minima; with kink_hops) and sped up to the
  // bounds (relays whose optimum lies at infinite speed, where Levenberg-
  // Marquardt stalls): slow_fast_rates, fast_rate_headroom; see fit.cpp.
  bool rescale_relays = true;
  // Then monotonic basin hopping (see fit.cpp): `basin_rounds` rounds
  // (x kClosedFormBasinFactor for the closed-form families, x
  // kGeneralBasinFactor for the general family on a subsample) of
  // `basin_candidates` perturbations of relative size `basin_sigma`, in
  // `basin_chains` chains from the best starts (one chain for the general
  // family, and where an eighth of the starts agree within 1%).
  int basin_rounds = 6;
  int basin_chains = 3;
  int basin_candidates = 8;
  double basin_sigma = 0.3;
  // Then (closed-form families) `local_rounds` rounds of small Gaussian moves
  // (relative size local_sigma, basin_candidates per round) of the best fit.
  int local_rounds = 20;
  double local_sigma = 0.03;
  // If not empty: start 0 starts here (clamped into the bounds) instead of at a
  // random point. The widened refits start from the bounded optimum.
  std::vector<double> warm_start;
  // Deterministic starts that take the places of starts 1, 2, ... (start 0
  // too without a warm start; clamped into the bounds); the rest stay
  // random. The tables put the splits of the (n-1)-state optimum here
  // (split_state). InputError if one has the wrong number of parameters.
  std::vector<std::vector<double>> seeded_starts;
};

// A result of the same problem with widened bounds.
struct WidenedFit {
  double widen = 1;
  double mse = 0, max_abs_error = 0;
  std::vector<std::string> on_bound;
};

struct FitResult {
  FamilySpec family;
  std::vector<ParamInfo> params;
  std::vector<double> theta;                  // best parameters (exactly the model's)
  std::vector<double> start_mse;              // double MSE of every start, in start order, on the
                                              // exploration points (the best start: its chain's end)
  std::size_t explore_points = 0;             // points of the exploration problem
  int best_start = 0;
  long iterations = 0;                        // Levenberg-Marquardt iterations, all starts + polish
  int starts_run = 0;                         // options.starts, or 1 (exact_warm_start)
  bool exact_warm_start = false;              // warm start at the rounding floor: random starts skipped
  std::vector<std::string> warm_start_clamped;  // "name=value" of warm-start parameters outside the bounds
  int within_1pct = 0;                        // starts with MSE <= 1.01 * best (exploration points)
  int kink_hops = 0;                          // accepted kink hops (0: best start as polished)
  int basin_hops = 0;                         // accepted basin hops (all chains)
  int local_hops = 0;                         // accepted local-phase moves
  int relay_slowdowns = 0;                    // accepted slowdown of the fast rates (0 or 1)
  int relay_speedups = 0;                     // accepted speed-up of the fast rates (0 or 1)
  int time_scale_moves = 0;                   // accepted time-scale moves (scale_state_exits)
  double mse_double = 0;                      // the best start's MSE in double
  double mse = 0;                             // MPFR re-evaluation
  double max_abs_error = 0;                   // MPFR re-evaluation, over the points of weight > 0
  double max_abs_error_at = 0;                // the H where it occurs
  std::vector<std::string> on_bound;          // "name=value (upper bound)"
  std::vector<WidenedFit> widened;            // x10, x100 when on_bound is not empty
  // mse < kRoundingFloor * mean((alpha phi)^2) (weighted like the MSE): the fit
  // is exact up to double rounding; widened refits are skipped (and say so).
  bool mse_at_rounding_floor = false;
  FitBounds bounds;
  solvers::Model model;                       // DESIGN section 8 schema with meta
};

// Basin-hopping rounds of the closed-form families per options.basin_rounds
// (their solves cost about a fifth of a general family's on the same grid,
// and a twentieth of one on the full grid, where the general family explored
// when this was measured). 8, not 5, since the chains stopped polishing (the
// time saved bought the extra rounds). Seeds 1-10, factor 5 -> 8: softplus
// full-three-state at its best 1.1205e-5 in 3 -> 6 of 10; sigmoid_shift_2
// within 0.4% of 1.8956e-6 in 8 -> 9; softplus x 1/14 at or below 3.157e-8
// in 3 -> 4 (one at 3.127e-8); bench_fit table 53-56 s -> 54-56 s.
inline constexpr int kClosedFormBasinFactor = 8;
// The general family's rounds per options.basin_rounds when it explores on a
// subsample (it explored on the full grid with 6 rounds before): its solves
// cost about a quarter there, and its chains were far too short to settle.
// Geometric mean of the MSE over seeds 1-4 of the report's eight inexact
// general rows (bench_fit seeds, no warm start), full grid / 101 points with
// 24 rounds / with 48: sigmoid general-4 3.4e-8 / 2.0e-8 / 1.5e-8, general-5
// 9.1e-10 / 1.1e-10 / 8.0e-11; softplus 2.2e-7 / 8.4e-8 / 2.6e-8 and 8.4e-9
// / 5.8e-9 / 5.5e-9; sigmoid_shift_2 3.9e-8 / 1.9e-8 / 1.2e-8 and 1.2e-9 /
// 3.5e-9 / 1.7e-9; softplus x 1/14 1.9e-9 / 1.1e-9 / 7.8e-10 and 4.8e-10 /
// 2.8e-10 / 3.9e-10; at 1.4-4.5 s, 1.7-5.8 s and 1.6-4.3 s per fit.
inline constexpr int kGeneralBasinFactor = 8;

// theta of a chain of every transition between n states (full-three-state:
// n = 3, B, G, R = 0, 1, 2; general-n), parameters (offset, slope) per
// transition i -> j in the family's order (by i, then j != i), with states 0
// and k exchanged: transition i -> j becomes sigma(i) -> sigma(j). Not a
// symmetry (the spikes stay on the transitions into state 0), but it maps a
// local minimum in which state k paces the spikes onto one in which state 0
// does: on the 101-point exploration grid, full-three-state sigmoid's
// 2.692e-6 minimum (G slow, B and R fast) with B and R exchanged and
// re-solved is the 1.853e-6 minimum, which perturbations and redraws did not
// reach from it in 400 rounds. The relabellings that fix state 0 are
// symmetries, so these n - 1 are all the others up to symmetry. The fit's
// chains try them (full-three-state). InputError for k = 0, k >= n or a
// parameter count other than 2 n (n - 1).
std::vector<double> exchange_states(const std::vector<double>& theta, std::size_t n, std::size_t k);

// theta with every rectified-affine rate (an Offset parameter and the Slope
// after it in `params`) whose larger value at the domain ends lo, hi exceeds
// `fast` scaled (offset and slope) by one common factor, chosen so that the
// largest of them becomes `target`; its kinks stay where they are. The other
// parameters are unchanged, and theta is returned unchanged if no rate
// exceeds `fast`. A move out of a "fast relay" minimum (fit.cpp, kFastRate).
// InputError for a size mismatch or target, fast not > 0 and finite, or
// hi < lo.
std::vector<double> slow_fast_rates(const std::vector<ParamInfo>& params, const std::vector<double>& theta, double lo,
                                    double hi, double fast, double target);

// The chain theta (every transition between n states, rectified affine, in
// the family's parameter order: full-three-state with n = 3, or general-n)
// with every exit rate of state k multiplied by `factor` (offset and slope,
// so its kinks stay). Row k of the generator times f: pi' (i != k) = pi_i / Z
// and pi'_k = pi_k / (f Z) with Z = 1 + pi_k (1/f - 1) solve pi' Q' = 0, so
// only the time spent in k changes (its jump chain is the same), and the
// spike flux becomes F / Z. A move between minima that differ in one state's
// speed (fit.cpp): softplus full-three-state's 1.1205e-5 minimum reaches
// 1.0007e-5 (G left faster: GR's peak 69 -> 4170) in three such moves.
// InputError for k >= n, a factor not > 0 and finite, or a parameter count
// other than 2 n (n - 1).
std::vector<double> scale_state_exits(const std::vector<double>& theta, std::size_t n, std::size_t k, double factor);

// The chain theta on n states (parameter order as in scale_state_exits) as a
// chain on n + 1 states in which state k (1 <= k < n) is split in two: the
// new state n leaves to every other state as k does, every rate into k is
// shared, `share` of it into k and 1 - share into n, and k and n exchange at
// the constant rate `internal`. The two states lump exactly (same exit rates
// to every other state), so pi, with pi_k split, and the spike flux into
// state 0 are those of theta. InputError for k = 0, k >= n, share not in
// (0, 1), internal not > 0 and finite, or a parameter count other than
// 2 n (n - 1).
std::vector<double> split_state(const std::vector<double>& theta, std::size_t n, std::size_t k, double share,
                                double internal);

// The largest factor f >= 1 by which the rates that slow_fast_rates(params,
// theta, lo, hi, fast, .) scales can be sped up (offsets and slopes x f)
// while staying within `bounds`; 1 if none exceeds `fast` or one is already
// on its bound.
double fast_rate_headroom(const std::vector<ParamInfo>& params, const std::vector<double>& theta, double lo, double hi,
                          double fast, const FitBounds& bounds);

// Fast relays (full-three-state; fit.cpp): a fit with a rate above
// kFastRate x max |alpha phi| on the domain is offered the bridges
// slow_fast_rates(..., target = c x max |alpha phi|) for c in
// kSlowedRateTargets, and its fast rates sped up by fast_rate_headroom.
inline constexpr double kFastRate = 100;
inline constexpr double kSlowedRateTargets[] = {2.0, 2.5, 3.2, 4.0, 5.0, 6.3};

// Time-scale moves (fit.cpp): the factors a state's exit rates are scaled
// by, at most this many rounds (each accepting the best improvement of at
// least kTimeScaleMinGain relative), and for the general family how many of
// the candidates (ranked on the exploration problem) are polished on the
// full problem.
inline constexpr double kTimeScaleFactors[] = {0.1, 0.3, 3.0, 10.0};
inline constexpr int kTimeScaleRounds = 4;
inline constexpr double kTimeScaleMinGain = 1e-4;
inline constexpr int kTimeScalePolished = 2;

// How many of the best distinct minima of the exploration problem are solved
// on the full problem (fit.cpp).
inline constexpr std::size_t kExplorationPool = 8;

// Relative MSE below which a fit is exact up to double rounding (see
// FitResult::mse_at_rounding_floor).
inline constexpr double kRoundingFloor = 1e-20;

// Runs the multistart fit (and the widened refits if needed).
FitResult fit(const FitProblem& problem, const FitOptions& options);

// Lower-level pieces, exposed for tests and the report.
// Threads a fit with these options uses: options.threads, or for 0 the
// OpenMP default (1 without OpenMP).
int fit_threads(const FitOptions& options);
// Double MSE of theta on the problem's data (weighted); +inf when the flux is
// not finite at some point.
double mse_double(const FitProblem& problem, const std::vector<double>& theta);
// "name=value" of every parameter outside its bounds [lower, upper] (NaN
// included): what fit() clamps of a warm start, and what a fit's result must
// not have.
std::vector<std::string> parameters_outside_bounds(const std::vector<ParamInfo>& params,
                                                   const std::vector<double>& theta, const FitBounds& bounds);
// The fitted model with exact rational parameters (no meta beyond the family's).
// InputError when a parameter is not finite (it has no rational value).
solvers::Model model_of(const FamilySpec& f, const std::vector<double>& theta);
// The parameters of family f whose model (model_of) is `m`: its inverse, for
// a warm start from a model file (`fit --warm-start`). States are matched by
// name when `m` uses the family's names (model_of's: B, R / B, G, R / S0 ..
// S(n-1)) in any order, else by position. A transition that `m` omits has
// rate 0 (parameters 0). Each exact value is rounded to the nearest double.
// InputError naming `source` for another state count, a transition the
// family lacks, a spike flag that differs from the family's, a slope on a
// rate that the family keeps constant, or a value beyond double range.
std::vector<double> theta_of(const FamilySpec& f, const solvers::Model& m, const std::string& source);
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
// MPFR re-evaluation of MSE and max |error| of a model against alpha phi on
// data. `source` names the model in errors (a chain with several closed
// classes at some H).
struct ExactErrors {
  double mse = 0, max_abs_error = 0, max_abs_error_at = 0;
};
ExactErrors evaluate_exactly(const solvers::Model& model, const FitProblem& problem, unsigned bits,
                             const std::string& source = "fitted model");
// Per-start seed: splitmix64 of (seed, index).
std::uint64_t start_seed(std::uint64_t seed, std::uint64_t index);

}  // namespace ctmc::analysis
