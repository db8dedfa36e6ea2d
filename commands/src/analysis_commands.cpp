// bernstein, fit, fit --score, fit --certify (bernstein.hpp, fit.hpp).
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "ctmc/activations/activation.hpp"
#include "ctmc/analysis/fit.hpp"
#include "ctmc/analysis/fit_tables.hpp"
#include "ctmc/proofs_check/bernstein.hpp"
#include "ctmc/proofs_check/bernstein_claims.hpp"
#include "ctmc/commands/bernstein.hpp"
#include "ctmc/commands/fit.hpp"
#include "ctmc/commands/fit_certificates.hpp"
#include "ctmc/commands/limits.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/number_text.hpp"

namespace ctmc::commands {
namespace {

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
  if (o.search.starts < 1 || o.search.starts > kMaxStarts)
    throw InputError(fmt::format("--starts: need 1..{}, got {}", kMaxStarts, o.search.starts));
  if (o.search.max_iterations < 1 || o.search.max_iterations > kMaxIterations)
    throw InputError(fmt::format("--max-iterations: need 1..{}, got {}", kMaxIterations, o.search.max_iterations));
  if (o.search.basin_rounds < 0 || o.search.basin_rounds > kMaxBasinRounds)
    throw InputError(fmt::format("--basin-rounds: need 0..{}, got {}", kMaxBasinRounds, o.search.basin_rounds));
  checked_threads(o.search.threads);
  if (o.samples.empty() && (o.points < 2 || o.points > kMaxPoints))
    throw InputError(fmt::format("--points: need 2..{} grid points, got {}", kMaxPoints, o.points));
  const double rate_bound = o.bounds.rate_bound, min_rate = o.bounds.min_const_rate;
  if (!std::isfinite(rate_bound) || !(rate_bound > 0) || rate_bound > kMaxRateBound)
    throw InputError(fmt::format("--rate-bound: need a finite number in (0, {:g}], got {}", kMaxRateBound,
                                 rate_bound));
  if (!std::isfinite(min_rate) || !(min_rate >= kMinMinRate))
    throw InputError(fmt::format("--min-rate: need a finite number >= {:g}, got {}", kMinMinRate, min_rate));
  if (!(min_rate < rate_bound))
    throw InputError(fmt::format("--min-rate: need min-rate < rate-bound, got {} >= {}", min_rate, rate_bound));
  checked_precision(o.search.mpfr_bits);
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
  p.bounds = o.bounds;
  return p;
}

const char* gradient_name(analysis::GradientMethod g) {
  return g == analysis::GradientMethod::Jet ? "jet" : "analytic";
}

namespace {

// Checks the options; the problem they pose (with rho from --rho or --rho-factor).
proofs_check::BernsteinProblem bernstein_problem(const BernsteinOptions& o, const activations::Activation& act,
                                                 const std::pair<solvers::Rational, solvers::Rational>& dom,
                                                 double* eps) {
  // Exclusions CLI11 also enforces on the command line.
  if (!o.rho.empty() && !o.rho_factor.empty()) throw InputError("--rho-factor: excludes --rho");
  if (o.n && !o.eps.empty()) throw InputError("--eps: excludes --N");
  if (!o.n && o.eps.empty()) throw InputError("bernstein: give --N N or --eps E");
  checked_precision(o.precision);
  std::optional<solvers::Rational> rho, factor;
  if (!o.rho.empty()) rho = solvers::parse_input_value(o.rho, "--rho");
  if (!o.rho_factor.empty()) factor = solvers::parse_input_value(o.rho_factor, "--rho-factor");
  const std::int64_t n = o.n.value_or(0);
  if (o.n && n < 1) throw InputError(fmt::format("--N: must be >= 1 (got {})", n));
  if (o.n && n > kMaxN) throw InputError(fmt::format("--N: at most {} (got {})", kMaxN, n));
  *eps = 0;
  if (!o.eps.empty()) {
    const auto e = solvers::parse_input_value(o.eps, "--eps");
    if (!(e > 0)) throw InputError(fmt::format("--eps: must be > 0 (got {})", o.eps));
    *eps = solvers::to_double(e);
    // The search runs in double: 1e-400 would round to 0 (search silently
    // skipped) and 1e400 to inf (claim 2 "proved" at N = 1).
    if (!(*eps > 0) || !std::isfinite(*eps))
      throw InputError(fmt::format("--eps: must be a positive number within double's range (got {})", o.eps));
  }
  if (o.cap < 1 || o.cap > kMaxN) throw InputError(fmt::format("--cap: must be in [1, {}]", kMaxN));
  return proofs_check::make_problem(act, dom.first, dom.second, rho, factor, o.precision);
}

// Claim 2 from the search for the smallest N with certified sup error < eps.
void search_smallest_n(const BernsteinOptions& o, const proofs_check::BernsteinProblem& p, BernsteinResult& r) {
  proofs_check::EpsSearchOptions eo;
  eo.cap = o.cap;
  if (!(o.bracket >= 0 && o.bracket < 1)) throw InputError("--bracket: must be in [0, 1)");
  eo.rel_stop = o.bracket;
  const auto s = proofs_check::smallest_n(p, r.lipschitz, r.eps, eo);
  r.claim2 = proofs_check::Claim{
      "claim2", fmt::format("sup|F_N - psi| < {} for some N <= {}", r.eps, o.cap),
      s.capped ? Verdict::Unknown : Verdict::Proved,
      s.capped ? s.reasoning : fmt::format("certified sup <= {:.6e} < eps at N = {}", s.upper_at_hi, s.n_hi)};
  if (!s.capped && s.paper_n != proofs_check::kNBeyondRange && s.paper_n < s.n_lo) {
    ++r.refuted;  // the corollary's sufficient N is not sufficient: a finding
    r.paper_sufficient_n_refuted = true;
  }
  r.eps_search = s;
}

}  // namespace

BernsteinResult run_bernstein(const BernsteinOptions& o) {
  const auto act = activations::parse_activation(o.activation);
  const auto dom = solvers::parse_interval(o.domain, "--domain");
  BernsteinResult r;
  const auto p = bernstein_problem(o, act, dom, &r.eps);
  r.activation = act.name;
  r.domain_lo = solvers::exact_text(dom.first);
  r.domain_hi = solvers::exact_text(dom.second);
  r.rho = solvers::exact_text(p.rho);
  r.rho_double = solvers::to_double(p.rho);
  {
    activations::Ivl mx(p.prec);
    p.max_psi(mx);
    r.max_phi = mx.mid();
  }
  r.precision_bits = o.precision;
  r.cap = o.cap;
  r.lipschitz = proofs_check::lipschitz_h(p);
  r.claim1_symbolic = proofs_check::claim1_symbolic(&r.identities);
  if (r.claim1_symbolic.verdict == Verdict::Refuted) ++r.refuted;

  r.claim1_n = o.n.value_or(64);
  if (r.claim1_n <= kNumericClaim1MaxN) {
    const std::vector<solvers::Rational> us = {solvers::Rational(0), solvers::Rational(1, 7), solvers::Rational(1, 2),
                                               solvers::Rational(5, 6), solvers::Rational(1)};
    r.claim1_numeric = proofs_check::claim1_numeric(p, r.claim1_n, us);
    for (const auto& pt : r.claim1_numeric)
      if (pt.verdict == Verdict::Refuted) ++r.refuted;
  }
  if (o.n) {
    proofs_check::SupOptions so;
    so.rel_tol = 1e-3;
    so.max_evals = 100000;
    r.bounds = proofs_check::bounds_at(p, r.lipschitz, *o.n, so);
    if (r.bounds->corollary.verdict == Verdict::Refuted) ++r.refuted;
    if (r.bounds->sharper.verdict == Verdict::Refuted) ++r.refuted;
  }
  if (r.eps > 0) search_smallest_n(o, p, r);
  if (activations::is_smooth(act)) r.voronovskaya = proofs_check::voronovskaya(p, 0.375, {64, 256, 1024, 4096});
  return r;
}

ScoreResult run_score(const FitCommandOptions& o) {
  ScoreResult s{fit_problem(o), load_model(*o.score), {}, std::nullopt};
  s.errors = analysis::evaluate_exactly(s.model, s.problem, o.search.mpfr_bits, "--score " + o.score->source);
  if (o.certify) s.certificates = run_certify(o, s.problem, s.model, s.errors.mse, false);
  return s;
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
    c.optimum = certify_fit_optimum(q, mse, o.search.mpfr_bits, o.search.threads);
  }
  return c;
}

namespace {

// The search's options: o.search with --gradient, and a warm start from a
// model (e.g. a chain trained elsewhere) as start 0 of the multistart, so
// the fit ends no higher than its MSE once clamped into the bounds (up to
// rounding); its own MSE, as given, goes into the output and the meta. A
// general chain with fewer states than --states grows as the tables' rows
// do: embedded (same flux), with the splits of its (n-1)-state form as
// starts 1, 2, ...
void prepare_search(const FitCommandOptions& o, const analysis::FitProblem& p, FitRun& run) {
  analysis::FitOptions& fo = run.options;
  fo = o.search;
  if (o.gradient == "jet")
    fo.gradient = analysis::GradientMethod::Jet;
  else if (o.gradient == "analytic")
    fo.gradient = analysis::GradientMethod::Analytic;
  else
    throw InputError(fmt::format("--gradient: unknown method '{}' (analytic or jet)", o.gradient));
  if (!o.warm_start) return;
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
  run.warm_mse = analysis::evaluate_exactly(given, p, o.search.mpfr_bits, source).mse;
}

}  // namespace

FitCommandResult run_fit(const FitCommandOptions& o) {
  FitCommandResult out{fit_problem(o), {}, std::nullopt};
  const analysis::FitProblem& p = out.problem;
  FitRun& run = out.run;
  prepare_search(o, p, run);
  run.result = analysis::fit(p, run.options);
  auto& r = run.result;
  if (run.warm_mse) {
    auto& w = r.model.meta["warm_start"];
    w["file"] = o.warm_start->source;
    w["mse"] = *run.warm_mse;
    w["states"] = run.warm_states;
    w["split_starts"] = run.options.seeded_starts.size();
    w["clamped_into_bounds"] = r.warm_start_clamped;
  }
  if (!o.output.empty()) solvers::write_model_file(r.model, o.output);
  if (o.certify) out.certificates = run_certify(o, p, r.model, r.mse, true);
  return out;
}

}  // namespace ctmc::commands
