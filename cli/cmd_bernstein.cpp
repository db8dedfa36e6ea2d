// ctmc-snn bernstein --activation NAME --domain LO,HI [--rho R | --rho-factor F]
//                    (--N N | --eps E) [--precision BITS] [--cap N] [--bracket R] [--json]
// Checks the paper's Appendix B theorem and corollary for one target
// (proofs_check/bernstein_claims.hpp). Exit 1 when a claim is Refuted.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "command.hpp"
#include "ctmc/activations/activation.hpp"
#include "ctmc/commands/bernstein.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"

namespace ctmc::cli {
namespace {

using proofs_check::verdict_name;

struct BernsteinCli {
  commands::BernsteinOptions opt;
  std::int64_t n_value = 0;
  bool json = false;
};

void print_bounds(const proofs_check::BoundsAtN& b) {
  fmt::print("sup|F_N - psi| at N = {}: in [{:.6e}, {:.6e}] (max near u = {:.6g}, {} evaluations)\n", b.n,
             b.sup.lower, b.sup.upper, b.sup.argmax_u, b.sup.evaluations);
  fmt::print("m_N = max_u E|K/N - u| in [{:.10g}, {:.10g}], m_N sqrt N = {:.6f}\n", b.m_n_lo, b.m_n_hi,
             b.m_n_hi * std::sqrt(double(b.n)));
  fmt::print("paper bound L_h/(2 sqrt N) <= {:.6e}; sharper (L_h/2) m_N <= {:.6e}; asymptotic L_h/(2 sqrt(2 pi N)) = {:.6e}\n",
             b.paper_hi, b.sharper_hi, b.asymptotic);
  fmt::print("corollary: {} — {}\n", verdict_name(b.corollary.verdict), b.corollary.decided_by);
  fmt::print("sharper bound: {} — {}\n", verdict_name(b.sharper.verdict), b.sharper.decided_by);
}

void print_eps_search(const commands::BernsteinResult& r) {
  const auto& s = *r.eps_search;
  const double eps = r.eps;
  if (s.capped)
    fmt::print("smallest N for eps = {:g}: > cap {} ({})\n", eps, r.cap, s.reasoning);
  else if (s.minimal && s.n_lo + 1 == s.n_hi)
    fmt::print("smallest N for eps = {:g}: {} ({})\n", eps, s.n_hi, s.reasoning);
  else
    fmt::print("smallest N for eps = {:g}: in [{}, {}]{} ({})\n", eps, s.n_lo + 1, s.n_hi,
               s.minimal ? " (minimal)" : "", s.reasoning);
  // Above 2^53 the paper's N comes from a double rounded up: a sufficient
  // N, but its trailing digits mean nothing, so it is printed rounded.
  auto n_text = [](std::int64_t n, const char* beyond) {
    if (n == proofs_check::kNBeyondRange) return std::string(beyond);
    return n > (std::int64_t{1} << 53) ? fmt::format("{:.6e} (rounded up)", static_cast<double>(n))
                                       : std::to_string(n);
  };
  fmt::print("paper's sufficient N = {}; sharper bound's sufficient N = {}\n", n_text(s.paper_n, "> 2^62"),
             n_text(s.sharper_n, "> 2^53"));
  fmt::print("claim 2: {} — {}\n", verdict_name(r.claim2.verdict), r.claim2.decided_by);
}

void print_text(const commands::BernsteinResult& r) {
  const auto& lh = r.lipschitz;
  fmt::print("target {} on [{}, {}], rho = {:.10g} (max phi = {:.10g}), MPFI {} bits\n", r.activation, r.domain_lo,
             r.domain_hi, r.rho_double, r.max_phi, r.precision_bits);
  fmt::print("L_h (in u) in [{:.10g}, {:.10g}]  (attained near I = {:.6g})\n", lh.lower, lh.upper, lh.argmax_I);
  fmt::print("claim 1 (all N, symbolic): {} — {}\n", verdict_name(r.claim1_symbolic.verdict),
             r.claim1_symbolic.decided_by);
  for (const auto& p : r.claim1_numeric)
    fmt::print("claim 1 at N = {}, u = {}: {} ({}, flux {:.12g}, gap {:.2e})\n", r.claim1_n,
               solvers::exact_text(p.u), verdict_name(p.verdict), p.method, p.flux, p.max_rel_gap);
  if (r.bounds) print_bounds(*r.bounds);
  if (r.eps_search) print_eps_search(r);
  if (r.voronovskaya)
    for (const auto& v : *r.voronovskaya)
      fmt::print("Voronovskaya at u = {}: N = {:5d}: N (B_N h - h) = {:.8g}, limit u(1-u)h''/2 = {:.8g}, rel diff {:.2e}\n",
                 v.u, v.n, v.scaled, v.limit, v.rel_diff);
  fmt::print("{}\n", r.refuted ? "RESULT: a claim was refuted" : "RESULT: no claim refuted");
}

void run(const BernsteinCli& c) {
  const auto r = commands::run_bernstein(c.opt);
  if (c.json)
    fmt::print("{}\n", commands::to_json(r).dump(2));
  else
    print_text(r);
  if (r.refuted) throw ExitStatus{1};
}

Register reg([](CLI::App& root) {
  auto o = std::make_shared<BernsteinCli>();
  auto* cmd = root.add_subcommand("bernstein", "Check the paper's Bernstein theorem and corollary for one target");
  cmd->add_option("--activation", o->opt.activation, activations::activation_names_help())->required();
  cmd->add_option("--domain", o->opt.domain, "Input interval LO,HI")->required();
  auto* r = cmd->add_option("--rho", o->opt.rho, "Refractory rate rho (> max phi)");
  cmd->add_option("--rho-factor", o->opt.rho_factor, "rho = F * max phi (F > 1; default 2)")->excludes(r);
  auto* n = cmd->add_option("--N", o->n_value, "Chain size N (>= 1): sup error and bounds at N");
  auto* eps = cmd->add_option("--eps", o->opt.eps, "Target error: bracket the smallest N with sup error < eps")->excludes(n);
  cmd->add_option("--precision", o->opt.precision, "MPFI precision in bits")->capture_default_str()
      ->check(CLI::Range(53u, 100000u));
  // Both only steer the --eps search: given without it they would be ignored.
  cmd->add_option("--cap", o->opt.cap, "Largest N the --eps search tries")->capture_default_str()->needs(eps);
  cmd->add_option("--bracket", o->opt.bracket,
                  "Stop bisecting once N_hi - N_lo <= R N_hi (0: down to N_lo + 1 = N_hi)")->capture_default_str()
      ->needs(eps);
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o, n] {
    if (n->count() > 0) o->opt.n = o->n_value;
    if (!o->opt.n && o->opt.eps.empty()) throw InputError("bernstein: give --N N or --eps E");
    run(*o);
  });
});

}  // namespace
}  // namespace ctmc::cli
