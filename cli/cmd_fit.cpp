// ctmc-snn fit --activation NAME --domain LO,HI --family F [--states n]
//   [--points M] [--samples FILE] [--weights FILE] [--starts S] [--seed S]
//   [--threads T] [--alpha A] [--rate-bound R] [--basin-rounds K]
//   [--gradient analytic|jet] [--warm-start model.json] [--output model.json]
//   [--json]
// ctmc-snn fit --activation NAME --domain LO,HI --score model.json [--json]
//   (the model's MSE and max error against the target, no fit)
//
// Least-squares fit of a CTMC family's stationary flux to alpha * phi (paper
// eq. 3); see analysis/include/ctmc/analysis/fit.hpp for the method, bounds and
// the meaning of every reported figure.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <optional>

#include "command.hpp"
#include "output_path.hpp"
#include "ctmc/analysis/fit.hpp"
#include "ctmc/analysis/fit_tables.hpp"
#include "ctmc/solvers/errors.hpp"
#include "ctmc/solvers/exact.hpp"

namespace ctmc::cli {
namespace {

struct FitCliOptions {
  std::string activation, domain, family = "three-state", samples, weights, output, alpha = "1", warm_start, score;
  std::size_t states = 0, points = 401;
  int starts = 64, threads = 0, max_iterations = 200, basin_rounds = analysis::FitOptions{}.basin_rounds;
  std::string gradient = "analytic";
  unsigned long long seed = 1;
  double rate_bound = 1000, min_rate = 1e-6;
  unsigned precision = 128;
  bool json = false, no_widen = false;
};

// Caps: beyond these a fit takes hours or cannot be allocated; bad input.
constexpr int kMaxStarts = 100'000;
constexpr int kMaxIterations = 1'000'000;
constexpr int kMaxBasinRounds = 100'000;
constexpr std::size_t kMaxPoints = 10'000'000;
constexpr double kMaxRateBound = 1e15, kMinMinRate = 1e-30;

// Every numeric option, before anything is read or fitted.
void check_numeric_options(const FitCliOptions& o) {
  if (o.starts < 1 || o.starts > kMaxStarts)
    throw InputError(fmt::format("--starts: need 1..{}, got {}", kMaxStarts, o.starts));
  if (o.max_iterations < 1 || o.max_iterations > kMaxIterations)
    throw InputError(fmt::format("--max-iterations: need 1..{}, got {}", kMaxIterations, o.max_iterations));
  if (o.basin_rounds < 0 || o.basin_rounds > kMaxBasinRounds)
    throw InputError(fmt::format("--basin-rounds: need 0..{}, got {}", kMaxBasinRounds, o.basin_rounds));
  if (o.threads < 0 || o.threads > kMaxThreads)
    throw InputError(fmt::format("--threads: need 0..{} (0: all cores), got {}", kMaxThreads, o.threads));
  if (o.samples.empty() && (o.points < 2 || o.points > kMaxPoints))
    throw InputError(fmt::format("--points: need 2..{} grid points, got {}", kMaxPoints, o.points));
  if (!std::isfinite(o.rate_bound) || !(o.rate_bound > 0) || o.rate_bound > kMaxRateBound)
    throw InputError(fmt::format("--rate-bound: need a finite number in (0, {:g}], got {}", kMaxRateBound,
                                 o.rate_bound));
  if (!std::isfinite(o.min_rate) || !(o.min_rate >= kMinMinRate))
    throw InputError(fmt::format("--min-rate: need a finite number >= {:g}, got {}", kMinMinRate, o.min_rate));
  if (!(o.min_rate < o.rate_bound))
    throw InputError(fmt::format("--min-rate: need min-rate < rate-bound, got {} >= {}", o.min_rate, o.rate_bound));
}

// --score: the MSE and max |error| of a given model (any chain, e.g. one
// trained in PyTorch, or a model from the paper) against alpha phi on the
// fit's data, evaluated as the fit's results are (MPFR at --precision bits on
// the exact model), without fitting.
void score_model(const FitCliOptions& o, const analysis::FitProblem& p) {
  const auto model = solvers::read_model_file(o.score);
  const analysis::ExactErrors e = analysis::evaluate_exactly(model, p, o.precision, "--score " + o.score);
  if (o.json) {
    nlohmann::ordered_json j{{"model", o.score},
                             {"states", model.size()},
                             {"target", fmt::format("{} * {}", o.alpha, p.activation.name)},
                             {"data", p.data.description},
                             {"mse", e.mse},
                             {"max_abs_error", e.max_abs_error},
                             {"max_abs_error_at", e.max_abs_error_at},
                             {"precision_bits", o.precision}};
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("model       {} ({} states, {} transitions)\n", o.score, model.size(), model.transitions.size());
  fmt::print("target      {} * {}\n", o.alpha, p.activation.name);
  fmt::print("data        {}\n", p.data.description);
  fmt::print("MSE         {:.6e}   (MPFR {} bits)\n", e.mse, o.precision);
  fmt::print("max |err|   {:.6e} at H = {:.6g}\n", e.max_abs_error, e.max_abs_error_at);
}

void run_fit(const FitCliOptions& o) {
  check_numeric_options(o);
  if (!o.output.empty()) check_output_path(o.output, "--output");
  analysis::FitProblem p;
  p.activation = analysis::parse_activation(o.activation);
  p.family = analysis::parse_family(o.family, o.states == 0 ? 4 : o.states);
  if (o.states != 0 && p.family.family != analysis::FitFamily::General &&
      o.states != analysis::state_count(p.family))
    throw InputError(fmt::format("--states: the {} family has {} states, not {}", o.family,
                                 analysis::state_count(p.family), o.states));
  const auto alpha = solvers::parse_exact(o.alpha);
  if (!alpha || !(*alpha > 0)) throw InputError(fmt::format("--alpha: '{}' is not a positive number", o.alpha));
  if (const double a = solvers::to_double(*alpha); !std::isfinite(a) || !(a > 0))
    throw InputError(fmt::format("--alpha: '{}' is outside the range of a positive double", o.alpha));
  p.alpha = *alpha;
  if (!o.samples.empty()) {
    if (!o.domain.empty()) {
      const auto [lo, hi] = analysis::parse_domain(o.domain);
      p.data = analysis::read_samples(o.samples, &lo, &hi);
    } else {
      p.data = analysis::read_samples(o.samples);
    }
  } else {
    if (o.domain.empty()) throw InputError("--domain: required unless --samples is given");
    const auto [lo, hi] = analysis::parse_domain(o.domain);
    p.data = analysis::make_grid(lo, hi, o.points);
  }
  if (!o.weights.empty()) analysis::read_weights(p.data, o.weights);
  p.bounds.rate_bound = o.rate_bound;
  p.bounds.min_const_rate = o.min_rate;
  if (!o.score.empty()) {
    score_model(o, p);
    return;
  }

  analysis::FitOptions fo;
  fo.starts = o.starts;
  fo.seed = o.seed;
  fo.threads = o.threads;
  fo.max_iterations = o.max_iterations;
  fo.mpfr_bits = o.precision;
  fo.widen_on_bound = !o.no_widen;
  fo.basin_rounds = o.basin_rounds;
  if (o.gradient == "jet")
    fo.gradient = analysis::GradientMethod::Jet;
  else if (o.gradient != "analytic")
    throw InputError(fmt::format("--gradient: unknown method '{}' (analytic or jet)", o.gradient));
  // A warm start from a model file (e.g. a chain trained elsewhere): start 0
  // of the multistart, so the fit ends no higher than its MSE once clamped
  // into the bounds (up to rounding); its own MSE, as given, goes into the
  // output and the meta. A general chain with fewer states than --states
  // grows as the tables' rows do: embedded (same flux), with the splits of
  // its (n-1)-state form as starts 1, 2, ...
  std::optional<double> warm_mse;
  std::size_t warm_states = 0;
  if (!o.warm_start.empty()) {
    const std::string source = "--warm-start " + o.warm_start;
    const auto given = solvers::read_model_file(o.warm_start);
    warm_states = given.size();
    const std::size_t n = analysis::state_count(p.family);
    if (p.family.family == analysis::FitFamily::General && warm_states >= 2 && warm_states < n) {
      const analysis::FamilySpec smaller{analysis::FitFamily::General, warm_states};
      analysis::start_from_smaller(fo, analysis::theta_of(smaller, given, source), warm_states, n, p, true);
    } else {
      fo.warm_start = analysis::theta_of(p.family, given, source);
    }
    warm_mse = analysis::evaluate_exactly(given, p, o.precision, source).mse;
  }
  auto r = analysis::fit(p, fo);
  if (warm_mse) {
    auto& w = r.model.meta["warm_start"];
    w["file"] = o.warm_start;
    w["mse"] = *warm_mse;
    w["states"] = warm_states;
    w["split_starts"] = fo.seeded_starts.size();
    w["clamped_into_bounds"] = r.warm_start_clamped;
  }

  if (!o.output.empty()) solvers::write_model_file(r.model, o.output);
  if (o.json) {
    fmt::print("{}\n", solvers::model_to_json(r.model).dump(2));
    return;
  }
  fmt::print("family      {}\n", analysis::family_name(r.family));
  fmt::print("target      {} * {}\n", o.alpha, p.activation.name);
  fmt::print("data        {}\n", p.data.description);
  fmt::print("bounds      offsets and slopes in [{}, {}], constant rates in [{}, {}]\n",
             p.bounds.lower(analysis::ParamKind::Offset), p.bounds.upper(analysis::ParamKind::Offset),
             p.bounds.lower(analysis::ParamKind::ConstRate), p.bounds.upper(analysis::ParamKind::ConstRate));
  fmt::print("MSE         {:.6e}   (MPFR {} bits)\n", r.mse, o.precision);
  fmt::print("max |err|   {:.6e} at H = {:.6g}\n", r.max_abs_error, r.max_abs_error_at);
  if (warm_mse) {
    fmt::print("warm start  {}: MSE {:.6e} as given\n", o.warm_start, *warm_mse);
    if (!fo.seeded_starts.empty())
      fmt::print("  a {}-state chain, embedded in {} states; its splits are starts 1-{}\n", warm_states,
                 analysis::state_count(p.family), fo.seeded_starts.size());
    if (!r.warm_start_clamped.empty())
      fmt::print("  clamped into the bounds: {}\n", fmt::join(r.warm_start_clamped, ", "));
  }
  if (r.exact_warm_start)
    fmt::print("starts      1 (the warm start is exact up to rounding; random starts skipped)\n");
  else
    fmt::print("starts      {} (seed {}), {} within 1% of the best MSE (best: start {})\n", o.starts, o.seed,
               r.within_1pct, r.best_start);
  if (r.explore_points < p.data.h.size())
    fmt::print("exploration starts and basin hopping on {} of the {} points, then the best minima on all\n",
               r.explore_points, p.data.h.size());
  fmt::print("hops        {} kink hops, {} basin hops, {} local moves, {} time-scale moves, {} relay slowdowns and {} "
             "speed-ups accepted\n",
             r.kink_hops, r.basin_hops, r.local_hops, r.time_scale_moves, r.relay_slowdowns, r.relay_speedups);
  fmt::print("parameters\n");
  for (std::size_t i = 0; i < r.params.size(); ++i)
    fmt::print("  {:<8} {:.17g}\n", r.params[i].name, r.theta[i]);
  if (r.on_bound.empty()) {
    fmt::print("on bound    none\n");
  } else {
    fmt::print("on bound    {}\n", fmt::join(r.on_bound, ", "));
    if (r.mse_at_rounding_floor)
      fmt::print("  bounds not widened: the MSE is at the rounding floor and cannot decrease\n");
    for (const auto& w : r.widened)
      fmt::print("  bounds x{:<4g} MSE {:.6e}, max |err| {:.6e}{}\n", w.widen, w.mse, w.max_abs_error,
                 w.on_bound.empty() ? "" : " (still on a bound)");
  }
  if (!o.output.empty()) fmt::print("model       {}\n", o.output);
}

Register reg([](CLI::App& root) {
  auto o = std::make_shared<FitCliOptions>();
  auto* cmd = root.add_subcommand("fit", "Fit a CTMC family's stationary flux to alpha * activation (paper eq. 3)");
  cmd->add_option("--activation", o->activation, analysis::activation_names_help())->required();
  cmd->add_option("--domain", o->domain, "Input interval LO,HI (grid domain; with --samples, a filter)");
  cmd->add_option("--family", o->family, "two-state | three-state | full-three-state | general")
      ->capture_default_str();
  cmd->add_option("--states", o->states, "Number of states of the general family (2..6; default 4)")
      ->check(kNoMinus);
  cmd->add_option("--points", o->points, "Uniform grid points")
      ->check(kNoMinus)->capture_default_str();
  cmd->add_option("--samples", o->samples, "File of preactivations H, one per line (instead of the grid)");
  cmd->add_option("--weights", o->weights, "File of weights >= 0: one per grid point, or one per value of --samples, in its order (filtered with them by --domain)");
  cmd->add_option("--starts", o->starts, "Multistart count")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the starting points")
      ->check(kNoMinus)->capture_default_str();
  cmd->add_option("--threads", o->threads, "Threads (0: all cores, or OMP_NUM_THREADS if set); results do not depend on it")
      ->capture_default_str();
  cmd->add_option("--alpha", o->alpha, "Target scale alpha_fit (fixed, stored in the model's meta)")
      ->capture_default_str();
  cmd->add_option("--rate-bound", o->rate_bound, "Bound R: offsets, slopes in [-R, R], constant rates <= R")
      ->capture_default_str();
  cmd->add_option("--min-rate", o->min_rate, "Lower bound of the constant rates")->capture_default_str();
  cmd->add_option("--max-iterations", o->max_iterations, "Levenberg-Marquardt iterations per start")
      ->capture_default_str();
  cmd->add_option("--basin-rounds", o->basin_rounds,
                  fmt::format("Basin-hopping rounds after the multistart (x{} for the closed-form families, x{} for "
                              "general on a subsample of the points; 0: none)",
                              analysis::kClosedFormBasinFactor, analysis::kGeneralBasinFactor))
      ->capture_default_str();
  cmd->add_option("--gradient", o->gradient, "Jacobian: analytic, or jet (automatic differentiation, slower)")
      ->capture_default_str();
  cmd->add_option("--precision", o->precision, "MPFR bits of the MSE / max error re-evaluation")
      ->capture_default_str()
      ->check(CLI::Range(53u, 100000u));
  cmd->add_flag("--no-widen", o->no_widen, "Skip the refits with bounds x10 and x100 when the best fit is on a bound");
  cmd->add_option("--warm-start", o->warm_start,
                  "Model JSON to start from (start 0; e.g. a chain trained elsewhere), of the --family's shape: states "
                  "matched by name if it uses the family's (B, R / B, G, R / S0..S(n-1)), else by position. For "
                  "general, a chain of fewer states is embedded, and its splits are further starts");
  auto* score = cmd->add_option("--score", o->score,
                                "Only score this model JSON (any chain, e.g. one trained elsewhere): its MSE and max "
                                "|err| against the target on the data, in MPFR, without fitting");
  auto* output = cmd->add_option("--output", o->output, "Write the fitted model JSON here");
  score->excludes(output);
  score->excludes("--warm-start");
  cmd->add_flag("--json", o->json, "Print the model JSON (with the fit's meta) to stdout");
  cmd->callback([o] { run_fit(*o); });
});

}  // namespace
}  // namespace ctmc::cli
