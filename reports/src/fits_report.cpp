// `ctmc-snn report fits`: least-squares fits of CTMC families to activations
// (paper section 3.2, eq. 3; Figure 2; Appendix B's fully connected
// three-state example), a second-optimizer check of every row, a seed sweep
// (the whole table from other seeds), the "states needed" table against the
// Bernstein construction, and Figure-2-style plots.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

#include "ctmc/analysis/fit_tables.hpp"
#include "ctmc/reports/registry.hpp"
#include "ctmc/reports/writer.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/stationary.hpp"

namespace ctmc::reports {
namespace {

using analysis::FitFamily;
using analysis::FitRow;

constexpr int kStarts = 64;          // main table, per row (issue 4)
constexpr int kStatesStarts = 32;    // states-needed fits (general 2..6 states)
constexpr int kSweepSeeds = 4;       // seed sweep: the whole table again from seeds s+1..s+4
using analysis::kBeatFloor;
using analysis::kBeatTolerance;

std::string params_text(const analysis::FitResult& r) {
  if (r.params.size() > 12) return fmt::format("{} parameters (see model file)", r.params.size());
  std::string s;
  for (std::size_t i = 0; i < r.params.size(); ++i)
    s += fmt::format("{}{}={}", i ? ", " : "", r.params[i].name, fmt_g(r.theta[i], 5));
  return s;
}

std::string model_stem(const FitRow& row) {
  return fmt::format("model_{}_{}", row.target.slug, analysis::family_name(row.family));
}

std::string model_file(const FitRow& row) { return model_stem(row) + ".json"; }

// The model of a row's fit from another seed (the seed sweep).
std::string seed_model_file(const FitRow& row, std::uint64_t seed) {
  return fmt::format("{}_seed{}.json", model_stem(row), seed);
}

// Flux of a fitted model on the fit grid (double GTH on the exact model).
std::vector<double> flux_curve(const solvers::Model& m, const analysis::FitData& d) {
  std::vector<double> f;
  for (const auto& h : d.h_exact) f.push_back(solvers::solve_stationary<double>(m, h).flux);
  return f;
}

void plot_target(ReportWriter& w, const std::vector<const FitRow*>& rows) {
  const auto& t = rows.front()->target;
  const auto p = analysis::make_fit_problem(t, rows.front()->family);
  const double alpha = solvers::to_double(p.alpha);
  Plot plot;
  plot.name = "fit_" + t.slug;
  plot.title = fmt::format("{} on [{}, {}]: fitted stationary flux nu(H)", t.label, t.lo, t.hi);
  plot.xlabel = "H";
  plot.ylabel = "rate";
  plot.y2label = "residual nu - alpha phi";
  Series target;
  target.x = p.data.h;
  target.title = t.alpha == "1" ? "phi (target)" : fmt::format("{} phi (target)", t.alpha);
  for (double h : p.data.h) target.y.push_back(alpha * p.activation.eval<double>(h));
  target.extra = "lw 3 lc rgb 'black'";
  plot.series.push_back(target);
  for (const auto* row : rows) {
    const auto f = flux_curve(row->result.model, p.data);
    Series nu;
    nu.title = fmt::format("nu, {}", analysis::family_name(row->family));
    nu.x = p.data.h;
    nu.y = f;
    nu.extra = "dt 2 lw 2";
    Series res;
    res.title = fmt::format("residual, {}", analysis::family_name(row->family));
    res.x = p.data.h;
    for (std::size_t m = 0; m < f.size(); ++m) res.y.push_back(f[m] - target.y[m]);
    res.axis = 2;
    res.extra = "lw 1";
    plot.series.push_back(nu);
    plot.series.push_back(res);
  }
  w.plot(plot);
}

int run(const ReportContext& ctx) {
  ReportWriter w(ctx, "fits", "CTMC neuron fits to activations (paper eq. 3, Figure 2, Appendix B)");
  const auto targets = analysis::fit_table_targets();
  const auto families = analysis::fit_table_families();
  analysis::FitOptions opt;
  opt.starts = kStarts;
  opt.seed = ctx.seed;
  opt.threads = ctx.threads;
  opt.mpfr_bits = ctx.precision;  // the re-evaluation precision is the report's --precision
  const analysis::FitBounds bounds;
  const auto& tuning = analysis::search_tuning();

  w.paragraph(fmt::format(
      "Least-squares fits (paper eq. 3) of the stationary spike flux nu_theta(H) of each family to alpha * phi(H) "
      "on a 401-point uniform grid. Every input-dependent rate is rectified affine max(0, p + s H); constant rates "
      "are single parameters. **Bounds (part of each fit's definition):** offsets and slopes in [-{0}, {0}], "
      "constant rates in [{1}, {0}]. Ceres Levenberg-Marquardt with bounds and an analytic Jacobian "
      "(hand-derived derivatives of the two-, three- and full-three-state closed forms; for the general family the "
      "adjoint of the stationary equations with pi from GTH; both tested against automatic differentiation on "
      "ceres::Jet and finite differences). {2} seeded starts per row (seed {3}), the best {4} polished with 10x "
      "the iterations. The starts and the basin hopping below "
      "run on an exploration grid of {13} of the 401 points (every 4th, carrying its neighbours' weights: a "
      "quarter of the cost per solve), and the best {14} distinct minima found there, with the chains' ends, are "
      "then solved on the full grid (the 'within 1%' column compares the starts there, on the exploration "
      "grid); a general-family fit is polished there again while that improves it (at most {19} times: the "
      "transferred fit can still be crawling along a valley). Monotonic basin hopping from the best starts: "
      "{18} rounds for the general family (its chains of {7} rounds on the full grid were far too short, and the "
      "exploration grid's solves cost a quarter), {8} for the closed-form families, of {9} seeded perturbations "
      "(rates moved by {10} of their size, or some or all rates redrawn from the start distribution), each "
      "solved like a start, the best kept if it improves the fit (and polished, except on the exploration "
      "grid, where only the chains' ends are, on the full grid); {15} chains from the best {15} starts where "
      "fewer than an eighth of the starts agree within 1% (closed-form families), else one. For "
      "full-three-state, each new point of a chain is also tried with states exchanged (B with G, B with R; "
      "re-solved): not a symmetry, since spikes count on the transitions into B, but it maps a minimum where G "
      "or R paces the spikes onto one where B does (sigmoid on the exploration grid: its 2.69e-6 minimum onto "
      "the 1.85e-6 one). On the full grid, the kinks H0 = -p/s of the fit's "
      "rectified rates are moved one grid interval left and right and the fit re-solved, repeatedly while "
      "that improves it (the objective is smooth only between kink placements, and a trust-region method stops "
      "at the best point of the piece it ends in); for the closed-form families then {11} rounds of "
      "{9} small moves (rates moved by {12} of their size) of the best fit, accepted the same way (the chains "
      "find a funnel, but not always the best of its near-equal minima). Then, for full-three-state and the "
      "general family, up to {20} rounds of time-scale moves: every state's exit rates (offsets and slopes, so "
      "the kinks stay) scaled by {21}, which changes only the time spent in that state; the candidates are "
      "re-solved on the full grid (general family: ranked on the exploration grid with the starts' settings, "
      "the best {22} re-solved; full-three-state: the lowest also kink-hopped), and the best is kept if it "
      "lowers the MSE by at least {23:g} relative (softplus full-three-state at seed 1: 1.1205e-5 to 1.0007e-5 "
      "in three moves, state G left much faster). Last, a full-three-state fit with a "
      "rate above {16:g} x max |alpha phi| on its domain is re-solved with all such rates slowed by one common "
      "factor, so that the fastest becomes {17} x max |alpha phi| (kinks kept; the kinks then hopped where the "
      "re-solved fit has no fast rate left and is within 2x of the fit), and the best is kept if it improves the "
      "fit: a bridge out of minima in which one state is a fast relay (softplus x 1/14: from 3.2417e-8, rates "
      "up to ~7000, to 3.1574e-8 with every rate below 10). One more candidate has those rates sped up by the "
      "largest common factor that keeps their parameters within the bounds: where a relay's optimum lies at "
      "infinite speed, Levenberg-Marquardt stalls in the nearly flat valley short of the bound (softplus x 1/14 "
      "at seed 18: 3.1105e-8, sped up and re-solved 3.1037e-8 on the bound). MSE and max |error| re-evaluated in "
      "MPFR ({5} bits) on the exact rational parameters of the written model. "
      "Where the best fit has a parameter on a bound the row is refitted with bounds x10 and x100 "
      "(warm-started from the bounded optimum, with an eighth of the starts (at least 8) and no hopping or "
      "moves; a general row's refit is polished once on the full grid, so its MSE is an upper bound on the "
      "wider bounds' optimum), except where its MSE is already at the rounding floor "
      "(below {6:g} x mean((alpha phi)^2): an exact fit up to double rounding, which wider bounds cannot "
      "improve; the table says so). The general-n families are nested (a state with no rate into it is "
      "transient), so a general-n row also starts once from the (n-1)-state optimum (full-three-state for n = 4) "
      "embedded into n states; where that start is already exact (at the rounding floor) it is the answer and "
      "the random starts are skipped (the 'within 1%' column says so). A general-5 row also starts from the "
      "splits of the general-4 optimum: a state k other than S0 (into which spikes go) split in two, the new "
      "state leaving as k does and receiving {24} of every rate into k (k keeps the rest), the two exchanging "
      "at k's total exit rate at mid-domain. The two states lump exactly, so each split has the general-4 "
      "flux, but unlike the transient state every rate has a gradient there.",
      bounds.rate_bound, bounds.min_const_rate, kStarts, ctx.seed, opt.polish, opt.mpfr_bits,
      analysis::kRoundingFloor, opt.basin_rounds, tuning.closed_form_basin_factor * opt.basin_rounds, opt.basin_candidates, opt.basin_sigma,
      opt.local_rounds, opt.local_sigma, opt.explore_points, tuning.exploration_pool, opt.basin_chains,
      tuning.fast_rate, fmt::join(tuning.slowed_rate_targets, ", "),
      tuning.general_basin_factor * opt.basin_rounds, opt.general_repolish, tuning.time_scale_rounds,
      fmt::join(tuning.time_scale_factors, ", "), tuning.time_scale_polished, tuning.time_scale_min_gain,
      1 - analysis::kSplitShare));

  const auto t0 = std::chrono::steady_clock::now();
  const auto rows = analysis::run_fit_table(targets, families, opt);
  const double main_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Second check: a different optimizer (dogleg with non-monotonic steps)
  // from twice as many starts drawn from an independent seed.
  const analysis::FitOptions check = analysis::second_check_options(opt);
  const auto t1 = std::chrono::steady_clock::now();
  const auto checks = analysis::run_fit_table(targets, families, check);
  const double check_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();

  // Seed sweep: the same fitter (same options, so also the general rows'
  // warm starts from their (n-1)-state rows) from other seeds. Where the
  // fit depends on the seed, the row is not its family's optimum.
  std::vector<std::vector<FitRow>> sweep;
  std::vector<std::uint64_t> sweep_seeds;
  const auto t_sweep = std::chrono::steady_clock::now();
  for (int k = 1; k <= kSweepSeeds; ++k) {
    analysis::FitOptions o = opt;
    o.seed = ctx.seed + static_cast<std::uint64_t>(k);
    sweep_seeds.push_back(o.seed);
    sweep.push_back(analysis::run_fit_table(targets, families, o));
  }
  const double sweep_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_sweep).count();

  Table main;
  main.columns = {"target", "family", "domain", "MSE", "max |err|", "within 1% of best", "on bound",
                  "MSE bounds x10", "MSE bounds x100", "MSE, second check", kPaperColumn, "parameters",
                  "model"};
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  int beaten = 0, small_beaten = 0;
  std::vector<std::string> beaten_rows, exact_rows;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const auto& r = row.result;
    const auto& c = checks[i].result;
    const bool beat = analysis::check_beats(c.mse, r.mse);
    beaten += beat;
    // Families with many local optima state the best MSE known (an upper
    // bound): a second optimizer beating them is a diagnostic (issue 20's
    // decision); on the two- and three-state families it is an error.
    small_beaten += beat && (row.family.family == analysis::FitFamily::TwoState ||
                             row.family.family == analysis::FitFamily::ThreeState);
    if (beat) {
      // The check's lower fit, written beside the row's (as the seed sweep's are).
      const std::string file = model_stem(row) + "_check.json";
      w.write_json(file, solvers::model_to_json(c.model));
      beaten_rows.push_back(fmt::format("{} / {} ({} -> {}, {})", row.target.label, analysis::family_name(row.family),
                                        fmt_sci(r.mse), fmt_sci(c.mse), file));
    }
    if (r.mse < kBeatFloor)
      exact_rows.push_back(fmt::format("{} / {}", row.target.label, analysis::family_name(row.family)));
    std::optional<double> paper;
    if (row.target.paper_mse &&
        (row.target.paper_family.empty() ? row.family.family != FitFamily::FullThreeState &&
                                               row.family.family != FitFamily::General
                                         : row.target.paper_family == analysis::family_name(row.family)))
      paper = row.target.paper_mse;
    std::string paper_text = paper ? fmt_sci(*paper, 2) : kNoPaperValue;
    if (paper && row.target.paper_family.empty()) paper_text += " (low-state variant, family not stated)";
    const auto widened = [&](std::size_t k) {
      if (k < r.widened.size())
        return fmt_sci(r.widened[k].mse) + (r.widened[k].on_bound.empty() ? "" : " (on bound)");
      if (!r.on_bound.empty() && r.mse_at_rounding_floor)
        return std::string("not refitted: MSE at the rounding floor, cannot decrease");
      return std::string("—");
    };
    main.rows.push_back({row.target.label, analysis::family_name(row.family),
                         fmt::format("[{}, {}]", row.target.lo, row.target.hi), fmt_sci(r.mse), fmt_sci(r.max_abs_error),
                         r.exact_warm_start ? std::string("1/1 (exact warm start; random starts skipped)")
                                            : fmt::format("{}/{}", r.within_1pct, r.starts_run),
                         r.on_bound.empty() ? "no" : fmt::format("{}", fmt::join(r.on_bound, "; ")), widened(0),
                         widened(1), fmt_sci(c.mse) + (beat ? " (better)" : ""), paper_text, params_text(r),
                         model_file(row)});
    w.write_json(model_file(row), solvers::model_to_json(r.model));
    json.push_back({{"target", row.target.label},
                    {"family", analysis::family_name(row.family)},
                    {"domain", {row.target.lo, row.target.hi}},
                    {"alpha", row.target.alpha},
                    {"mse", r.mse},
                    {"max_abs_error", r.max_abs_error},
                    {"within_1pct", r.within_1pct},
                    {"kink_hops", r.kink_hops},
                    {"starts", r.starts_run},
                    {"exact_warm_start", r.exact_warm_start},
                    {"basin_hops", r.basin_hops},
                    {"local_hops", r.local_hops},
                    {"relay_slowdowns", r.relay_slowdowns},
                    {"relay_speedups", r.relay_speedups},
                    {"time_scale_moves", r.time_scale_moves},
                    {"on_bound", r.on_bound},
                    {"mse_widened", [&] {
                       auto a = nlohmann::ordered_json::array();
                       for (const auto& x : r.widened) a.push_back({{"widen", x.widen}, {"mse", x.mse}});
                       return a;
                     }()},
                    {"mse_at_rounding_floor", r.mse_at_rounding_floor},
                    {"check_mse", c.mse},
                    {"paper_mse", paper ? nlohmann::ordered_json(*paper) : nlohmann::ordered_json(nullptr)},
                    {"seconds", row.seconds},
                    {"model", model_file(row)}});
  }
  w.heading("Fits: target x family");
  w.table(main, "fits.csv");
  w.write_json("fits.json", json);
  w.check(fmt::format("second optimizer check: dogleg from {} independent starts (seed {}) does not beat any two- or "
                      "three-state row by more than {:g} relative and {:g} absolute ({} of {} rows beaten, {} of them "
                      "two- or three-state; rows of the families with many local optima state the best MSE known)",
                      check.starts, check.seed, kBeatTolerance, kBeatFloor, beaten, rows.size(), small_beaten),
          small_beaten == 0);
  w.heading("How far the optimum is shown", 3);
  w.paragraph(fmt::format(
      "The second check is plain multistart (no basin hopping or time-scale moves) with Powell's dogleg instead "
      "of Levenberg-Marquardt, from twice the starts drawn from another seed; its general rows, like the main "
      "table's, also start from its own (n-1)-state row's optimum and (general-5) that optimum's splits. Where it "
      "beats a row, its model is written beside the row's (model_..._check.json; `ctmc-snn fit ... "
      "--warm-start FILE` continues from it). "
      "Rows whose best MSE the second check improved on (the multistart optimum is not the global one there): "
      "{}. Rows fitted exactly up to double rounding of the parameters (MSE < {:g}, confirmed by the MPFR "
      "re-evaluation of the exact model): {}. Agreement of independent starts is the 'within 1%' column; the "
      "full-three-state and general families (12-40 parameters) have many local optima, so where the second "
      "check did not beat them their MSE is still an upper bound on the family's best, not a proven optimum.",
      beaten_rows.empty() ? std::string("none") : fmt::format("{}", fmt::join(beaten_rows, "; ")), kBeatFloor,
      exact_rows.empty() ? std::string("none") : fmt::format("{}", fmt::join(exact_rows, "; "))));
  // sigmoid_shift_2(H) = sigmoid(H - 2) on [-4, 8] = [-6, 6] + 2: the offset
  // change p -> p - 2 s maps every fit of one row to a fit of the other with
  // the same MSE (while |p - 2 s| stays within the bound), so both rows have
  // the same optimum and their gap measures how far the multistart is from it.
  std::vector<std::string> shift_pairs;
  for (const auto& a : rows)
    for (const auto& b : rows)
      if (a.target.slug == "sigmoid" && b.target.slug == "sigmoid_shift_2" &&
          analysis::family_name(a.family) == analysis::family_name(b.family) &&
          std::max(a.result.mse, b.result.mse) > kBeatFloor)
        shift_pairs.push_back(fmt::format("{}: {} vs {} (ratio {})", analysis::family_name(a.family),
                                          fmt_sci(a.result.mse), fmt_sci(b.result.mse),
                                          fmt_g(std::max(a.result.mse, b.result.mse) /
                                                    std::min(a.result.mse, b.result.mse), 3)));
  w.paragraph(fmt::format(
      "Translation test: sigmoid_shift_2 on [-4, 8] is sigmoid on [-6, 6] moved right by 2, and the offset change "
      "p -> p - 2s maps the fits of one row onto the other with the same MSE, so each family has the same optimum "
      "on both rows. MSE sigmoid vs sigmoid_shift_2 per family: {}. Where the two differ, the lower value is an upper "
      "bound for both rows and the higher row is not at its family's optimum.",
      shift_pairs.empty() ? std::string("(rows missing)") : fmt::format("{}", fmt::join(shift_pairs, "; "))));
  {
    Table sw;
    sw.columns = {"target", "family", fmt::format("MSE, seed {} (table)", ctx.seed)};
    for (auto s : sweep_seeds) sw.columns.push_back(fmt::format("MSE, seed {}", s));
    sw.columns.insert(sw.columns.end(), {"best", "table / best", "best model"});
    auto sweep_json = nlohmann::ordered_json::array();
    std::vector<std::string> lower;
    int inexact = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& row = rows[i];
      if (row.result.mse < kBeatFloor) continue;  // exact up to rounding: every seed agrees
      ++inexact;
      std::vector<std::string> cells = {row.target.label, analysis::family_name(row.family), fmt_sci(row.result.mse)};
      auto seeds_json = nlohmann::ordered_json::array({{{"seed", ctx.seed}, {"mse", row.result.mse}}});
      double best = row.result.mse;
      int best_k = -1;
      for (std::size_t k = 0; k < sweep.size(); ++k) {
        const double m = sweep[k][i].result.mse;
        cells.push_back(fmt_sci(m));
        seeds_json.push_back({{"seed", sweep_seeds[k]}, {"mse", m}});
        if (m < best) {
          best = m;
          best_k = static_cast<int>(k);
        }
      }
      const bool beaten_by_seed = best_k >= 0 && analysis::check_beats(best, row.result.mse);
      std::string file = "—";
      if (beaten_by_seed) {
        const auto& b = sweep[static_cast<std::size_t>(best_k)][i];
        file = seed_model_file(row, sweep_seeds[static_cast<std::size_t>(best_k)]);
        w.write_json(file, solvers::model_to_json(b.result.model));
        lower.push_back(fmt::format("{} / {} ({} at seed {}, x{})", row.target.label, analysis::family_name(row.family),
                                    fmt_sci(best), sweep_seeds[static_cast<std::size_t>(best_k)],
                                    fmt_g(row.result.mse / best, 3)));
      }
      cells.insert(cells.end(), {fmt_sci(best), fmt_g(row.result.mse / best, 4), file});
      sw.rows.push_back(cells);
      sweep_json.push_back({{"target", row.target.label},
                            {"family", analysis::family_name(row.family)},
                            {"seeds", seeds_json},
                            {"best_mse", best},
                            {"best_model",
                             beaten_by_seed ? nlohmann::ordered_json(file) : nlohmann::ordered_json(nullptr)}});
    }
    w.heading("Seed sweep: the same fitter from other seeds", 3);
    w.paragraph(fmt::format(
        "Every row again with seeds {} (same options; {} starts each), for the {} rows not fitted exactly. A "
        "row that another seed lowers by more than {:g} relative is not its family's optimum: the multistart "
        "with basin hopping ends in different funnels from different seeds. This is a diagnostic, not a "
        "check: the table stays the documented fit at seed {} (`report fits --seed` reproduces any column), and "
        "the lower fits are written as model files beside it (`ctmc-snn fit ... --warm-start FILE` continues from "
        "one). Rows lowered by another seed ({} of {}): {}.",
        fmt::join(sweep_seeds, ", "), kStarts, inexact, kBeatTolerance, ctx.seed, lower.size(), inexact,
        lower.empty() ? std::string("none") : fmt::format("{}", fmt::join(lower, "; "))));
    w.table(sw, "seed_sweep.csv");
    w.write_json("seed_sweep.json", sweep_json);
  }
  for (const auto& row : rows)
    w.check(fmt::format("{} / {}: every parameter within its bounds, constant rates > 0", row.target.label,
                        analysis::family_name(row.family)),
            analysis::parameters_outside_bounds(row.result.params, row.result.theta, bounds).empty());

  // Comparison with the paper.
  const FitRow* fc = nullptr;
  double fc_best = 0;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].target.slug == "softplus_x_1_14" && rows[i].family.family == FitFamily::FullThreeState) {
      fc = &rows[i];
      // The lowest MSE known for the row: the second check's or a swept
      // seed's where one beat the multistart (reported above).
      fc_best = std::min(rows[i].result.mse, checks[i].result.mse);
      for (const auto& s : sweep) fc_best = std::min(fc_best, s[i].result.mse);
    }
  std::string scale_note;
  if (fc) {
    // Multiplying every rate by k multiplies nu by k (DESIGN section 4), so
    // with bounds not binding MSE(alpha) = (alpha / (1/14))^2 MSE(1/14).
    const double a_eq = (1.0 / 14.0) * std::sqrt(2.39e-4 / fc_best);
    scale_note = fmt::format(
        " For Appendix B's fully connected three-state example we fit (1/14) softplus on [-26, 14] (alpha = 1/14 "
        "makes the target peak at softplus(14)/14 = 1.00000006; the paper does not state its alpha). Scaling every "
        "rate by k scales nu by k, so as long as the bounds do not bind the family's best MSE is proportional to "
        "alpha^2: the lowest MSE we know at alpha = 1/14, {}{}, would equal the paper's 2.39e-4 at alpha = {}, i.e. "
        "max target {}. The paper's text does not say which alpha it used, so this only shows that its value is "
        "within the family's reach at some scale; at the same alpha our fit is better whenever alpha < {}.",
        fmt_sci(fc_best),
        fc_best < fc->result.mse
            ? " (found by the second check or the seed sweep; the table's row has " + fmt_sci(fc->result.mse) + ")"
            : std::string(""),
        fmt_g(a_eq, 4), fmt_g(a_eq * 14.0, 4), fmt_g(a_eq, 4));
  }
  w.heading("Comparison with the paper");
  w.paragraph(
      "The paper reports MSE 1.1e-3 (sigmoid, three-state), 2.4e-3 (ReLU), 1.1e-2 (softplus) and 2.7e-3 "
      "(ClipReLU10), the last three with \"the low-state variant used in the implementation\" (two- or "
      "three-state, not specified), and states neither its domains nor its rate bounds, so its values are "
      "context, not a pass mark. Differences are explained by domains and bounds: for ReLU the infimum MSE of "
      "both low-state families is 0 (a = max(0, H), the other rates -> infinity), so a ReLU row is set by the "
      "rate bound (see the on-bound and widened-bound columns); for ClipReLU and softplus the fitted MSE grows "
      "with the width of the domain above the kink, so a wider or narrower operating range moves it by large "
      "factors. Our sigmoid three-state MSE on [-6, 6] (bounds not binding beyond the refractory rate d, whose "
      "widening changes the MSE by < 0.1%) is directly comparable with the paper's 1.1e-3." +
      scale_note);

  // Plots: one per target, every family.
  w.heading("Plots (as in the paper's Figure 2: target, fitted nu, residual on the right axis)");
  for (const auto& t : targets) {
    std::vector<const FitRow*> rs;
    for (const auto& row : rows)
      if (row.target.slug == t.slug) rs.push_back(&row);
    plot_target(w, rs);
  }

  // States needed.
  const std::vector<double> tols = {1e-1, 1e-2, 1e-3};
  analysis::FitOptions sopt = opt;
  sopt.starts = kStatesStarts;
  const auto t2 = std::chrono::steady_clock::now();
  const auto needed = analysis::run_states_needed(targets, 2, 6, tols, sopt);
  const double states_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t2).count();
  Table st;
  st.columns = {"target", "domain"};
  for (double tol : tols) {
    st.columns.push_back(fmt::format("states, max err <= {:g}", tol));
    st.columns.push_back(fmt::format("Bernstein 2(N+1), {:g}", tol));
  }
  for (std::size_t n = 2; n <= 6; ++n) st.columns.push_back(fmt::format("max err, {} states", n));
  for (const auto& row : needed) {
    std::vector<std::string> cells = {row.target.label, fmt::format("[{}, {}]", row.target.lo, row.target.hi)};
    for (std::size_t k = 0; k < tols.size(); ++k) {
      cells.push_back(row.min_states[k] ? std::to_string(*row.min_states[k]) : "> 6");
      cells.push_back(row.bernstein_degree[k] ? fmt_int(2 * (static_cast<long long>(*row.bernstein_degree[k]) + 1))
                                              : "> 2^24");
    }
    for (double e : row.max_abs_error) cells.push_back(fmt_sci(e));
    st.rows.push_back(cells);
  }
  w.heading("States needed (the open question after the paper's corollary)");
  w.paragraph(fmt::format(
      "Smallest number of states n (general family: complete graph on n states, every rate rectified affine, "
      "spikes on the transitions into state 0) whose least-squares fit ({} starts, same bounds, no widening) "
      "reaches the stated max |error| on the 401-point grid, next to the 2(N+1) states of the theorem's "
      "Bernstein chain with kappa_i = h(i/N), rho = 2 max(alpha phi), for the same sup error. The Bernstein N is "
      "a lightweight double-precision estimate: sup over 4001 grid points in u plus the target's kinks, N found by "
      "doubling and bisection (not a certified bound; see the theorem report for certified values).",
      kStatesStarts));
  w.table(st, "states_needed.csv");

  w.heading("Timing");
  w.paragraph(fmt::format(
      "Main table ({} rows x {} starts, incl. widened refits): {:.1f} s; second check (dogleg, {} starts per "
      "row): {:.1f} s; seed sweep ({} more tables): {:.1f} s; states-needed table: {:.1f} s (threads: {}).",
      rows.size(), kStarts, main_seconds, check.starts, check_seconds, kSweepSeeds, sweep_seconds, states_seconds,
      ctx.threads == 0 ? std::string("all cores") : std::to_string(ctx.threads)));
  w.finish();
  return w.exit_status();
}

}  // namespace

ReportDef fits_report_def() {
  return {"fits", "Fits of CTMC families to activations (eq. 3), states needed vs Bernstein", run};
}

}  // namespace ctmc::reports
