// bernstein, fit, fit --score (reports/commands.hpp).
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "ctmc/activations/activation.hpp"
#include "ctmc/analysis/fit.hpp"
#include "ctmc/analysis/fit_tables.hpp"
#include "ctmc/proofs_check/bernstein.hpp"
#include "ctmc/proofs_check/bernstein_claims.hpp"
#include "ctmc/reports/commands.hpp"
#include "ctmc/reports/fit_certificates.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/number_text.hpp"

namespace ctmc::reports {
namespace {

using ojson = nlohmann::ordered_json;
using proofs_check::Verdict;

constexpr std::int64_t kNumericClaim1MaxN = 4096;
// Memory: the evaluator caches kappa_i for every i (about 40 bytes each).
constexpr std::int64_t kMaxN = 20000000;

// Caps: beyond these a fit takes hours or cannot be allocated; bad input.
constexpr int kMaxStarts = 100'000;
constexpr int kMaxIterations = 1'000'000;
constexpr int kMaxBasinRounds = 100'000;
constexpr std::size_t kMaxPoints = 10'000'000;
constexpr double kMaxRateBound = 1e15, kMinMinRate = 1e-30;

}  // namespace

void check_fit_options(const FitCommandOptions& o) {
  if (o.starts < 1 || o.starts > kMaxStarts)
    throw InputError(fmt::format("--starts: need 1..{}, got {}", kMaxStarts, o.starts));
  if (o.max_iterations < 1 || o.max_iterations > kMaxIterations)
    throw InputError(fmt::format("--max-iterations: need 1..{}, got {}", kMaxIterations, o.max_iterations));
  if (o.basin_rounds < 0 || o.basin_rounds > kMaxBasinRounds)
    throw InputError(fmt::format("--basin-rounds: need 0..{}, got {}", kMaxBasinRounds, o.basin_rounds));
  checked_threads(o.threads);
  if (o.samples.empty() && (o.points < 2 || o.points > kMaxPoints))
    throw InputError(fmt::format("--points: need 2..{} grid points, got {}", kMaxPoints, o.points));
  if (!std::isfinite(o.rate_bound) || !(o.rate_bound > 0) || o.rate_bound > kMaxRateBound)
    throw InputError(fmt::format("--rate-bound: need a finite number in (0, {:g}], got {}", kMaxRateBound,
                                 o.rate_bound));
  if (!std::isfinite(o.min_rate) || !(o.min_rate >= kMinMinRate))
    throw InputError(fmt::format("--min-rate: need a finite number >= {:g}, got {}", kMinMinRate, o.min_rate));
  if (!(o.min_rate < o.rate_bound))
    throw InputError(fmt::format("--min-rate: need min-rate < rate-bound, got {} >= {}", o.min_rate, o.rate_bound));
  checked_precision(o.precision);
}

analysis::FitProblem fit_problem(const FitCommandOptions& o) {
  check_fit_options(o);
  analysis::FitProblem p;
  p.activation = activations::parse_activation(o.activation);
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
  return p;
}

ojson bernstein_json(const BernsteinOptions& o) {
  const auto act = activations::parse_activation(o.activation);
  const auto dom = solvers::parse_interval(o.domain, "--domain");
  // Exclusions CLI11 also enforces on the command line.
  if (!o.rho.empty() && !o.rho_factor.empty()) throw InputError("--rho-factor: excludes --rho");
  if (o.n && !o.eps.empty()) throw InputError("--eps: excludes --N");
  if (!o.n && o.eps.empty()) throw InputError("bernstein: give --N N or --eps E");
  checked_precision(o.precision);
  std::optional<solvers::Rational> rho, factor;
  if (!o.rho.empty()) rho = solvers::parse_input_value(o.rho, "--rho");
  if (!o.rho_factor.empty()) factor = solvers::parse_input_value(o.rho_factor, "--rho-factor");
  const bool has_n = o.n.has_value();
  const std::int64_t n = o.n.value_or(0);
  if (has_n && n < 1) throw InputError(fmt::format("--N: must be >= 1 (got {})", n));
  if (has_n && n > kMaxN) throw InputError(fmt::format("--N: at most {} (got {})", kMaxN, n));
  double eps = 0;
  if (!o.eps.empty()) {
    const auto e = solvers::parse_input_value(o.eps, "--eps");
    if (!(e > 0)) throw InputError(fmt::format("--eps: must be > 0 (got {})", o.eps));
    eps = solvers::to_double(e);
    // The search runs in double: 1e-400 would round to 0 (search silently
    // skipped) and 1e400 to inf (claim 2 "proved" at N = 1).
    if (!(eps > 0) || !std::isfinite(eps))
      throw InputError(fmt::format("--eps: must be a positive number within double's range (got {})", o.eps));
  }
  if (o.cap < 1 || o.cap > kMaxN) throw InputError(fmt::format("--cap: must be in [1, {}]", kMaxN));
  const auto p = proofs_check::make_problem(act, dom.first, dom.second, rho, factor, o.precision);

  int refuted = 0;
  ojson out;
  out["activation"] = act.name;
  out["domain"] = {solvers::exact_text(dom.first), solvers::exact_text(dom.second)};
  out["rho"] = solvers::exact_text(p.rho);
  out["rho_double"] = solvers::to_double(p.rho);
  {
    activations::Ivl mx(p.prec);
    p.max_psi(mx);
    out["max_phi"] = mx.mid();
  }
  out["precision_bits"] = o.precision;
  const auto lh = proofs_check::lipschitz_h(p);
  out["L_h"] = {{"lower", lh.lower}, {"upper", lh.upper}, {"argmax_I", lh.argmax_I}};

  std::vector<std::string> ids;
  const auto c1 = proofs_check::claim1_symbolic(&ids);
  if (c1.verdict == Verdict::Refuted) ++refuted;
  out["claim1_symbolic"] = proofs_check::to_json(c1);
  out["claim1_symbolic"]["identities"] = ids;

  const std::int64_t n_numeric = has_n ? n : 64;
  ojson c1n = ojson::array();
  if (n_numeric <= kNumericClaim1MaxN) {
    const std::vector<solvers::Rational> us = {solvers::Rational(0), solvers::Rational(1, 7), solvers::Rational(1, 2),
                                               solvers::Rational(5, 6), solvers::Rational(1)};
    for (const auto& pt : proofs_check::claim1_numeric(p, n_numeric, us)) {
      if (pt.verdict == Verdict::Refuted) ++refuted;
      c1n.push_back({{"N", n_numeric}, {"u", solvers::exact_text(pt.u)}, {"method", pt.method}, {"flux", pt.flux},
                     {"max_rel_gap", pt.max_rel_gap}, {"verdict", proofs_check::verdict_name(pt.verdict)}});
    }
  }
  out["claim1_numeric"] = c1n;

  if (has_n) {
    proofs_check::SupOptions so;
    so.rel_tol = 1e-3;
    so.max_evals = 100000;
    const auto b = proofs_check::bounds_at(p, lh, n, so);
    if (b.corollary.verdict == Verdict::Refuted) ++refuted;
    if (b.sharper.verdict == Verdict::Refuted) ++refuted;
    out["sup_error"] = {{"N", n}, {"lower", b.sup.lower}, {"upper", b.sup.upper}, {"argmax_u", b.sup.argmax_u},
                        {"evaluations", b.sup.evaluations}, {"converged", b.sup.converged}};
    out["m_N"] = {{"lower", b.m_n_lo}, {"upper", b.m_n_hi}, {"times_sqrt_N", b.m_n_hi * std::sqrt(double(n))}};
    out["paper_bound"] = {{"lower", b.paper_lo}, {"upper", b.paper_hi}};
    out["sharper_bound"] = {{"lower", b.sharper_lo}, {"upper", b.sharper_hi}};
    out["asymptotic_L_over_2sqrt2piN"] = b.asymptotic;
    out["corollary"] = proofs_check::to_json(b.corollary);
    out["sharper"] = proofs_check::to_json(b.sharper);
  }
  if (eps > 0) {
    proofs_check::EpsSearchOptions eo;
    eo.cap = o.cap;
    if (!(o.bracket >= 0 && o.bracket < 1)) throw InputError("--bracket: must be in [0, 1)");
    eo.rel_stop = o.bracket;
    const auto s = proofs_check::smallest_n(p, lh, eps, eo);
    out["eps_search"] = {{"eps", eps},
                         {"N_lo", s.n_lo},
                         {"N_hi", s.capped ? ojson(nullptr) : ojson(s.n_hi)},
                         {"minimal", s.minimal},
                         {"capped", s.capped},
                         {"cap", o.cap},
                         {"sup_at_N_hi", {s.lower_at_hi, s.upper_at_hi}},
                         {"sup_at_cap", {s.lower_at_cap, s.upper_at_cap}},
                         {"paper_sufficient_N", s.paper_n == proofs_check::kNBeyondRange ? ojson(nullptr) : ojson(s.paper_n)},
                         {"sharper_sufficient_N", s.sharper_n == proofs_check::kNBeyondRange ? ojson(nullptr) : ojson(s.sharper_n)},
                         {"N_tested", s.tested},
                         {"reasoning", s.reasoning}};
    proofs_check::Claim c2{"claim2", fmt::format("sup|F_N - psi| < {} for some N <= {}", eps, o.cap),
                           s.capped ? Verdict::Unknown : Verdict::Proved,
                           s.capped ? s.reasoning
                                    : fmt::format("certified sup <= {:.6e} < eps at N = {}", s.upper_at_hi, s.n_hi)};
    out["claim2"] = proofs_check::to_json(c2);
    if (!s.capped && s.paper_n != proofs_check::kNBeyondRange && s.paper_n < s.n_lo) {
      ++refuted;  // the corollary's sufficient N is not sufficient: a finding
      out["paper_sufficient_N_refuted"] = true;
    }
  }
  if (activations::is_smooth(act)) {
    ojson v = ojson::array();
    for (const auto& r : proofs_check::voronovskaya(p, 0.375, {64, 256, 1024, 4096}))
      v.push_back({{"N", r.n}, {"u", r.u}, {"N_times_BNh_minus_h", r.scaled}, {"limit", r.limit},
                   {"rel_diff", r.rel_diff}});
    out["voronovskaya"] = v;
  }
  out["refuted"] = refuted;
  return out;
}


ScoreRun run_score(const FitCommandOptions& o, const analysis::FitProblem& p) {
  auto model = load_model(*o.score);
  const auto errors = analysis::evaluate_exactly(model, p, o.precision, "--score " + o.score->source);
  return ScoreRun{std::move(model), errors};
}

ojson score_json(const FitCommandOptions& o, const analysis::FitProblem& p, const ScoreRun& s) {
  return ojson{{"model", o.score->source},
               {"states", s.model.size()},
               {"target", fmt::format("{} * {}", o.alpha, p.activation.name)},
               {"data", p.data.description},
               {"mse", s.errors.mse},
               {"max_abs_error", s.errors.max_abs_error},
               {"max_abs_error_at", s.errors.max_abs_error_at},
               {"precision_bits", o.precision}};
}

ojson score_json(const FitCommandOptions& o) {
  const auto p = fit_problem(o);
  const auto s = run_score(o, p);
  const auto c = o.certify ? std::optional<CertifyRun>(run_certify(o, p, s.model, s.errors.mse, false)) : std::nullopt;
  ojson j = score_json(o, p, s);
  if (c) j["certificates"] = certify_json(*c);
  return j;
}

CertifyRun run_certify(const FitCommandOptions& o, const analysis::FitProblem& p, const solvers::Model& model,
                       double mse, bool fitted) {
  CertifyRun c;
  const std::string source = fitted ? std::string("fitted model") : "--score " + o.score->source;
  if (fitted) {
    auto cell = try_certified_sup(model, p);
    c.sup = cell.sup;
    c.sup_error = cell.error;
  } else {
    c.sup = certified_sup_error(model, p, {}, "--certify: " + source);
  }
  if (fitted || o.family_given) {
    if (!fitted)
      if (auto why = family_mismatch(model, p.family))
        throw InputError(fmt::format("--certify: {} is not a {} chain: {}", source, analysis::family_name(p.family),
                                     *why));
    if (closed_family(p.family)) c.family = p.family;
  } else {
    for (const analysis::FamilySpec f : {analysis::FamilySpec{analysis::FitFamily::TwoState, 2},
                                         analysis::FamilySpec{analysis::FitFamily::ThreeState, 3}})
      if (!family_mismatch(model, f)) c.family = f;
  }
  if (c.family) {
    analysis::FitProblem q = p;
    q.family = *c.family;
    c.optimum = certify_fit_optimum(q, mse, o.precision);
  }
  return c;
}

ojson certify_json(const CertifyRun& c) {
  ojson out;
  if (c.sup)
    out["sup_abs_error"] = {{"lower", c.sup->lower}, {"upper", c.sup->upper}, {"at", c.sup->argmax},
                            {"converged", c.sup->converged}, {"cells", c.sup->cells}};
  else
    out["sup_abs_error"] = {{"undefined", c.sup_error}};
  if (c.optimum)
    out["optimality"] = {{"family", analysis::family_name(*c.family)},
                         {"lower_bound", c.optimum->lower_bound},
                         {"gap", c.optimum->gap},
                         {"certified", c.optimum->certified},
                         {"rel_gap", kOptimalityGap},
                         {"boxes", c.optimum->boxes},
                         {"budget_exhausted", c.optimum->exhausted}};
  else
    out["optimality"] = nullptr;
  return out;
}

FitRun run_fit(const FitCommandOptions& o, const analysis::FitProblem& p) {
  FitRun run;
  analysis::FitOptions& fo = run.options;
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
  // A warm start from a model (e.g. a chain trained elsewhere): start 0 of
  // the multistart, so the fit ends no higher than its MSE once clamped into
  // the bounds (up to rounding); its own MSE, as given, goes into the output
  // and the meta. A general chain with fewer states than --states grows as
  // the tables' rows do: embedded (same flux), with the splits of its
  // (n-1)-state form as starts 1, 2, ...
  if (o.warm_start) {
    const std::string source = "--warm-start " + o.warm_start->source;
    const auto given = load_model(*o.warm_start);
    run.warm_states = given.size();
    const std::size_t n = analysis::state_count(p.family);
    if (p.family.family == analysis::FitFamily::General && run.warm_states >= 2 && run.warm_states < n) {
      const analysis::FamilySpec smaller{analysis::FitFamily::General, run.warm_states};
      analysis::start_from_smaller(fo, analysis::theta_of(smaller, given, source), run.warm_states, n, p, true);
    } else {
      fo.warm_start = analysis::theta_of(p.family, given, source);
    }
    run.warm_mse = analysis::evaluate_exactly(given, p, o.precision, source).mse;
  }
  run.result = analysis::fit(p, fo);
  auto& r = run.result;
  if (run.warm_mse) {
    auto& w = r.model.meta["warm_start"];
    w["file"] = o.warm_start->source;
    w["mse"] = *run.warm_mse;
    w["states"] = run.warm_states;
    w["split_starts"] = fo.seeded_starts.size();
    w["clamped_into_bounds"] = r.warm_start_clamped;
  }
  if (!o.output.empty()) solvers::write_model_file(r.model, o.output);
  return run;
}

ojson fit_json(const FitCommandOptions& o, const analysis::FitProblem& p, const FitRun& run) {
  const auto& r = run.result;
  ojson out;
  out["model"] = solvers::model_to_json(r.model);
  ojson res;
  res["family"] = analysis::family_name(r.family);
  res["target"] = fmt::format("{} * {}", o.alpha, p.activation.name);
  res["data"] = p.data.description;
  std::vector<std::string> names;
  for (const auto& q : r.params) names.push_back(q.name);
  res["parameter_names"] = names;
  res["theta"] = r.theta;
  res["mse"] = r.mse;
  res["mse_double"] = r.mse_double;
  res["max_abs_error"] = r.max_abs_error;
  res["max_abs_error_at"] = r.max_abs_error_at;
  res["precision_bits"] = o.precision;
  res["starts"] = r.starts_run;
  res["seed"] = o.seed;
  res["best_start"] = r.best_start;
  res["within_1pct"] = r.within_1pct;
  res["start_mse"] = r.start_mse;
  res["explore_points"] = r.explore_points;
  res["points"] = p.data.h.size();
  res["iterations"] = r.iterations;
  res["exact_warm_start"] = r.exact_warm_start;
  res["hops"] = {{"kink", r.kink_hops},         {"basin", r.basin_hops},
                 {"local", r.local_hops},       {"time_scale", r.time_scale_moves},
                 {"relay_slowdowns", r.relay_slowdowns}, {"relay_speedups", r.relay_speedups}};
  res["on_bound"] = r.on_bound;
  res["mse_at_rounding_floor"] = r.mse_at_rounding_floor;
  ojson widened = ojson::array();
  for (const auto& w : r.widened)
    widened.push_back({{"widen", w.widen}, {"mse", w.mse}, {"max_abs_error", w.max_abs_error}, {"on_bound", w.on_bound}});
  res["widened"] = widened;
  out["result"] = res;
  return out;
}

ojson fit_json(const FitCommandOptions& o) {
  const auto p = fit_problem(o);
  const auto run = run_fit(o, p);
  ojson j = fit_json(o, p, run);
  if (o.certify) j["certificates"] = certify_json(run_certify(o, p, run.result.model, run.result.mse, true));
  return j;
}

}  // namespace ctmc::reports
