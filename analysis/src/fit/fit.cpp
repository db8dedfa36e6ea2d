// The fitter's driver (fit.hpp): checks the problem, sets up the two stages
// (the exploration subsample and the full problem), runs the search moves of
// all_moves() in order (moves/*.cpp; fit_internal.hpp describes the
// search), then writes the exact model, re-evaluates it in MPFR and refits
// with widened bounds where the fit sits on a bound.
#include "ctmc/analysis/fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "fit/fit_internal.hpp"

namespace ctmc::analysis {

namespace fit_search {

// The search's order: the exploration (multistart, polish, basin_hop), the
// transfer to the full problem, then the full-problem moves, the cheap and
// local ones (kink hops, repolishing, the local phase) before those that
// jump between funnels (time_scale, relay_rescale), which keep a move only if
// it beats the locally refined fit. The moves that draw random numbers
// (multistart, basin_hop, local_phase) reserve their blocks of streams in
// this order (Search::streams), so a new move that draws numbers takes its
// block after theirs without changing theirs.
std::vector<SearchMove> all_moves() {
  return {multistart_move(),       polish_move(),      basin_hop_move(),  transfer_move(),     kink_hop_move(),
          general_repolish_move(), local_phase_move(), time_scale_move(), relay_rescale_move()};
}

}  // namespace fit_search

using fit_search::Search;
using fit_search::Stage;
using fit_search::Targets;

namespace {

// Range of max |alpha phi| on the data that the fit accepts (see fit()).
constexpr double kMinTargetScale = 1e-100, kMaxTargetScale = 1e100;

// The options and the problem, before anything is set up.
void check_problem(const FitProblem& problem, const FitOptions& options) {
  const std::size_t n_params = family_parameters(problem.family).size();
  if (!options.warm_start.empty() && options.warm_start.size() != n_params)
    throw InputError("fit: warm start has the wrong number of parameters");
  for (const auto& seeded : options.seeded_starts)
    if (seeded.size() != n_params) throw InputError("fit: a seeded start has the wrong number of parameters");
  if (options.starts < 1) throw InputError("starts", fmt::format("need at least 1 start, got {}", options.starts));
  // The re-evaluation is the reported MSE: below double precision it would be
  // less accurate than the fit it checks.
  if (options.mpfr_bits < 53)
    throw InputError("mpfr_bits",
                     fmt::format("the MSE re-evaluation needs at least 53 MPFR bits, got {}", options.mpfr_bits));
  if (!(problem.alpha > 0)) throw InputError("alpha", "alpha_fit must be > 0");
  if (problem.data.h.size() < n_params)
    throw InputError(fmt::format("fit: too few points ({}) for the {} parameters of the {} family",
                                 problem.data.h.size(), n_params, family_name(problem.family)));
  if (auto why = activations::table_coverage_violation(problem.activation, solvers::to_double(problem.data.lo),
                                                       solvers::to_double(problem.data.hi)))
    throw InputError("activation", *why);
}

// The targets alpha phi(H) on the data: finite, and of a scale whose square
// (the MSE's) stays a normal double.
void check_targets(const FitProblem& problem, const Targets& targets) {
  for (std::size_t m = 0; m < targets.y.size(); ++m)
    if (!std::isfinite(targets.y[m]))
      throw InputError("activation", fmt::format("{} is not finite at H = {}", problem.activation.name, problem.data.h[m]));
  // The MSE is the square of the target's scale: outside [1e-100, 1e100] it
  // (or the rounding floor, 1e-26 of it) leaves the normal doubles, and the
  // fit fails ('every start failed') or reports an MSE of 0 that is not.
  double target_max = 0;
  for (double y : targets.y) target_max = std::max(target_max, std::abs(y));
  if (target_max > 0 && !(target_max >= kMinTargetScale && target_max <= kMaxTargetScale))
    throw InputError("alpha", fmt::format("max |alpha * {}| on the data is {:g}; the fit needs it in [{:g}, {:g}] "
                                          "(its square, the MSE's scale, must stay a normal double)",
                                          problem.activation.name, target_max, kMinTargetScale, kMaxTargetScale));
}

// Where the fit sits on a bound: refits with the bounds widened 10x and
// 100x, each warm-started from the bounded optimum (so the widened MSE can
// only be lower) plus an eighth of the random starts; no hopping or moves,
// and only the best start and the warm start go on to the full problem (see
// pool_to_full, general_repolish). At the rounding floor wider bounds cannot
// lower the MSE by a meaningful amount: not run, and the meta says so.
void refit_widened(const FitProblem& problem, const FitOptions& options, FitResult& r) {
  if (r.on_bound.empty() || !options.widen_on_bound || r.mse_at_rounding_floor) return;
  for (double factor : {10.0, 100.0}) {
    FitProblem wider = problem;
    wider.bounds.widen = problem.bounds.widen * factor;
    FitOptions o = options;
    o.widen_on_bound = false;
    o.kink_hops = false;  // warm-started from the hopped optimum already
    o.basin_rounds = 0;   // likewise
    o.time_scale_moves = false;
    o.warm_start = r.theta;
    o.seeded_starts.clear();
    o.pool_to_full = false;
    o.general_repolish = 1;
    o.starts = std::max(8, options.starts / 8);
    const auto w = fit(wider, o);
    r.widened.push_back({factor, w.mse, w.max_abs_error, w.on_bound});
  }
}

// The model's meta (DESIGN.md sections 7-8): what was fitted, how, and how
// well.
void write_meta(FitResult& r, const FitProblem& problem, const FitOptions& options, int best) {
  auto& meta = r.model.meta;
  meta["family"] = problem.family.family == FitFamily::General ? std::string("general") : family_name(problem.family);
  meta["states"] = state_count(problem.family);
  meta["target"] = problem.activation.name;
  meta["alpha_fit"] = solvers::exact_text(problem.alpha);
  meta["domain"] = {solvers::exact_text(problem.data.lo), solvers::exact_text(problem.data.hi)};
  meta["data"] = problem.data.description;
  meta["points"] = problem.data.h.size();
  meta["mse"] = r.mse;
  meta["max_abs_error"] = r.max_abs_error;
  meta["max_abs_error_at"] = r.max_abs_error_at;
  meta["error_precision_bits"] = options.mpfr_bits;
  meta["starts"] = r.starts_run;
  if (r.exact_warm_start) meta["random_starts_skipped"] = "the warm start is exact up to double rounding";
  meta["starts_within_1pct"] = r.within_1pct;
  meta["exploration_points"] = r.explore_points;
  meta["kink_hops"] = r.kink_hops;
  meta["basin_hops"] = r.basin_hops;
  meta["local_hops"] = r.local_hops;
  meta["relay_slowdowns"] = r.relay_slowdowns;
  meta["relay_speedups"] = r.relay_speedups;
  meta["time_scale_moves"] = r.time_scale_moves;
  meta["best_start"] = best;
  meta["seed"] = options.seed;
  meta["bounds"] = {{"offset", {problem.bounds.lower(ParamKind::Offset), problem.bounds.upper(ParamKind::Offset)}},
                    {"slope", {problem.bounds.lower(ParamKind::Slope), problem.bounds.upper(ParamKind::Slope)}},
                    {"constant_rate",
                     {problem.bounds.lower(ParamKind::ConstRate), problem.bounds.upper(ParamKind::ConstRate)}}};
  meta["on_bound"] = r.on_bound;
  if (!r.widened.empty()) {
    auto arr = nlohmann::ordered_json::array();
    for (const auto& w : r.widened)
      arr.push_back({{"widen", w.widen}, {"mse", w.mse}, {"max_abs_error", w.max_abs_error}, {"on_bound", w.on_bound}});
    meta["widened_bounds"] = arr;
  } else if (!r.on_bound.empty() && r.mse_at_rounding_floor) {
    meta["widened_bounds"] = fmt::format("not refitted: MSE {:.3e} is below {:g} x mean((alpha phi)^2), the rounding floor, "
                                         "so wider bounds cannot lower it",
                                         r.mse, kRoundingFloor);
  }
}

}  // namespace

std::vector<SearchMoveInfo> search_moves(const FamilySpec& family) {
  std::vector<SearchMoveInfo> out;
  for (const auto& move : fit_search::all_moves())
    if (move.runs_for(family)) out.push_back({move.name, move.description(family)});
  return out;
}

const SearchTuning& search_tuning() {
  static const SearchTuning t{kClosedFormBasinFactor,
                              kGeneralBasinFactor,
                              kExplorationPool,
                              kFastRate,
                              {std::begin(kSlowedRateTargets), std::end(kSlowedRateTargets)},
                              kTimeScaleRounds,
                              {std::begin(kTimeScaleFactors), std::end(kTimeScaleFactors)},
                              kTimeScaleMinGain,
                              kTimeScalePolished};
  return t;
}

FitResult fit(const FitProblem& problem, const FitOptions& options) {
  check_problem(problem, options);
  const auto params = family_parameters(problem.family);
  const Stage full(problem);
  const Targets& targets = *full.targets;
  check_targets(problem, targets);
  // Two stages. Exploration (starts, polishing, basin-hopping chains) runs on
  // a subsample of at most options.explore_points points (see
  // exploration_data): its solves cost a quarter of the full problem's on the
  // report's 401-point grids, so the chains can be long. Then the chain ends
  // are solved on the full problem (the transfer move), and the moves after
  // it run there: the reported fit is a local minimum of the full problem.
  FitProblem explore_problem = problem;
  explore_problem.data = exploration_data(problem.data, options.explore_points);
  const bool coarse = explore_problem.data.h.size() < problem.data.h.size();
  std::optional<Stage> coarse_stage;
  if (coarse) coarse_stage.emplace(explore_problem);
  const Stage& ex = coarse ? *coarse_stage : full;
  const double floor_mse = full.floor_mse;
  // A warm start that is already exact (e.g. a nested smaller family's exact
  // optimum) is the answer: the random starts are skipped (and the result
  // says so: starts_run = 1, exact_warm_start).
  std::vector<double> warm = options.warm_start;  // clamped into the bounds
  std::vector<std::string> warm_clamped;
  if (!warm.empty()) {
    warm_clamped = parameters_outside_bounds(params, warm, problem.bounds);
    fit_search::clamp_to_bounds(problem.bounds, params, warm);
  }
  const bool exact_warm_start = !warm.empty() && fit_search::weighted_mse(problem, targets, warm) < floor_mse;
  const int n = exact_warm_start ? 1 : options.starts;

  Search s(problem, options, full, ex, std::move(warm), n);
  s.result.family = problem.family;
  s.result.params = params;
  s.result.bounds = problem.bounds;
  for (const auto& move : fit_search::all_moves()) {
    if (!move.runs_for(problem.family)) continue;
    move.run(s);
    if (s.restart_on_full) {
      FitOptions o = options;
      o.explore_points = 0;
      return fit(problem, o);
    }
  }

  FitResult r = std::move(s.result);
  const auto& outcomes = s.outcomes;
  const int best = s.best;

  // Starts' MSEs and the within-1% count are on the exploration problem,
  // where the starts ran; without a subsample (the exploration problem is
  // the full one) the final fit continues the best start.
  for (int k = 0; k < n; ++k) r.start_mse.push_back(outcomes[k].mse);
  const double reference = coarse ? s.explore_best : r.mse_double;
  r.start_mse[static_cast<std::size_t>(best)] = reference;
  r.iterations = s.total_iterations;
  for (int k = 0; k < n; ++k)
    if (r.start_mse[static_cast<std::size_t>(k)] <= 1.01 * reference) ++r.within_1pct;
  r.explore_points = ex.problem->data.h.size();

  // The written model is the chain the optimizer saw, also where a kink sits
  // on a data point to the last bit (nudge_kinks_off_points).
  r.theta = nudge_kinks_off_points(params, r.theta, problem.data, problem.bounds);
  r.mse_double = fit_search::weighted_mse(problem, targets, r.theta);
  r.model = model_of(problem.family, r.theta);
  const auto exact = evaluate_exactly(r.model, problem, options.mpfr_bits);
  r.mse = exact.mse;
  r.max_abs_error = exact.max_abs_error;
  r.max_abs_error_at = exact.max_abs_error_at;
  r.on_bound = fit_search::parameters_on_bound(params, r.theta, problem.bounds);

  r.mse_at_rounding_floor = r.mse < floor_mse;
  r.starts_run = n;
  r.exact_warm_start = exact_warm_start;
  r.warm_start_clamped = std::move(warm_clamped);
  refit_widened(problem, options, r);
  write_meta(r, problem, options, best);
  return r;
}

}  // namespace ctmc::analysis
