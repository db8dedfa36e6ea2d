// `ctmc-snn report fits`: least-squares fits of CTMC families to activations
// (paper section 3.2, eq. 3; Figure 2; Appendix B's fully connected
// three-state example), a second-optimizer check of every row, a seed sweep
// (the whole table from other seeds), the certificates of issue 20 (global
// optimality of the two-state rows, the three-state bound reached, the sup
// error of every row over its whole domain), the "states needed" table
// against the Bernstein construction, and Figure-2-style plots.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <nlohmann/json.hpp>

#include "ctmc/analysis/fit_tables.hpp"
#include "ctmc/reports/fit_certificates.hpp"
#include "certificate_budgets.hpp"
#include "progress.hpp"
#include "ctmc/reports/registry.hpp"
#include "ctmc/reports/writer.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/stationary.hpp"

namespace ctmc::reports {
namespace {

using analysis::FitFamily;
using analysis::FitRow;

constexpr int kStarts = 64;          // main table, per row (issue 4)
constexpr int kStatesStarts = 24;    // states-needed fits (general 2..6 states; each also starts from the (n-1)-state optimum and its splits)
constexpr int kSweepSeeds = 3;       // seed sweep: the whole table again from seeds s+1..s+3 (with the fits report under a third of report all)
// Cells of the certified sup error: the rows fitted exactly (errors at the
// rounding level, ~1e-16 on the grid) stall near 1e-9 where the enclosure
// of nu meets double rounding; more cells cost seconds and lower the bound
// little. The states-needed search stops below 1e-3 anyway.
constexpr std::int64_t kTableSupCells = 60000;
constexpr std::int64_t kNeededSupCells = 30000;
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

// One line per search move (analysis::search_moves), in the order the fitter
// runs them, with the families of the table that run it.
std::vector<std::string> search_move_lines() {
  std::vector<std::string> order;
  // (name, description) -> families
  std::vector<std::pair<std::pair<std::string, std::string>, std::vector<std::string>>> lines;
  for (const auto& f : analysis::fit_table_families())
    for (const auto& m : analysis::search_moves(f)) {
      auto it = std::find_if(lines.begin(), lines.end(), [&](const auto& l) {
        return l.first.first == m.name && l.first.second == m.description;
      });
      if (it == lines.end()) {
        lines.push_back({{m.name, m.description}, {}});
        it = lines.end() - 1;
      }
      it->second.push_back(analysis::family_name(f));
      if (std::find(order.begin(), order.end(), m.name) == order.end()) order.push_back(m.name);
    }
  std::vector<std::string> out;
  for (const auto& name : order)
    for (const auto& [key, fams] : lines)
      if (key.first == name)
        out.push_back(fmt::format("**{}** ({}): {}", name,
                                  fams.size() == analysis::fit_table_families().size() ? std::string("all families")
                                                                                       : fmt::format("{}", fmt::join(fams, ", ")),
                                  key.second));
  return out;
}

std::string fmt_g_list(const std::vector<double>& v) {
  std::vector<std::string> s;
  for (double x : v) s.push_back(fmt_g(x, 6));
  return fmt::format("({})", fmt::join(s, ", "));
}

// The methods section: one bullet per step, the constants from the code.
std::string methods_text(const analysis::FitOptions& opt, const analysis::FitBounds& bounds) {
  std::string s = fmt::format(
      "- **Objective** (paper eq. 3): mean squared difference between the stationary spike flux nu_theta(H) and "
      "alpha phi(H) on a 401-point uniform grid. Every input-dependent rate is max(0, p + s H); constant rates "
      "are single parameters.\n"
      "- **Bounds** (part of each fit's definition): offsets and slopes in [-{0}, {0}], constant rates in "
      "[{1}, {0}]. A row with a parameter on a bound is refitted with bounds x10 and x100 (warm-started from the "
      "bounded optimum), unless its MSE is at the rounding floor ({2:g} x mean (alpha phi)^2).\n"
      "- **Solver:** Ceres Levenberg-Marquardt with bounds and an analytic Jacobian (hand-derived for the closed "
      "forms, the adjoint of the stationary equations with pi from GTH for the general family; both tested "
      "against automatic differentiation).\n"
      "- **Search** ({3} seeded starts per row, seed {4}; the starts and basin hopping run on a {5}-point "
      "exploration grid, the best distinct minima then on the full grid):\n",
      bounds.rate_bound, bounds.min_const_rate, analysis::kRoundingFloor, kStarts, opt.seed, opt.explore_points);
  for (const auto& m : search_move_lines()) s += "  - " + m + "\n";
  s += fmt::format(
      "- **Nested families:** a general-n row also starts from the (n-1)-state optimum embedded into n states, "
      "and (general-5) from its splits; where that start is already exact the random starts are skipped.\n"
      "- **Exactness:** the best parameters are written as exact rationals; MSE and max |error| are re-evaluated "
      "in MPFR ({0} bits) on that exact model.\n"
      "- **Certified optimum** (two- and three-state): interval branch and bound over the whole parameter box "
      "(double intervals with outward rounding, MPFI enclosures of the targets). Each box gets the larger of the "
      "exact per-point range bound (both closed forms are monotone in every rate) and the mean-value bound f(c) + "
      "g(X) (theta - c); a coordinate whose derivative has one sign is fixed at its face. A box is discarded "
      "within {1} of the row's MSE, so 'certified' means no parameter vector in the bounds beats the row by more "
      "than {1}. Budget: {2} boxes (two-state), {3} (three-state).\n"
      "- **Three-state quotient:** the family is not identifiable (scaling a, c and b together along a curve "
      "keeps F(H) at every H), so the search runs on the faces of the box instead of the box: every such curve "
      "leaves the box, so every three-state curve the box holds is also held where a.p, a.s or b is at an end of "
      "its range (c's faces map onto a's by the symmetry a <-> c). Proof in `proofs_check/fit_optimality.hpp`; "
      "`fit_certificates_test` follows the curve in MPFR for 300 random parameter vectors. Six 5-dimensional "
      "faces replace one 6-dimensional box; a large box is split where its range alone spreads the curve most, "
      "a positive rate range at its geometric mean.\n"
      "- **Certified sup error:** the flux over an interval of H is enclosed by the Markov chain tree theorem "
      "(numerator and denominator are polynomials with nonnegative coefficients in the rates, so monotone) and "
      "by a centred form with an enclosure of dnu/dH; cells are bisected until the largest bound is within 1% "
      "of a proven point value (or within 1e-10 x max target, the rounding level).\n"
      "- **Checks** that fail the report: parameters outside their bounds, the MPFR re-evaluation disagreeing "
      "with the optimizer's double MSE beyond rounding, a family-generated target not recovered, two- or "
      "three-state rows whose seeds disagree or that the second optimizer beats, a two-state row not certified "
      "optimal. Rows of the families with many local optima (full-three-state, general) state the best MSE "
      "known, an upper bound.\n",
      opt.mpfr_bits, fmt_pct(kOptimalityGap, 1), fmt_int(kTwoStateBoxes), fmt_int(kThreeStateBoxes));
  return s;
}
// The lowest MSE any search found for a row: the main fit, the second
// optimizer or a swept seed (ties within kBeatTolerance go to the main fit).
struct BestFit {
  const analysis::FitResult* result = nullptr;
  std::string search, file;
};

struct RowCertificates {
  SupCell sup;
  std::optional<proofs_check::OptimalityResult> optimum;
  double sup_seconds = 0, optimum_seconds = 0;
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int thread_count(const ReportContext& ctx) { return ctx.threads > 0 ? ctx.threads : omp_get_max_threads(); }

// Runs body(i) for i in [0, n) on the report's threads (results are stored
// by index, so they do not depend on the thread count); the first exception
// is rethrown after the loop.
template <class F>
void parallel_rows(const ReportContext& ctx, std::size_t n, Progress& progress, F body) {
  std::exception_ptr error;
#pragma omp parallel for schedule(dynamic) num_threads(thread_count(ctx))
  for (std::size_t i = 0; i < n; ++i) {
    try {
      body(i);
    } catch (...) {
#pragma omp critical
      if (!error) error = std::current_exception();
    }
    progress.step();
  }
  if (error) std::rethrow_exception(error);
}

// A target generated by the family: theta* on the fit grid of [lo, hi],
// written as a table activation whose knots are the grid points, so that the
// family reproduces it exactly up to the 17 digits of the file.
struct GeneratedTarget {
  analysis::FamilySpec family;
  std::vector<double> theta;
  std::string lo, hi;
};

std::vector<GeneratedTarget> generated_targets() {
  return {{{FitFamily::TwoState, 2}, {0.5, 0.8, 1.5}, "-3", "3"},
          {{FitFamily::ThreeState, 3}, {0.6, 0.4, 0.7, 2.0, 0.3, 1.5}, "-3", "3"}};
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
  const std::vector<double> tols = {1e-1, 1e-2, 1e-3};
  const std::size_t n_max_states = 6;
  Progress progress("report fits");

  // --- the searches ---------------------------------------------------------
  progress.phase("main table", 1);
  const auto t0 = std::chrono::steady_clock::now();
  const auto rows = analysis::run_fit_table(targets, families, opt);
  const double main_seconds = seconds_since(t0);

  // Second check: a different optimizer (dogleg with non-monotonic steps)
  // from twice as many starts drawn from an independent seed.
  progress.phase("second optimizer", 1);
  const analysis::FitOptions check = analysis::second_check_options(opt);
  const auto t1 = std::chrono::steady_clock::now();
  const auto checks = analysis::run_fit_table(targets, families, check);
  const double check_seconds = seconds_since(t1);

  // Seed sweep: the same fitter (same options, so also the general rows'
  // warm starts from their (n-1)-state rows) from other seeds.
  progress.phase("seed sweep", kSweepSeeds);
  std::vector<std::vector<FitRow>> sweep;
  std::vector<std::uint64_t> sweep_seeds;
  const auto t_sweep = std::chrono::steady_clock::now();
  for (int k = 1; k <= kSweepSeeds; ++k) {
    analysis::FitOptions o = opt;
    o.seed = ctx.seed + static_cast<std::uint64_t>(k);
    sweep_seeds.push_back(o.seed);
    sweep.push_back(analysis::run_fit_table(targets, families, o));
    progress.step();
  }
  const double sweep_seconds = seconds_since(t_sweep);

  std::vector<BestFit> best(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    best[i] = {&rows[i].result, fmt::format("main (seed {})", ctx.seed), model_file(rows[i])};
    double lowest = rows[i].result.mse;
    if (checks[i].result.mse < lowest) {
      lowest = checks[i].result.mse;
      best[i] = {&checks[i].result, fmt::format("second optimizer (seed {})", check.seed),
                 model_stem(rows[i]) + "_check.json"};
    }
    for (std::size_t k = 0; k < sweep.size(); ++k)
      if (sweep[k][i].result.mse < lowest) {
        lowest = sweep[k][i].result.mse;
        best[i] = {&sweep[k][i].result, fmt::format("seed sweep (seed {})", sweep_seeds[k]),
                   seed_model_file(rows[i], sweep_seeds[k])};
      }
    if (!analysis::check_beats(lowest, rows[i].result.mse))
      best[i] = {&rows[i].result, fmt::format("main (seed {})", ctx.seed), model_file(rows[i])};
  }

  // --- certificates -----------------------------------------------------------
  progress.phase("certificates", rows.size());
  std::vector<RowCertificates> certs(rows.size());
  const auto t_cert = std::chrono::steady_clock::now();
  parallel_rows(ctx, rows.size(), progress, [&](std::size_t i) {
    const auto problem = analysis::make_fit_problem(rows[i].target, rows[i].family);
    auto t = std::chrono::steady_clock::now();
    proofs_check::ChainSupOptions so;
    so.max_cells = kTableSupCells;
    certs[i].sup = try_certified_sup(best[i].result->model, problem, so);
    certs[i].sup_seconds = seconds_since(t);
    if (closed_family(rows[i].family)) {
      t = std::chrono::steady_clock::now();
      certs[i].optimum = certify_fit_optimum(problem, best[i].result->mse, ctx.precision);
      certs[i].optimum_seconds = seconds_since(t);
    }
  });
  const double cert_seconds = seconds_since(t_cert);

  // --- family-generated targets ------------------------------------------------
  progress.phase("generated targets", generated_targets().size());
  struct Recovery {
    GeneratedTarget g;
    analysis::FitResult result;
    double scale = 0;  // mean (alpha phi)^2 on the grid
  };
  std::vector<Recovery> recovered;
  for (const auto& g : generated_targets()) {
    const auto grid = analysis::make_grid(solvers::Rational(g.lo), solvers::Rational(g.hi), 401);
    const auto model = analysis::model_of(g.family, g.theta);
    std::string table = "# H, flux of " + analysis::family_name(g.family) + " at theta*\n";
    double scale = 0;
    for (const auto& h : grid.h_exact) {
      const double f = solvers::solve_stationary<double>(model, h).flux;
      table += fmt::format("{},{}\n", fmt_exact(solvers::to_double(h)), fmt_exact(f));
      scale += f * f / double(grid.h.size());
    }
    const std::string file = "generated_" + analysis::family_name(g.family) + ".csv";
    w.write_text(file, table);
    analysis::FitProblem p;
    p.family = g.family;
    p.activation = activations::parse_activation("table:" + w.file_path(file, "target generated by the family"));
    p.data = grid;
    analysis::FitOptions o = opt;
    o.widen_on_bound = false;
    recovered.push_back({g, analysis::fit(p, o), scale});
    progress.step();
  }

  // --- states needed ------------------------------------------------------------
  progress.phase("states needed", 1);
  analysis::FitOptions sopt = opt;
  sopt.starts = kStatesStarts;
  const auto t2 = std::chrono::steady_clock::now();
  const auto needed = analysis::run_states_needed(targets, 2, n_max_states, tols, sopt);
  const double states_seconds = seconds_since(t2);
  // Certified sup error of every states-needed fit; enough to decide the
  // smallest tolerance (the search stops once the bound is below it).
  const std::size_t per_target = n_max_states - 1;
  progress.phase("states-needed certificates", needed.size() * per_target);
  std::vector<SupCell> needed_sup(needed.size() * per_target);
  const auto t3 = std::chrono::steady_clock::now();
  parallel_rows(ctx, needed_sup.size(), progress, [&](std::size_t j) {
    const auto& row = needed[j / per_target];
    const std::size_t k = j % per_target;
    const auto problem = analysis::make_fit_problem(row.target, {FitFamily::General, row.states[k]});
    proofs_check::ChainSupOptions so;
    so.stop_below = tols.back();
    so.max_cells = kNeededSupCells;
    needed_sup[j] = try_certified_sup(row.models[k], problem, so);
  });
  const double needed_cert_seconds = seconds_since(t3);
  progress.done();

  // --- checks (a failed one makes the report exit 1) ---------------------------
  int beaten = 0, small_beaten = 0;
  std::vector<std::string> beaten_rows, exact_rows, seed_disagree, mpfr_disagree, not_certified;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const auto& r = row.result;
    const bool small = closed_family(row.family).has_value();
    const bool beat = analysis::check_beats(checks[i].result.mse, r.mse);
    beaten += beat;
    small_beaten += beat && small;
    if (beat) {
      const std::string file = model_stem(row) + "_check.json";
      w.write_json(file, solvers::model_to_json(checks[i].result.model));
      beaten_rows.push_back(fmt::format("{} / {} ({} -> {}, {})", row.target.label, analysis::family_name(row.family),
                                        fmt_sci(r.mse), fmt_sci(checks[i].result.mse), file));
    }
    if (r.mse < kBeatFloor)
      exact_rows.push_back(fmt::format("{} / {}", row.target.label, analysis::family_name(row.family)));
    if (small)
      for (std::size_t k = 0; k < sweep.size(); ++k) {
        const double m = sweep[k][i].result.mse;
        if (analysis::check_beats(m, r.mse) || analysis::check_beats(r.mse, m))
          seed_disagree.push_back(fmt::format("{} / {} (seed {}: {}, seed {}: {})", row.target.label,
                                              analysis::family_name(row.family), ctx.seed, fmt_sci(r.mse),
                                              sweep_seeds[k], fmt_sci(m)));
      }
    // The double objective the optimizer minimized against the MPFR value of
    // the exact model: they differ by rounding only (relative 1e-10, and the
    // cancellation F - alpha phi of size 1e-13 x max target per point).
    const double ymax = [&] {
      const auto p = analysis::make_fit_problem(row.target, row.family, 101);
      double m = 0;
      for (double h : p.data.h) m = std::max(m, std::fabs(solvers::to_double(p.alpha) * p.activation.eval(h)));
      return m;
    }();
    const double allowed = 1e-10 * r.mse + 1e-13 * ymax * std::sqrt(r.mse) + 1e-28 * ymax * ymax;
    if (!(std::fabs(r.mse - r.mse_double) <= allowed))
      mpfr_disagree.push_back(fmt::format("{} / {} (double {}, MPFR {})", row.target.label,
                                          analysis::family_name(row.family), fmt_exact(r.mse_double), fmt_exact(r.mse)));
    if (certs[i].optimum && row.family.family == FitFamily::TwoState && !certs[i].optimum->certified)
      not_certified.push_back(fmt::format("{} / two-state ({})", row.target.label,
                                          optimality_text(*certs[i].optimum, kOptimalityGap)));
  }

  // --- summary --------------------------------------------------------------------
  int two_rows = 0, two_certified = 0;
  std::vector<std::string> three_bounds, sup_above_grid, sup_undefined, paper_vs_optimum;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const std::string name = fmt::format("{} / {}", row.target.label, analysis::family_name(row.family));
    if (certs[i].optimum && row.family.family == FitFamily::TwoState) {
      ++two_rows;
      two_certified += certs[i].optimum->certified;
    }
    if (certs[i].optimum && row.family.family == FitFamily::ThreeState)
      three_bounds.push_back(fmt::format("{}: {}", row.target.label, optimality_text(*certs[i].optimum, kOptimalityGap)));
    const auto& s = certs[i].sup;
    if (!s.sup) sup_undefined.push_back(fmt::format("{} ({})", name, s.error));
    else if (s.sup->lower > 1.5 * best[i].result->max_abs_error + 1e-12)
      sup_above_grid.push_back(fmt::format("{} ({} between grid points vs {} on the grid, x{})", name,
                                           fmt_sci(s.sup->lower), fmt_sci(best[i].result->max_abs_error),
                                           fmt_g(s.sup->lower / best[i].result->max_abs_error, 3)));
    // The paper's values of its own family, and its low-state values (family
    // not stated: two- or three-state), against our certified lower bounds of
    // the families' optima, on our domain and bounds.
    if (row.target.paper_mse &&
        (row.target.paper_family.empty() || row.target.paper_family == analysis::family_name(row.family)) &&
        certs[i].optimum && certs[i].optimum->lower_bound > 0)
      paper_vs_optimum.push_back(fmt::format(
          "{} on [{}, {}]: the paper's {} is {} times our certified {} {} (>= {})", row.target.label,
          row.target.lo, row.target.hi, fmt_sci(*row.target.paper_mse, 2),
          fmt_g(*row.target.paper_mse / certs[i].optimum->lower_bound, 3), analysis::family_name(row.family),
          certs[i].optimum->certified ? "optimum" : "lower bound", fmt_sci(certs[i].optimum->lower_bound)));
  }
  w.heading("Summary");
  w.paragraph(fmt::format(
      "- {} fits ({} targets x {} families) of the stationary spike flux to alpha phi on 401-point grids, each "
      "row the lowest MSE that any of three searches found (the main multistart, a second optimizer, {} more "
      "seeds).\n"
      "- **Certified global optimum:** {} of {} two-state rows are proven optimal within {} over the whole "
      "parameter box (interval branch and bound). Three-state rows, certified lower bounds on the optimum "
      "within {} boxes each (searched on the faces of the box, which hold every three-state curve): {}.\n"
      "- **Certified sup error** over the whole domain, not only the grid: rows whose error between grid points "
      "exceeds the grid maximum by more than 1.5x: {}. Rows whose chain is not defined everywhere on the domain: "
      "{}.\n"
      "- **Against the paper** (its domains and bounds unstated, so context, not a pass mark): {}.\n"
      "- {} rows are beaten by the second optimizer ({} two- or three-state); the full-three-state and general "
      "rows state the best MSE known, an upper bound on the family's optimum.",
      rows.size(), targets.size(), families.size(), kSweepSeeds, two_certified, two_rows,
      fmt_pct(kOptimalityGap, 1), fmt_int(kThreeStateBoxes),
      three_bounds.empty() ? std::string("none") : fmt::format("{}", fmt::join(three_bounds, "; ")),
      sup_above_grid.empty() ? std::string("none") : fmt::format("{}", fmt::join(sup_above_grid, "; ")),
      sup_undefined.empty() ? std::string("none") : fmt::format("{}", fmt::join(sup_undefined, "; ")),
      paper_vs_optimum.empty() ? std::string("none comparable") : fmt::format("{}", fmt::join(paper_vs_optimum, "; ")),
      beaten, small_beaten));

  // --- main table -----------------------------------------------------------------
  Table main;
  main.columns = {"target", "family", "domain", "MSE", "optimum gap", "max |err| (grid)", "sup |err| (certified)",
                  "on bound", "best search", "model"};
  Table details;
  details.columns = {"target", "family", "within 1% of best", "MSE bounds x10", "MSE bounds x100",
                     "MSE, main", "MSE, second optimizer", kPaperColumn, "parameters"};
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const auto& r = row.result;  // the main fit (reliability columns)
    const auto& b = *best[i].result;
    const auto& c = certs[i];
    std::optional<double> paper;
    if (row.target.paper_mse &&
        (row.target.paper_family.empty() ? row.family.family != FitFamily::FullThreeState &&
                                               row.family.family != FitFamily::General
                                         : row.target.paper_family == analysis::family_name(row.family)))
      paper = row.target.paper_mse;
    std::string paper_text = paper ? fmt_sci(*paper, 2) : kNoPaperValue;
    if (paper && row.target.paper_family.empty()) paper_text += " (low-state variant)";
    const auto widened = [&](std::size_t k) {
      if (k < r.widened.size())
        return fmt_sci(r.widened[k].mse) + (r.widened[k].on_bound.empty() ? "" : " (on bound)");
      if (!r.on_bound.empty() && r.mse_at_rounding_floor) return std::string("at rounding floor");
      return std::string("—");
    };
    main.rows.push_back({row.target.label, analysis::family_name(row.family),
                         fmt::format("[{}, {}]", row.target.lo, row.target.hi), fmt_sci(b.mse),
                         c.optimum ? optimality_text(*c.optimum, kOptimalityGap) : std::string("—"),
                         fmt_sci(b.max_abs_error), sup_text(c.sup),
                         b.on_bound.empty() ? "no" : fmt::format("{}", fmt::join(b.on_bound, "; ")), best[i].search,
                         best[i].file});
    details.rows.push_back({row.target.label, analysis::family_name(row.family),
                            r.exact_warm_start ? std::string("1/1 (exact warm start)")
                                               : fmt::format("{}/{}", r.within_1pct, r.starts_run),
                            widened(0), widened(1), fmt_sci(r.mse), fmt_sci(checks[i].result.mse), paper_text,
                            params_text(b)});
    w.write_json(model_file(row), solvers::model_to_json(r.model));
    nlohmann::ordered_json sup_json = nullptr;
    if (c.sup.sup)
      sup_json = {{"lower", c.sup.sup->lower}, {"upper", c.sup.sup->upper}, {"at", c.sup.sup->argmax},
                  {"converged", c.sup.sup->converged}, {"cells", c.sup.sup->cells}};
    else
      sup_json = {{"undefined", c.sup.error}};
    nlohmann::ordered_json opt_json = nullptr;
    if (c.optimum)
      opt_json = {{"lower_bound", c.optimum->lower_bound}, {"gap", c.optimum->gap},
                  {"certified", c.optimum->certified}, {"boxes", c.optimum->boxes},
                  {"budget_exhausted", c.optimum->exhausted}, {"incumbent", c.optimum->incumbent}};
    json.push_back({{"target", row.target.label},
                    {"family", analysis::family_name(row.family)},
                    {"domain", {row.target.lo, row.target.hi}},
                    {"alpha", row.target.alpha},
                    {"mse", b.mse},
                    {"best_search", best[i].search},
                    {"best_model", best[i].file},
                    {"max_abs_error_grid", b.max_abs_error},
                    {"sup_abs_error_certified", sup_json},
                    {"optimality", opt_json},
                    {"main_mse", r.mse},
                    {"within_1pct", r.within_1pct},
                    {"starts", r.starts_run},
                    {"exact_warm_start", r.exact_warm_start},
                    {"on_bound", b.on_bound},
                    {"mse_widened", [&] {
                       auto a = nlohmann::ordered_json::array();
                       for (const auto& x : r.widened) a.push_back({{"widen", x.widen}, {"mse", x.mse}});
                       return a;
                     }()},
                    {"mse_at_rounding_floor", r.mse_at_rounding_floor},
                    {"check_mse", checks[i].result.mse},
                    {"paper_mse", paper ? nlohmann::ordered_json(*paper) : nlohmann::ordered_json(nullptr)},
                    {"seconds", row.seconds},
                    {"certificate_seconds", c.sup_seconds + c.optimum_seconds}});
  }
  w.heading("Fits: target x family");
  w.paragraph(
      "MSE: the lowest of the searches (column 'best search'; its model file is 'model'). Optimum gap: how far "
      "that MSE can be above the family's global optimum within the bounds (certified lower bound; two- and "
      "three-state only). max |err| (grid): on the 401 fit points; sup |err| (certified): over the whole domain, "
      "proven within 1% (or an interval where rounding stops the search).");
  w.table(main, "fits.csv");
  w.write_json("fits.json", json);
  w.heading("Per-row details", 3);
  w.paragraph("Reliability of the main multistart, the widened-bound refits, the second optimizer, the paper's "
              "value and the parameters of the row's best model.");
  w.table(details, "fit_details.csv");

  // --- checks (listed by the writer in its own section) ----------------------------
  for (const auto& row : rows)
    w.check(fmt::format("{} / {}: every parameter within its bounds, constant rates > 0", row.target.label,
                        analysis::family_name(row.family)),
            analysis::parameters_outside_bounds(row.result.params, row.result.theta, bounds).empty());
  w.check("MPFR re-evaluation of every exact model agrees with the optimizer's double MSE up to rounding",
          mpfr_disagree.empty(), fmt::format("{}", fmt::join(mpfr_disagree, "; ")));
  for (const auto& rc : recovered)
    w.check(fmt::format("a target generated by the {} family (theta* = {}) on [{}, {}] is recovered: MSE {} below "
                        "{:g} x mean target^2",
                        analysis::family_name(rc.g.family), fmt_g_list(rc.g.theta), rc.g.lo, rc.g.hi,
                        fmt_sci(rc.result.mse), analysis::kRoundingFloor),
            rc.result.mse < analysis::kRoundingFloor * rc.scale);
  w.check(fmt::format("two- and three-state rows: every seed of the sweep ({}) reaches the row's MSE within {:g}",
                      fmt::join(sweep_seeds, ", "), kBeatTolerance),
          seed_disagree.empty(), fmt::format("{}", fmt::join(seed_disagree, "; ")));
  w.check(fmt::format("second optimizer (dogleg, {} starts, seed {}) does not beat any two- or three-state row "
                      "({} of {} rows beaten, {} of them two- or three-state)",
                      check.starts, check.seed, beaten, rows.size(), small_beaten),
          small_beaten == 0);
  w.check(fmt::format("every two-state row is certified globally optimal within {}", fmt_pct(kOptimalityGap, 1)),
          not_certified.empty(), fmt::format("{}", fmt::join(not_certified, "; ")));

  // --- how far the optimum is shown ------------------------------------------------
  w.heading("Second optimizer, seed sweep and translation test");
  // sigmoid_shift_2(H) = sigmoid(H - 2) on [-4, 8] = [-6, 6] + 2: the offset
  // change p -> p - 2 s maps every fit of one row to a fit of the other with
  // the same MSE (while |p - 2 s| stays within the bound), so both rows have
  // the same optimum and their gap measures how far the multistart is from it.
  std::vector<std::string> shift_pairs;
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < rows.size(); ++j)
      if (rows[i].target.slug == "sigmoid" && rows[j].target.slug == "sigmoid_shift_2" &&
          analysis::family_name(rows[i].family) == analysis::family_name(rows[j].family)) {
        const double a = best[i].result->mse, b = best[j].result->mse;
        if (std::max(a, b) > kBeatFloor)
          shift_pairs.push_back(fmt::format("{}: {} vs {} (ratio {})", analysis::family_name(rows[i].family),
                                            fmt_sci(a), fmt_sci(b), fmt_g(std::max(a, b) / std::min(a, b), 3)));
      }
  w.paragraph(fmt::format(
      "- Second optimizer: plain multistart with Powell's dogleg instead of Levenberg-Marquardt, twice the starts "
      "from another seed. Rows it beat: {}.\n"
      "- Rows fitted exactly up to double rounding of the parameters (MSE < {:g}, confirmed in MPFR): {}.\n"
      "- Translation test: sigmoid_shift_2 on [-4, 8] is sigmoid on [-6, 6] moved right by 2, and p -> p - 2s maps "
      "the fits of one row onto the other, so both rows share each family's optimum. Best MSE sigmoid vs "
      "sigmoid_shift_2: {}.",
      beaten_rows.empty() ? std::string("none") : fmt::format("{}", fmt::join(beaten_rows, "; ")), kBeatFloor,
      exact_rows.empty() ? std::string("none") : fmt::format("{}", fmt::join(exact_rows, "; ")),
      shift_pairs.empty() ? std::string("(rows missing)") : fmt::format("{}", fmt::join(shift_pairs, "; "))));
  {
    Table sw;
    sw.columns = {"target", "family", fmt::format("MSE, seed {}", ctx.seed)};
    for (auto s : sweep_seeds) sw.columns.push_back(fmt::format("seed {}", s));
    sw.columns.insert(sw.columns.end(), {"table / best seed", "best seed model"});
    auto sweep_json = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& row = rows[i];
      if (row.result.mse < kBeatFloor) continue;  // exact up to rounding: every seed agrees
      std::vector<std::string> cells = {row.target.label, analysis::family_name(row.family), fmt_sci(row.result.mse)};
      auto seeds_json = nlohmann::ordered_json::array({{{"seed", ctx.seed}, {"mse", row.result.mse}}});
      double lowest = row.result.mse;
      int lowest_k = -1;
      for (std::size_t k = 0; k < sweep.size(); ++k) {
        const double m = sweep[k][i].result.mse;
        cells.push_back(fmt_sci(m));
        seeds_json.push_back({{"seed", sweep_seeds[k]}, {"mse", m}});
        if (m < lowest) {
          lowest = m;
          lowest_k = static_cast<int>(k);
        }
      }
      std::string file = "—";
      if (lowest_k >= 0 && analysis::check_beats(lowest, row.result.mse)) {
        const auto k = static_cast<std::size_t>(lowest_k);
        file = seed_model_file(row, sweep_seeds[k]);
        w.write_json(file, solvers::model_to_json(sweep[k][i].result.model));
      }
      cells.insert(cells.end(), {fmt_g(row.result.mse / lowest, 4), file});
      sw.rows.push_back(cells);
      sweep_json.push_back({{"target", row.target.label},
                            {"family", analysis::family_name(row.family)},
                            {"seeds", seeds_json},
                            {"best_mse", lowest},
                            {"best_model", file == "—" ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(file)}});
    }
    w.heading("Seed sweep", 3);
    w.paragraph(fmt::format(
        "Every row not fitted exactly, again from seeds {} ({} starts each). On the families with many local "
        "optima the multistart ends in different funnels from different seeds; their lower fits are written "
        "beside the table (`ctmc-snn fit ... --warm-start FILE` continues from one).",
        fmt::join(sweep_seeds, ", "), kStarts));
    w.table(sw, "seed_sweep.csv");
    w.write_json("seed_sweep.json", sweep_json);
  }

  // --- comparison with the paper --------------------------------------------------
  const FitRow* fc = nullptr;
  double fc_best = 0;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].target.slug == "softplus_x_1_14" && rows[i].family.family == FitFamily::FullThreeState) {
      fc = &rows[i];
      fc_best = best[i].result->mse;
    }
  w.heading("Comparison with the paper");
  std::string lines =
      "- The paper reports MSE 1.1e-3 (sigmoid, three-state), 2.4e-3 (ReLU), 1.1e-2 (softplus) and 2.7e-3 "
      "(ClipReLU10), the last three with \"the low-state variant used in the implementation\" (two- or "
      "three-state, not specified), and states neither its domains nor its rate bounds.\n"
      "- For ReLU the infimum MSE of both low-state families is 0 (a = max(0, H), the other rates -> infinity), so "
      "a ReLU row is set by the rate bound (see 'on bound' and the widened refits); for ClipReLU and softplus "
      "the MSE grows with the width of the domain above the kink.\n"
      "- Our sigmoid three-state MSE on [-6, 6] (bounds not binding beyond the refractory rate d) is directly "
      "comparable with the paper's 1.1e-3.\n";
  for (const auto& s : paper_vs_optimum) lines += "- " + s + " (on our domain and bounds).\n";
  if (fc) {
    // Multiplying every rate by k multiplies nu by k (DESIGN section 4), so
    // with bounds not binding MSE(alpha) = (alpha / (1/14))^2 MSE(1/14).
    const double a_eq = (1.0 / 14.0) * std::sqrt(2.39e-4 / fc_best);
    lines += fmt::format(
        "- Appendix B's fully connected three-state example: we fit (1/14) softplus on [-26, 14] (the target "
        "peaks at softplus(14)/14 = 1.00000006; the paper does not state its alpha). Scaling every rate by k "
        "scales nu by k, so while the bounds do not bind the family's best MSE is proportional to alpha^2: our "
        "{} at alpha = 1/14 would equal the paper's 2.39e-4 at alpha = {} (max target {}).\n",
        fmt_sci(fc_best), fmt_g(a_eq, 4), fmt_g(a_eq * 14.0, 4));
  }
  w.paragraph(lines);

  // --- plots ------------------------------------------------------------------------
  w.heading("Plots (as in the paper's Figure 2: target, fitted nu, residual on the right axis)");
  for (const auto& t : targets) {
    std::vector<const FitRow*> rs;
    for (const auto& row : rows)
      if (row.target.slug == t.slug) rs.push_back(&row);
    plot_target(w, rs);
  }

  // --- states needed ------------------------------------------------------------------
  Table st;
  st.columns = {"target", "domain"};
  for (double tol : tols) {
    st.columns.push_back(fmt::format("states, sup err <= {:g}", tol));
    st.columns.push_back(fmt::format("Bernstein 2(N+1), {:g}", tol));
  }
  for (std::size_t n = 2; n <= n_max_states; ++n) st.columns.push_back(fmt::format("sup err, {} states", n));
  std::vector<std::string> grid_differs;
  for (std::size_t t = 0; t < needed.size(); ++t) {
    const auto& row = needed[t];
    std::vector<std::string> cells = {row.target.label, fmt::format("[{}, {}]", row.target.lo, row.target.hi)};
    for (std::size_t k = 0; k < tols.size(); ++k) {
      std::optional<std::size_t> n_cert;
      for (std::size_t j = 0; j < row.states.size() && !n_cert; ++j) {
        const auto& s = needed_sup[t * per_target + j];
        if (s.sup && s.sup->upper <= tols[k]) n_cert = row.states[j];
      }
      if (n_cert != row.min_states[k])
        grid_differs.push_back(fmt::format("{} at {:g}: {} by the certified sup, {} on the grid", row.target.label,
                                           tols[k], n_cert ? std::to_string(*n_cert) : "> 6",
                                           row.min_states[k] ? std::to_string(*row.min_states[k]) : "> 6"));
      cells.push_back(n_cert ? std::to_string(*n_cert) : "> 6");
      cells.push_back(row.bernstein_degree[k] ? fmt_int(2 * (static_cast<long long>(*row.bernstein_degree[k]) + 1))
                                              : "> 2^24");
    }
    for (std::size_t j = 0; j < row.states.size(); ++j) {
      const auto& s = needed_sup[t * per_target + j];
      cells.push_back(!s.sup ? std::string("undefined")
                             : (s.sup->upper <= tols.back() ? "<= " + fmt_sci(s.sup->upper, 1) : sup_text(s)));
    }
    st.rows.push_back(cells);
  }
  w.heading("States needed (the open question after the paper's corollary)");
  w.paragraph(fmt::format(
      "Smallest number of states n of the general family (complete graph on n states, every rate rectified "
      "affine, spikes into state 0) whose least-squares fit ({} starts, same bounds, no widening) has a "
      "certified sup error below the tolerance over the whole domain, next to the 2(N+1) states of the theorem's "
      "Bernstein chain (kappa_i = h(i/N), rho = 2 max(alpha phi)) for the same sup error. The sup errors are "
      "certified (to 1%, or just below {:g}, which decides every column); the Bernstein N is a double-precision "
      "estimate (4001 points in u plus the kinks; the theorem report certifies N for its targets). Where the "
      "certified sup changes the answer of the grid's max |error|: {}.",
      kStatesStarts, tols.back(),
      grid_differs.empty() ? std::string("nowhere") : fmt::format("{}", fmt::join(grid_differs, "; "))));
  w.table(st, "states_needed.csv");

  // --- methods --------------------------------------------------------------------------
  w.heading("Methods");
  w.paragraph(methods_text(opt, bounds));
  w.heading("Timing", 3);
  double two_cert = 0, three_cert = 0, sup_cert = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    sup_cert += certs[i].sup_seconds;
    if (rows[i].family.family == FitFamily::TwoState) two_cert += certs[i].optimum_seconds;
    if (rows[i].family.family == FitFamily::ThreeState) three_cert += certs[i].optimum_seconds;
  }
  w.paragraph(fmt::format(
      "Main table ({} rows x {} starts, incl. widened refits): {:.1f} s; second optimizer: {:.1f} s; seed sweep: "
      "{:.1f} s; certificates: {:.1f} s wall (CPU: two-state optimum {:.1f} s, three-state bound {:.1f} s, sup "
      "errors {:.1f} s); states-needed fits {:.1f} s and their certificates {:.1f} s (threads: {}).",
      rows.size(), kStarts, main_seconds, check_seconds, sweep_seconds, cert_seconds, two_cert, three_cert, sup_cert,
      states_seconds, needed_cert_seconds,
      ctx.threads == 0 ? std::string("all cores") : std::to_string(ctx.threads)));
  w.finish();
  return w.exit_status();
}

}  // namespace

ReportDef fits_report_def() {
  return {"fits", "Fits of CTMC families to activations (eq. 3), states needed vs Bernstein", run};
}

}  // namespace ctmc::reports
