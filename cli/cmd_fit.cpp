// ctmc-snn fit --activation NAME --domain LO,HI --family F [--states n]
//   [--points M] [--samples FILE] [--weights FILE] [--starts S] [--seed S]
//   [--threads T] [--alpha A] [--rate-bound R] [--basin-rounds K]
//   [--gradient analytic|jet] [--warm-start model.json] [--output model.json]
//   [--json]
// ctmc-snn fit --activation NAME --domain LO,HI --score model.json [--certify] [--json]
//   (the model's MSE and max error against the target, no fit; --certify
//   adds the certified sup error over the domain and, for a two- or
//   three-state chain, the certified bound on its family's optimum)
//
// Least-squares fit of a CTMC family's stationary flux to alpha * phi (paper
// eq. 3); see analysis/include/ctmc/analysis/fit.hpp for the method, bounds and
// the meaning of every reported figure.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "command.hpp"
#include "ctmc/commands/output_path.hpp"
#include "ctmc/io/same_file.hpp"
#include "ctmc/analysis/fit.hpp"
#include "ctmc/analysis/fit_tables.hpp"
#include "ctmc/commands/fit.hpp"
#include "ctmc/commands/fit_certificates.hpp"

namespace ctmc::cli {
namespace {

struct FitCliOptions {
  commands::FitCommandOptions opt;
  std::string warm_start, score;
  bool no_widen = false;
  bool json = false;
};

void print_certificates(const commands::CertifyRun& c, const analysis::FitProblem& p) {
  if (c.sup) {
    const auto& s = *c.sup;
    fmt::print("sup |err|   {:.6e} certified over [{}, {}]{} (proven >= {:.6e} at H = {:.6g}; {} cells)\n", s.upper,
               solvers::to_string(p.data.lo), solvers::to_string(p.data.hi), s.converged ? "" : " (not tight to 1%)",
               s.lower, s.argmax, s.cells);
  } else {
    fmt::print("sup |err|   undefined: {}\n", c.sup_error);
  }
  if (!c.optimum) {
    fmt::print("optimum     not certified (only for two- and three-state chains)\n");
    return;
  }
  const auto& r = *c.optimum;
  std::string verdict;
  if (r.certified) verdict = fmt::format("global optimum within {:g}% certified", 100 * r.rel_gap);
  else if (r.lower_bound > 0) verdict = fmt::format("gap {:.3g}% not closed (target {:g}%)", 100 * r.gap, 100 * r.rel_gap);
  else verdict = fmt::format("no bound above 0 yet (target {:g}%)", 100 * r.rel_gap);
  fmt::print("optimum     {} family within the bounds: {} (lower bound {:.6e}, {} boxes{}, {:.1f} s)\n",
             analysis::family_name(*c.family), verdict, r.lower_bound, r.boxes,
             r.exhausted ? ", budget exhausted" : "", r.seconds);
  // Every box of the branch and bound accounted for (fit_optimality.hpp).
  fmt::print("  boxes     {} roots + 2 x {} split = {} pruned ({} as mirror images) + {} split + {} unsplittable + {} "
             "open; {} shrunk to a face\n",
             r.roots, r.split, r.pruned, r.mirrored, r.split, r.unsplittable, r.open, r.shrunk);
  if (!r.best_centre.empty()) {
    fmt::print("  improved  the search found MSE {:.6e} below the fit's (parameters {:.17g})\n", r.incumbent,
               fmt::join(r.best_centre, ", "));
    // The bound holds for the family's optimum and the point found is an
    // upper bound of it (its MSE enclosed in interval arithmetic).
    if (r.lower_bound > 0)
      fmt::print("  optimum   in [{:.6e}, {:.6e}] (the point found is within {:.3g}% of the optimum)\n", r.lower_bound,
                 r.incumbent, 100 * (r.incumbent / r.lower_bound - 1));
  }
}

void score_model(const FitCliOptions& c) {
  const auto& o = c.opt;
  // Certified before anything is printed: a bad --certify exits 2 with no output.
  const auto s = commands::run_score(o);
  if (c.json) {
    fmt::print("{}\n", commands::to_json(o, s).dump(2));
    return;
  }
  const auto& p = s.problem;
  fmt::print("model       {} ({} states, {} transitions)\n", c.score, s.model.size(), s.model.transitions.size());
  fmt::print("target      {} * {}\n", o.alpha, p.activation.name);
  fmt::print("data        {}\n", p.data.description);
  fmt::print("MSE         {:.6e}   (MPFR {} bits)\n", s.errors.mse, o.search.mpfr_bits);
  fmt::print("max |err|   {:.6e} at H = {:.6g}\n", s.errors.max_abs_error, s.errors.max_abs_error_at);
  if (s.certificates) print_certificates(*s.certificates, p);
}

void print_warm_start(const FitCliOptions& c, const commands::FitCommandResult& out) {
  const auto& fo = out.run.options;
  const auto& r = out.run.result;
  fmt::print("warm start  {}: MSE {:.6e} as given\n", c.warm_start, *out.run.warm_mse);
  if (!fo.seeded_starts.empty())
    fmt::print("  a {}-state chain, embedded in {} states; its splits are starts 1-{}\n", out.run.warm_states,
               analysis::state_count(out.problem.family), fo.seeded_starts.size());
  if (!r.warm_start_clamped.empty())
    fmt::print("  clamped into the bounds: {}\n", fmt::join(r.warm_start_clamped, ", "));
}

void print_fit(const FitCliOptions& c, const commands::FitCommandResult& out) {
  const auto& o = c.opt;
  const auto& p = out.problem;
  const auto& r = out.run.result;
  fmt::print("family      {}\n", analysis::family_name(r.family));
  fmt::print("target      {} * {}\n", o.alpha, p.activation.name);
  fmt::print("data        {}\n", p.data.description);
  fmt::print("bounds      offsets and slopes in [{}, {}], constant rates in [{}, {}]\n",
             p.bounds.lower(analysis::ParamKind::Offset), p.bounds.upper(analysis::ParamKind::Offset),
             p.bounds.lower(analysis::ParamKind::ConstRate), p.bounds.upper(analysis::ParamKind::ConstRate));
  fmt::print("MSE         {:.6e}   (MPFR {} bits)\n", r.mse, o.search.mpfr_bits);
  fmt::print("max |err|   {:.6e} at H = {:.6g}\n", r.max_abs_error, r.max_abs_error_at);
  if (out.run.warm_mse) print_warm_start(c, out);
  if (r.exact_warm_start)
    fmt::print("starts      1 (the warm start is exact up to rounding; random starts skipped)\n");
  else
    fmt::print("starts      {} (seed {}), {} within 1% of the best MSE (best: start {})\n", o.search.starts,
               o.search.seed, r.within_1pct, r.best_start);
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
  if (out.certificates) print_certificates(*out.certificates, p);
  if (!o.output.empty()) fmt::print("model       {}\n", o.output);
}

void run_fit(FitCliOptions& c) {
  auto& o = c.opt;
  o.search.widen_on_bound = !c.no_widen;
  if (!o.output.empty()) {
    const std::string table = o.activation.rfind("table:", 0) == 0 ? o.activation.substr(6) : std::string();
    io::refuse_outputs_over_inputs({{"--output", o.output}}, {o.samples, o.weights, c.warm_start, c.score, table});
  }
  if (!c.warm_start.empty()) o.warm_start = commands::model_file(c.warm_start);
  if (!c.score.empty()) o.score = commands::model_file(c.score);
  commands::check_fit_options(o);
  if (!o.output.empty()) commands::check_output_path(o.output, "--output");
  if (o.score) {
    score_model(c);
    return;
  }
  const auto out = commands::run_fit(o);
  if (c.json)
    fmt::print("{}\n", commands::to_json(out).dump(2));
  else
    print_fit(c, out);
}

Register reg([](CLI::App& root) {
  auto o = std::make_shared<FitCliOptions>();
  auto* cmd = root.add_subcommand("fit", "Fit a CTMC family's stationary flux to alpha * activation (paper eq. 3)");
  cmd->add_option("--activation", o->opt.activation, activations::activation_names_help())->required();
  cmd->add_option("--domain", o->opt.domain, "Input interval LO,HI (grid domain; with --samples, a filter)");
  cmd->add_option("--family", o->opt.family, "two-state | three-state | full-three-state | general")
      ->capture_default_str();
  cmd->add_option("--states", o->opt.states, "Number of states of the general family (2..6; default 4)")
      ->check(kNoMinus);
  cmd->add_option("--points", o->opt.points, "Uniform grid points")
      ->check(kNoMinus)->capture_default_str();
  cmd->add_option("--samples", o->opt.samples, "File of preactivations H, one per line (instead of the grid)");
  cmd->add_option("--weights", o->opt.weights, "File of weights >= 0: one per grid point, or one per value of --samples, in its order (filtered with them by --domain)");
  cmd->add_option("--starts", o->opt.search.starts, "Multistart count")->capture_default_str();
  cmd->add_option("--seed", o->opt.search.seed, "Seed of the starting points")
      ->check(kNoMinus)->capture_default_str();
  cmd->add_option("--threads", o->opt.search.threads, "Threads (0: all cores, or OMP_NUM_THREADS if set); results do not depend on it")
      ->capture_default_str();
  cmd->add_option("--alpha", o->opt.alpha, "Target scale alpha_fit (fixed, stored in the model's meta)")
      ->capture_default_str();
  cmd->add_option("--rate-bound", o->opt.bounds.rate_bound, "Bound R: offsets, slopes in [-R, R], constant rates <= R")
      ->capture_default_str();
  cmd->add_option("--min-rate", o->opt.bounds.min_const_rate, "Lower bound of the constant rates")->capture_default_str();
  cmd->add_option("--max-iterations", o->opt.search.max_iterations, "Levenberg-Marquardt iterations per start")
      ->capture_default_str();
  cmd->add_option("--basin-rounds", o->opt.search.basin_rounds,
                  fmt::format("Basin-hopping rounds after the multistart (x{} for the closed-form families, x{} for "
                              "general on a subsample of the points; 0: none)",
                              analysis::search_tuning().closed_form_basin_factor,
                              analysis::search_tuning().general_basin_factor))
      ->capture_default_str();
  cmd->add_option("--gradient", o->opt.gradient, "Jacobian: analytic, or jet (automatic differentiation, slower)")
      ->capture_default_str();
  cmd->add_option("--precision", o->opt.search.mpfr_bits, "MPFR bits of the MSE / max error re-evaluation")
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
  auto* output = cmd->add_option("--output", o->opt.output, "Write the fitted model JSON here");
  score->excludes(output);
  score->excludes("--warm-start");
  cmd->add_flag("--certify", o->opt.certify,
                "Certify the scored or fitted chain: its sup |err| over the whole --domain (MPFI, tight to 1%), and "
                "for a two- or three-state chain a lower bound on that family's optimum within the bounds (interval "
                "branch and bound; with --score and --family the chain must be of that family)");
  cmd->add_flag("--json", o->json, "Print the model JSON (with the fit's meta) to stdout");
  cmd->callback([o, cmd] {
    o->opt.family_given = cmd->get_option("--family")->count() > 0;
    run_fit(*o);
  });
});

}  // namespace
}  // namespace ctmc::cli
