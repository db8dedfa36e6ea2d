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
// is found. Then, from the best start, the search moves of search_moves()
// (polishing, monotonic basin hopping, the transfer to the full problem,
// kink hops, a local phase of small moves, time-scale moves, ...; one file
// each under analysis/src/fit/moves/), all seeded or deterministic and
// reduced in a fixed order, so still thread-independent. A warm start that is already at the rounding
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

#include "ctmc/activations/activation.hpp"
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
// Throws InputError for hi <= lo ("domain: empty domain"), ends outside the
// range of a double or a width hi - lo that overflows one, points < 2 or
// > 10^7, or grid points that are not distinct once rounded to doubles.
FitData make_grid(const solvers::Rational& lo, const solvers::Rational& hi, std::size_t points);
// "LO,HI" (exact decimals or p/q; solvers::parse_interval) -> (lo, hi);
// InputError naming `what`, also for ends that overflow a double or are equal
// as doubles, and for a width that overflows one.
std::pair<solvers::Rational, solvers::Rational> parse_domain(const std::string& text,
                                                             const std::string& what = "domain");
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
struct FitBounds {
  double rate_bound = 1000;     // R before widening
  double min_const_rate = 1e-6;  // floor before widening
  double widen = 1;             // factor applied to both (R * widen, floor / widen)
  double lower(ParamKind k) const;
  double upper(ParamKind k) const;
};

struct FitProblem {
  FamilySpec family;
  activations::Activation activation;
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
  // Starts, polishing and basin hopping run on a subsample of at most
  // explore_points points (every k-th point in increasing H, each carrying
  // the weights of the points nearest to it); the best distinct minima found
  // there are then solved on the full problem, where the later moves run.
  // 0: explore on the full problem.
  std::size_t explore_points = 101;
  // Whether the best distinct minima of the exploration
  // (SearchTuning::exploration_pool) go on to the full problem beside the
  // chain ends and the warm start. Off in the widened refits, which are
  // warm-started from the bounded optimum: there the pool's polishes on the
  // full problem would be most of a refit's cost.
  bool pool_to_full = true;
  // At most this many extra polishes of a general fit on the full problem
  // after the transfer from the subsample, while they improve it (the
  // general_repolish move). 1 in the widened refits: a fit on a bound crawls
  // towards the wider bound, so each of 8 polishes improves it a little and
  // together they cost several times the rest of the refit.
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
  // the kink_hop move): escapes minima of one smooth piece of the objective.
  bool kink_hops = true;
  // After the local phase (full-three-state and general; not in the widened
  // refits), rounds of time-scale moves: every state's exit rates scaled by
  // each of SearchTuning::time_scale_factors, re-solved, the best kept if it
  // improves (the time_scale move).
  bool time_scale_moves = true;
  // Last (full-three-state; after the local phase where it runs), a fit with
  // a rate above SearchTuning::fast_rate x max |alpha phi| tries its fast
  // rates slowed (a bridge out of "fast relay" minima; with kink_hops) and
  // sped up to the bounds (relays whose optimum lies at infinite speed, where
  // Levenberg-Marquardt stalls): the relay_rescale move.
  bool rescale_relays = true;
  // Then monotonic basin hopping (the basin_hop move): `basin_rounds` rounds
  // (x SearchTuning::closed_form_basin_factor for the closed-form families,
  // x general_basin_factor for the general family on a subsample) of
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
  // (fit_tables.hpp). InputError if one has the wrong number of parameters.
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
  int time_scale_moves = 0;                   // accepted time-scale moves (one state's exits rescaled)
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

// The search's tuning constants (analysis/src/fit/fit_internal.hpp, where
// each is justified beside the move that uses it), for the report's and the
// CLI's descriptions of the method.
struct SearchTuning {
  int closed_form_basin_factor;   // basin rounds x this for the closed-form families
  int general_basin_factor;       // ... and for the general family on a subsample
  std::size_t exploration_pool;   // best distinct exploration minima solved on the full problem
  double fast_rate;               // relay_rescale: "fast" is above this x max |alpha phi|
  std::vector<double> slowed_rate_targets;  // relay_rescale: fastest rate slowed to c x max |alpha phi|
  int time_scale_rounds;          // time_scale: at most this many rounds
  std::vector<double> time_scale_factors;   // time_scale: factors of a state's exit rates
  double time_scale_min_gain;     // time_scale: relative gain a round must reach
  int time_scale_polished;        // time_scale: general candidates polished on the full problem
};
const SearchTuning& search_tuning();

// One search move of the fit: its name and a one-line description, for the
// report (moves in analysis/src/fit/moves/).
struct SearchMoveInfo {
  std::string name;
  std::string description;
};
// The search moves fit() runs for `family`, in the order it runs them. Each
// move also checks the options and the fit's state when it runs (most do
// nothing at the rounding floor, with polish = 0 or with their option off).
std::vector<SearchMoveInfo> search_moves(const FamilySpec& family);

// Relative MSE below which a fit is exact up to double rounding (see
// FitResult::mse_at_rounding_floor).
inline constexpr double kRoundingFloor = 1e-20;

// Runs the multistart fit (and the widened refits if needed).
FitResult fit(const FitProblem& problem, const FitOptions& options);

// Lower-level pieces, exposed for the report, the CLI and the Python module.
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
// MPFR re-evaluation of MSE and max |error| of a model against alpha phi on
// data. `source` names the model in errors (a chain with several closed
// classes at some H).
struct ExactErrors {
  double mse = 0, max_abs_error = 0, max_abs_error_at = 0;
};
ExactErrors evaluate_exactly(const solvers::Model& model, const FitProblem& problem, unsigned bits,
                             const std::string& source = "fitted model");

}  // namespace ctmc::analysis
