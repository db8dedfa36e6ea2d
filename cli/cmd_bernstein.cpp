// ctmc-snn bernstein --activation NAME --domain LO,HI [--rho R | --rho-factor F]
//                    (--N N | --eps E) [--precision BITS] [--cap N] [--bracket R] [--json]
// Checks the paper's Appendix B theorem and corollary for one target
// (proofs_check/bernstein_claims.hpp). Exit 1 when a claim is Refuted.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "ctmc/analysis/activation.hpp"
#include "ctmc/proofs_check/bernstein.hpp"
#include "ctmc/proofs_check/bernstein_claims.hpp"
#include "ctmc/solvers/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/model.hpp"

namespace ctmc::cli {
namespace {

using proofs_check::Verdict;
using ojson = nlohmann::ordered_json;

struct BernsteinOptions {
  std::string activation, domain, rho, rho_factor, eps_text;
  std::int64_t n = 0;
  bool has_n = false;
  unsigned precision = 128;
  std::int64_t cap = 1000000;
  double bracket = 0;
  bool json = false;
};

constexpr std::int64_t kNumericClaim1MaxN = 4096;
// Memory: the evaluator caches kappa_i for every i (about 40 bytes each).
constexpr std::int64_t kMaxN = 20000000;

ojson claim_json(const proofs_check::Claim& c) { return proofs_check::to_json(c); }

void run(const BernsteinOptions& o) {
  const auto act = analysis::parse_activation(o.activation);
  const auto dom = solvers::parse_input_list(o.domain, "--domain");
  if (dom.size() != 2) throw InputError("--domain: expected LO,HI (two numbers)");
  std::optional<solvers::Rational> rho, factor;
  if (!o.rho.empty()) rho = solvers::parse_input_value(o.rho, "--rho");
  if (!o.rho_factor.empty()) factor = solvers::parse_input_value(o.rho_factor, "--rho-factor");
  if (o.has_n && o.n < 1) throw InputError(fmt::format("--N: must be >= 1 (got {})", o.n));
  if (o.has_n && o.n > kMaxN) throw InputError(fmt::format("--N: at most {} (got {})", kMaxN, o.n));
  double eps = 0;
  if (!o.eps_text.empty()) {
    const auto e = solvers::parse_input_value(o.eps_text, "--eps");
    if (!(e > 0)) throw InputError(fmt::format("--eps: must be > 0 (got {})", o.eps_text));
    eps = solvers::to_double(e);
    // The search runs in double: 1e-400 would round to 0 (search silently
    // skipped) and 1e400 to inf (claim 2 "proved" at N = 1).
    if (!(eps > 0) || !std::isfinite(eps))
      throw InputError(fmt::format("--eps: must be a positive number within double's range (got {})", o.eps_text));
  }
  if (o.cap < 1 || o.cap > kMaxN) throw InputError(fmt::format("--cap: must be in [1, {}]", kMaxN));
  const auto p = proofs_check::make_problem(act, dom[0], dom[1], rho, factor, o.precision);

  int refuted = 0;
  ojson out;
  out["activation"] = act.name;
  out["domain"] = {solvers::exact_text(dom[0]), solvers::exact_text(dom[1])};
  out["rho"] = solvers::exact_text(p.rho);
  out["rho_double"] = solvers::to_double(p.rho);
  {
    analysis::Ivl mx(p.prec);
    p.max_psi(mx);
    out["max_phi"] = mx.mid();
  }
  out["precision_bits"] = o.precision;
  const auto lh = proofs_check::lipschitz_h(p);
  out["L_h"] = {{"lower", lh.lower}, {"upper", lh.upper}, {"argmax_I", lh.argmax_I}};

  std::vector<std::string> ids;
  const auto c1 = proofs_check::claim1_symbolic(&ids);
  if (c1.verdict == Verdict::Refuted) ++refuted;
  out["claim1_symbolic"] = claim_json(c1);
  out["claim1_symbolic"]["identities"] = ids;

  const std::int64_t n_numeric = o.has_n ? o.n : 64;
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

  if (o.has_n) {
    proofs_check::SupOptions so;
    so.rel_tol = 1e-3;
    so.max_evals = 100000;
    const auto b = proofs_check::bounds_at(p, lh, o.n, so);
    if (b.corollary.verdict == Verdict::Refuted) ++refuted;
    if (b.sharper.verdict == Verdict::Refuted) ++refuted;
    out["sup_error"] = {{"N", o.n}, {"lower", b.sup.lower}, {"upper", b.sup.upper}, {"argmax_u", b.sup.argmax_u},
                        {"evaluations", b.sup.evaluations}, {"converged", b.sup.converged}};
    out["m_N"] = {{"lower", b.m_n_lo}, {"upper", b.m_n_hi}, {"times_sqrt_N", b.m_n_hi * std::sqrt(double(o.n))}};
    out["paper_bound"] = {{"lower", b.paper_lo}, {"upper", b.paper_hi}};
    out["sharper_bound"] = {{"lower", b.sharper_lo}, {"upper", b.sharper_hi}};
    out["asymptotic_L_over_2sqrt2piN"] = b.asymptotic;
    out["corollary"] = claim_json(b.corollary);
    out["sharper"] = claim_json(b.sharper);
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
    out["claim2"] = claim_json(c2);
    if (!s.capped && s.paper_n != proofs_check::kNBeyondRange && s.paper_n < s.n_lo) {
      ++refuted;  // the corollary's sufficient N is not sufficient: a finding
      out["paper_sufficient_N_refuted"] = true;
    }
  }
  if (analysis::is_smooth(act)) {
    ojson v = ojson::array();
    for (const auto& r : proofs_check::voronovskaya(p, 0.375, {64, 256, 1024, 4096}))
      v.push_back({{"N", r.n}, {"u", r.u}, {"N_times_BNh_minus_h", r.scaled}, {"limit", r.limit},
                   {"rel_diff", r.rel_diff}});
    out["voronovskaya"] = v;
  }
  out["refuted"] = refuted;

  if (o.json) {
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("target {} on [{}, {}], rho = {:.10g} (max phi = {:.10g}), MPFI {} bits\n", act.name,
               solvers::exact_text(dom[0]), solvers::exact_text(dom[1]), solvers::to_double(p.rho),
               out["max_phi"].get<double>(), o.precision);
    fmt::print("L_h (in u) in [{:.10g}, {:.10g}]  (attained near I = {:.6g})\n", lh.lower, lh.upper, lh.argmax_I);
    fmt::print("claim 1 (all N, symbolic): {} — {}\n", verdict_name(c1.verdict), c1.decided_by);
    for (const auto& r : c1n)
      fmt::print("claim 1 at N = {}, u = {}: {} ({}, flux {:.12g}, gap {:.2e})\n", r["N"].get<std::int64_t>(),
                 r["u"].get<std::string>(), r["verdict"].get<std::string>(), r["method"].get<std::string>(),
                 r["flux"].get<double>(), r["max_rel_gap"].get<double>());
    if (out.contains("sup_error")) {
      const auto& s = out["sup_error"];
      fmt::print("sup|F_N - psi| at N = {}: in [{:.6e}, {:.6e}] (max near u = {:.6g}, {} evaluations)\n", o.n,
                 s["lower"].get<double>(), s["upper"].get<double>(), s["argmax_u"].get<double>(),
                 s["evaluations"].get<std::int64_t>());
      fmt::print("m_N = max_u E|K/N - u| in [{:.10g}, {:.10g}], m_N sqrt N = {:.6f}\n", out["m_N"]["lower"].get<double>(),
                 out["m_N"]["upper"].get<double>(), out["m_N"]["times_sqrt_N"].get<double>());
      fmt::print("paper bound L_h/(2 sqrt N) <= {:.6e}; sharper (L_h/2) m_N <= {:.6e}; asymptotic L_h/(2 sqrt(2 pi N)) = {:.6e}\n",
                 out["paper_bound"]["upper"].get<double>(), out["sharper_bound"]["upper"].get<double>(),
                 out["asymptotic_L_over_2sqrt2piN"].get<double>());
      fmt::print("corollary: {} — {}\n", out["corollary"]["verdict"].get<std::string>(),
                 out["corollary"]["decided_by"].get<std::string>());
      fmt::print("sharper bound: {} — {}\n", out["sharper"]["verdict"].get<std::string>(),
                 out["sharper"]["decided_by"].get<std::string>());
    }
    if (out.contains("eps_search")) {
      const auto& s = out["eps_search"];
      if (s["capped"].get<bool>())
        fmt::print("smallest N for eps = {:g}: > cap {} ({})\n", eps, o.cap, s["reasoning"].get<std::string>());
      else if (s["minimal"].get<bool>() && s["N_lo"].get<std::int64_t>() + 1 == s["N_hi"].get<std::int64_t>())
        fmt::print("smallest N for eps = {:g}: {} ({})\n", eps, s["N_hi"].get<std::int64_t>(),
                   s["reasoning"].get<std::string>());
      else
        fmt::print("smallest N for eps = {:g}: in [{}, {}]{} ({})\n", eps, s["N_lo"].get<std::int64_t>() + 1,
                   s["N_hi"].get<std::int64_t>(), s["minimal"].get<bool>() ? " (minimal)" : "",
                   s["reasoning"].get<std::string>());
      // Above 2^53 the paper's N comes from a double rounded up: a sufficient
      // N, but its trailing digits mean nothing, so it is printed rounded.
      auto n_text = [](const ojson& n, const char* beyond) {
        if (n.is_null()) return std::string(beyond);
        const auto v = n.get<std::int64_t>();
        return v > (std::int64_t{1} << 53) ? fmt::format("{:.6e} (rounded up)", static_cast<double>(v))
                                           : std::to_string(v);
      };
      fmt::print("paper's sufficient N = {}; sharper bound's sufficient N = {}\n",
                 n_text(s["paper_sufficient_N"], "> 2^62"), n_text(s["sharper_sufficient_N"], "> 2^53"));
      fmt::print("claim 2: {} — {}\n", out["claim2"]["verdict"].get<std::string>(),
                 out["claim2"]["decided_by"].get<std::string>());
    }
    if (out.contains("voronovskaya")) {
      for (const auto& r : out["voronovskaya"])
        fmt::print("Voronovskaya at u = {}: N = {:5d}: N (B_N h - h) = {:.8g}, limit u(1-u)h''/2 = {:.8g}, rel diff {:.2e}\n",
                   r["u"].get<double>(), r["N"].get<std::int64_t>(), r["N_times_BNh_minus_h"].get<double>(),
                   r["limit"].get<double>(), r["rel_diff"].get<double>());
    }
    fmt::print("{}\n", refuted ? "RESULT: a claim was refuted" : "RESULT: no claim refuted");
  }
  if (refuted) throw ExitStatus{1};
}

Register reg([](CLI::App& root) {
  auto o = std::make_shared<BernsteinOptions>();
  auto* cmd = root.add_subcommand("bernstein", "Check the paper's Bernstein theorem and corollary for one target");
  cmd->add_option("--activation", o->activation, analysis::activation_names_help())->required();
  cmd->add_option("--domain", o->domain, "Input interval LO,HI")->required();
  auto* r = cmd->add_option("--rho", o->rho, "Refractory rate rho (> max phi)");
  cmd->add_option("--rho-factor", o->rho_factor, "rho = F * max phi (F > 1; default 2)")->excludes(r);
  auto* n = cmd->add_option("--N", o->n, "Chain size N (>= 1): sup error and bounds at N");
  auto* eps = cmd->add_option("--eps", o->eps_text, "Target error: bracket the smallest N with sup error < eps")->excludes(n);
  cmd->add_option("--precision", o->precision, "MPFI precision in bits")->capture_default_str()
      ->check(CLI::Range(53u, 100000u));
  // Both only steer the --eps search: given without it they would be ignored.
  cmd->add_option("--cap", o->cap, "Largest N the --eps search tries")->capture_default_str()->needs(eps);
  cmd->add_option("--bracket", o->bracket,
                  "Stop bisecting once N_hi - N_lo <= R N_hi (0: down to N_lo + 1 = N_hi)")->capture_default_str()
      ->needs(eps);
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o, n] {
    o->has_n = n->count() > 0;
    if (!o->has_n && o->eps_text.empty()) throw InputError("bernstein: give --N N or --eps E");
    run(*o);
  });
});

}  // namespace
}  // namespace ctmc::cli
