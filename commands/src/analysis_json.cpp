// The documents of bernstein, fit, fit --score and fit --certify.
#include <fmt/format.h>

#include <cmath>

#include "ctmc/analysis/fit.hpp"
#include "ctmc/commands/bernstein.hpp"
#include "ctmc/commands/fit.hpp"
#include "ctmc/commands/fit_certificates.hpp"
#include "ctmc/solvers/exact.hpp"

namespace ctmc::commands {
namespace {

void put_claim(DocumentWriter& w, const std::string& key, const proofs_check::Claim& c,
               const std::vector<std::string>* identities = nullptr) {
  const Object claim(w, key);
  put(w, "id", c.id);
  put(w, "statement", c.statement);
  put(w, "verdict", proofs_check::verdict_name(c.verdict));
  put(w, "decided_by", c.decided_by);
  if (identities) put(w, "identities", *identities);
}

void put_pair(DocumentWriter& w, const std::string& key, double a, double b) {
  const Array pair(w, key);
  put(w, "", a);
  put(w, "", b);
}

void put_bounds(DocumentWriter& w, const proofs_check::BoundsAtN& b) {
  {
    const Object sup(w, "sup_error");
    put(w, "N", b.n);
    put(w, "lower", b.sup.lower);
    put(w, "upper", b.sup.upper);
    put(w, "argmax_u", b.sup.argmax_u);
    put(w, "evaluations", b.sup.evaluations);
    put(w, "converged", b.sup.converged);
  }
  {
    const Object m(w, "m_N");
    put(w, "lower", b.m_n_lo);
    put(w, "upper", b.m_n_hi);
    put(w, "times_sqrt_N", b.m_n_hi * std::sqrt(double(b.n)));
  }
  {
    const Object paper(w, "paper_bound");
    put(w, "lower", b.paper_lo);
    put(w, "upper", b.paper_hi);
  }
  {
    const Object sharper(w, "sharper_bound");
    put(w, "lower", b.sharper_lo);
    put(w, "upper", b.sharper_hi);
  }
  put(w, "asymptotic_L_over_2sqrt2piN", b.asymptotic);
  put_claim(w, "corollary", b.corollary);
  put_claim(w, "sharper", b.sharper);
}

// A sufficient N, or null beyond the range it can be represented in.
std::optional<std::int64_t> sufficient_n(std::int64_t n) {
  return n == proofs_check::kNBeyondRange ? std::nullopt : std::optional<std::int64_t>(n);
}

void put_eps_search(DocumentWriter& w, const BernsteinResult& r) {
  const auto& s = *r.eps_search;
  {
    const Object search(w, "eps_search");
    put(w, "eps", r.eps);
    put(w, "N_lo", s.n_lo);
    put(w, "N_hi", s.capped ? std::nullopt : std::optional<std::int64_t>(s.n_hi));
    put(w, "minimal", s.minimal);
    put(w, "capped", s.capped);
    put(w, "cap", r.cap);
    put_pair(w, "sup_at_N_hi", s.lower_at_hi, s.upper_at_hi);
    put_pair(w, "sup_at_cap", s.lower_at_cap, s.upper_at_cap);
    put(w, "paper_sufficient_N", sufficient_n(s.paper_n));
    put(w, "sharper_sufficient_N", sufficient_n(s.sharper_n));
    put(w, "N_tested", s.tested);
    put(w, "reasoning", s.reasoning);
  }
  put_claim(w, "claim2", r.claim2);
  if (r.paper_sufficient_n_refuted) put(w, "paper_sufficient_N_refuted", true);
}

}  // namespace

void write(DocumentWriter& w, const BernsteinResult& r) {
  const Object doc(w, "");
  put(w, "activation", r.activation);
  put(w, "domain", std::vector<std::string>{r.domain_lo, r.domain_hi});
  put(w, "rho", r.rho);
  put(w, "rho_double", r.rho_double);
  put(w, "max_phi", r.max_phi);
  put(w, "precision_bits", r.precision_bits);
  {
    const Object lh(w, "L_h");
    put(w, "lower", r.lipschitz.lower);
    put(w, "upper", r.lipschitz.upper);
    put(w, "argmax_I", r.lipschitz.argmax_I);
  }
  put_claim(w, "claim1_symbolic", r.claim1_symbolic, &r.identities);
  {
    const Array points(w, "claim1_numeric");
    for (const auto& pt : r.claim1_numeric) {
      const Object point(w, "");
      put(w, "N", r.claim1_n);
      put(w, "u", solvers::exact_text(pt.u));
      put(w, "method", pt.method);
      put(w, "flux", pt.flux);
      put(w, "max_rel_gap", pt.max_rel_gap);
      put(w, "verdict", proofs_check::verdict_name(pt.verdict));
    }
  }
  if (r.bounds) put_bounds(w, *r.bounds);
  if (r.eps_search) put_eps_search(w, r);
  if (r.voronovskaya) {
    const Array rows(w, "voronovskaya");
    for (const auto& x : *r.voronovskaya) {
      const Object row(w, "");
      put(w, "N", x.n);
      put(w, "u", x.u);
      put(w, "N_times_BNh_minus_h", x.scaled);
      put(w, "limit", x.limit);
      put(w, "rel_diff", x.rel_diff);
    }
  }
  put(w, "refuted", r.refuted);
}

namespace {

void put_certificates(DocumentWriter& w, const std::string& key, const CertifyRun& c) {
  const Object doc(w, key);
  {
    const Object sup(w, "sup_abs_error");
    if (c.sup) {
      put(w, "lower", c.sup->lower);
      put(w, "upper", c.sup->upper);
      put(w, "at", c.sup->argmax);
      put(w, "converged", c.sup->converged);
      put(w, "cells", c.sup->cells);
    } else {
      put(w, "undefined", c.sup_error);
    }
  }
  if (!c.optimum) {
    w.null("optimality");
    return;
  }
  const Object optimality(w, "optimality");
  put(w, "family", analysis::family_name(*c.family));
  put(w, "lower_bound", c.optimum->lower_bound);
  put(w, "gap", c.optimum->gap);
  put(w, "certified", c.optimum->certified);
  put(w, "rel_gap", c.optimum->rel_gap);
  put(w, "boxes", c.optimum->boxes);
  put(w, "budget_exhausted", c.optimum->exhausted);
  put(w, "seconds", c.optimum->seconds);
  {
    // Every box accounted for: roots + 2 split = pruned + split + unsplittable + open.
    const Object acc(w, "boxes_accounted");
    put(w, "roots", c.optimum->roots);
    put(w, "pruned", c.optimum->pruned);
    put(w, "split", c.optimum->split);
    put(w, "unsplittable", c.optimum->unsplittable);
    put(w, "open", c.optimum->open);
    put(w, "shrunk_to_faces", c.optimum->shrunk);
    put(w, "pruned_as_mirror_images", c.optimum->mirrored);
  }
  put(w, "best_known_improved", !c.optimum->best_centre.empty());
  if (!c.optimum->best_centre.empty()) put(w, "improved_mse", c.optimum->incumbent);
}

void put_fit_figures(DocumentWriter& w, const FitCommandOptions& o, const FitCommandResult& out) {
  const auto& r = out.run.result;
  const auto& p = out.problem;
  const Object res(w, "result");
  put(w, "family", analysis::family_name(r.family));
  put(w, "target", fmt::format("{} * {}", o.alpha, p.activation.name));
  put(w, "data", p.data.description);
  std::vector<std::string> names;
  for (const auto& q : r.params) names.push_back(q.name);
  put(w, "parameter_names", names);
  put(w, "theta", r.theta);
  put(w, "mse", r.mse);
  put(w, "mse_double", r.mse_double);
  put(w, "max_abs_error", r.max_abs_error);
  put(w, "max_abs_error_at", r.max_abs_error_at);
  put(w, "precision_bits", o.search.mpfr_bits);
  put(w, "starts", r.starts_run);
  put(w, "seed", o.search.seed);
  put(w, "best_start", r.best_start);
  put(w, "within_1pct", r.within_1pct);
  put(w, "start_mse", r.start_mse);
  put(w, "explore_points", r.explore_points);
  put(w, "points", p.data.h.size());
  put(w, "iterations", r.iterations);
  put(w, "exact_warm_start", r.exact_warm_start);
  {
    const Object hops(w, "hops");
    put(w, "kink", r.kink_hops);
    put(w, "basin", r.basin_hops);
    put(w, "local", r.local_hops);
    put(w, "time_scale", r.time_scale_moves);
    put(w, "relay_slowdowns", r.relay_slowdowns);
    put(w, "relay_speedups", r.relay_speedups);
  }
  put(w, "on_bound", r.on_bound);
  put(w, "mse_at_rounding_floor", r.mse_at_rounding_floor);
  const Array widened(w, "widened");
  for (const auto& x : r.widened) {
    const Object fit(w, "");
    put(w, "widen", x.widen);
    put(w, "mse", x.mse);
    put(w, "max_abs_error", x.max_abs_error);
    put(w, "on_bound", x.on_bound);
  }
}

}  // namespace

void write(DocumentWriter& w, const CertifyRun& c) { put_certificates(w, "", c); }

void write(DocumentWriter& w, const FitCommandOptions& o, const FitCommandResult& r) {
  const Object doc(w, "");
  put(w, "model", solvers::model_to_json(r.run.result.model));
  put_fit_figures(w, o, r);
  if (r.certificates) put_certificates(w, "certificates", *r.certificates);
}

void write(DocumentWriter& w, const FitCommandOptions& o, const ScoreResult& r) {
  const Object doc(w, "");
  put(w, "model", o.score->source);
  put(w, "states", r.model.size());
  put(w, "target", fmt::format("{} * {}", o.alpha, r.problem.activation.name));
  put(w, "data", r.problem.data.description);
  put(w, "mse", r.errors.mse);
  put(w, "max_abs_error", r.errors.max_abs_error);
  put(w, "max_abs_error_at", r.errors.max_abs_error_at);
  put(w, "precision_bits", o.search.mpfr_bits);
  if (r.certificates) put_certificates(w, "certificates", *r.certificates);
}

nlohmann::ordered_json to_json(const BernsteinResult& r) { return json_of(r); }
nlohmann::ordered_json to_json(const CertifyRun& c) { return json_of(c); }

nlohmann::ordered_json to_json(const FitCommandResult& r) {
  auto j = solvers::model_to_json(r.run.result.model);
  if (r.certificates) j["meta"]["certificates"] = to_json(*r.certificates);
  return j;
}

nlohmann::ordered_json to_json(const FitCommandOptions& o, const ScoreResult& r) {
  JsonWriter w;
  write(w, o, r);
  return w.take();
}

}  // namespace ctmc::commands
