// ctmc-snn bernstein --activation NAME --domain LO,HI [--rho R | --rho-factor F]
//                    (--N N | --eps E) [--precision BITS] [--cap N] [--bracket R] [--json]
// Checks the paper's Appendix B theorem and corollary for one target
// (proofs_check/bernstein_claims.hpp). Exit 1 when a claim is Refuted.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "ctmc/activations/activation.hpp"
#include "ctmc/reports/commands.hpp"
#include "ctmc/core/errors.hpp"

namespace ctmc::cli {
namespace {

using ojson = nlohmann::ordered_json;

struct BernsteinCli {
  reports::BernsteinOptions opt;
  std::int64_t n_value = 0;
  bool json = false;
};

void run(const BernsteinCli& c) {
  const auto& o = c.opt;
  const ojson out = reports::bernstein_json(o);
  const int refuted = out["refuted"].get<int>();
  if (c.json) {
    fmt::print("{}\n", out.dump(2));
  } else {
    const auto& lh = out["L_h"];
    const auto& c1 = out["claim1_symbolic"];
    fmt::print("target {} on [{}, {}], rho = {:.10g} (max phi = {:.10g}), MPFI {} bits\n",
               out["activation"].get<std::string>(), out["domain"][0].get<std::string>(),
               out["domain"][1].get<std::string>(), out["rho_double"].get<double>(), out["max_phi"].get<double>(),
               o.precision);
    fmt::print("L_h (in u) in [{:.10g}, {:.10g}]  (attained near I = {:.6g})\n", lh["lower"].get<double>(),
               lh["upper"].get<double>(), lh["argmax_I"].get<double>());
    fmt::print("claim 1 (all N, symbolic): {} — {}\n", c1["verdict"].get<std::string>(),
               c1["decided_by"].get<std::string>());
    for (const auto& r : out["claim1_numeric"])
      fmt::print("claim 1 at N = {}, u = {}: {} ({}, flux {:.12g}, gap {:.2e})\n", r["N"].get<std::int64_t>(),
                 r["u"].get<std::string>(), r["verdict"].get<std::string>(), r["method"].get<std::string>(),
                 r["flux"].get<double>(), r["max_rel_gap"].get<double>());
    if (out.contains("sup_error")) {
      const auto& s = out["sup_error"];
      fmt::print("sup|F_N - psi| at N = {}: in [{:.6e}, {:.6e}] (max near u = {:.6g}, {} evaluations)\n", *o.n,
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
      const double eps = s["eps"].get<double>();
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
