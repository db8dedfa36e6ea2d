// ctmc-snn simulate neuron MODEL.json --H h --T t --trials n [--seed s]
//     [--threads k] [--start stationary|STATE] [--alpha a] [--max-memory GIB] [--json]
//
// Exact Gillespie simulation of one neuron at a fixed input H over [0, T]
// (sim/neurons/ssa.hpp), set beside the exact values from solvers/: the stationary
// flux F(H) (GTH), the exact E[N(T)] and Var N(T) from the same initial
// distribution (Van Loan block exponential), and the asymptotic rate and
// variance rate (Markovian arrival process). The agreement is printed in
// standard errors: z = (empirical - exact) / se, the mean's se from the exact
// Var N(T), the variance's from the sample's fourth moment (not judged when
// every trial gave the same count). With at least 100 trials the command
// exits 1 when |z| >= 4.4 for the mean or the variance (a false alarm rate of
// about 1e-5 per statistic under the normal approximation).
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "command.hpp"
#include "ctmc/commands/simulate_neuron.hpp"
#include "ctmc/core/errors.hpp"

namespace ctmc::cli {
namespace {

struct Options {
  std::string model_path;
  commands::NeuronSimOptions opt;
  double max_memory_gib = 4;
  bool json = false;
};

// z as a number of standard errors; "inf" where the exact value has no
// spread and the sample differs from it, "n/a" where it cannot be judged.
std::string z_text(double z) {
  if (std::isnan(z)) return "n/a";
  if (std::abs(z) >= 1e6) return z > 0 ? "inf" : "-inf";
  return fmt::format("{:.2f}", z);
}

void print_text(const Options& c, const commands::NeuronSimResult& r) {
  const auto& e = r.empirical;
  const auto& x = r.exact;
  const auto& a = r.agreement;
  fmt::print("model {} at H = {}, T = {}, alpha = {}: {} trials (seed {}, start {}), {} transitions\n", c.model_path,
             r.H, r.T, r.alpha, r.trials, r.seed, r.start, r.transitions);
  fmt::print("{:<30}{:>16}{:>16}{:>12}\n", "", "empirical", "exact", "z (se)");
  fmt::print("{:<30}{:>16.6g}{:>16.6g}{:>12}\n", "E[N(T)]", e.mean_count, x.mean_count, z_text(a.z_mean));
  fmt::print("{:<30}{:>16.6g}{:>16.6g}{:>12}\n", "Var N(T)", e.variance_count, x.variance_count,
             z_text(a.z_variance.value_or(NAN)));
  fmt::print("{:<30}{:>16.6g}{:>16.6g}\n", "rate N(T)/T", e.rate, x.rate);
  fmt::print("{:<30}{:>16}{:>16.6g}\n", r.alpha == 1 ? "stationary flux F(H)" : "stationary flux alpha F(H)", "",
             x.stationary_flux);
  fmt::print("{:<30}{:>16.6g}{:>16.6g}\n", "Var N(T)/T (exact: T -> inf)", e.variance_per_time,
             x.asymptotic_variance_rate);
  fmt::print("state occupancy (empirical / stationary):");
  for (const auto& o : r.occupancy) fmt::print(" {} {:.4f}/{:.4f}", o.state, o.empirical, o.stationary);
  fmt::print("\n");
  const char* relation = a.ok ? "<" : ">=";
  if (a.checked && !a.variance_tested)
    fmt::print("agreement: |z| {} {} for the mean ({}); the variance is not judged: every trial counted {} "
               "spikes, so the sample gives no standard error for it\n",
               relation, a.threshold, a.ok ? "ok" : "FAILED", e.mean_count);
  else if (a.checked)
    fmt::print("agreement: |z| {} {} for the mean and the variance ({})\n", relation, a.threshold,
               a.ok ? "ok" : "FAILED");
  else
    fmt::print("agreement not checked: fewer than {} trials\n", commands::kMinCheckedTrials);
}

void run(Options& c) {
  if (!(c.max_memory_gib > 0) || !(c.max_memory_gib <= 1e6))
    throw InputError(fmt::format("--max-memory: {} is not a number of GiB in (0, 1e6]", c.max_memory_gib));
  c.opt.max_memory_bytes = static_cast<std::uint64_t>(c.max_memory_gib * static_cast<double>(std::uint64_t(1) << 30));
  const auto r = commands::run_simulate_neuron(commands::model_file(c.model_path), c.opt);
  if (c.json)
    fmt::print("{}\n", commands::to_json(r).dump(2));
  else
    print_text(c, r);
  if (!r.agreement.ok) throw ExitStatus{1};
}

Register reg([](CLI::App& root) {
  auto* group = subcommand_group(root, "simulate", "Simulate CTMC neurons and networks");
  auto o = std::make_shared<Options>();
  auto* cmd = group->add_subcommand(
      "neuron", "Exact Gillespie simulation of one neuron at a fixed H: N(T) statistics beside the exact moments");
  cmd->add_option("model", o->model_path, "Model JSON file")->required();
  cmd->add_option("--H", o->opt.h, "Input H (exact decimal or p/q)")->required();
  cmd->add_option("--T", o->opt.T, "Horizon T of each trial")->required();
  cmd->add_option("--trials", o->opt.trials, "Independent trials")->check(kNoMinus)->capture_default_str();
  cmd->add_option("--seed", o->opt.seed, "Random seed (trial k uses stream k)")->check(kNoMinus)->capture_default_str();
  cmd->add_option("--threads", o->opt.threads, "Threads (0: all cores, or OMP_NUM_THREADS if set); results do not depend on it")
      ->capture_default_str()
      ->check(kThreadCount);
  cmd->add_option("--start", o->opt.start, "Initial state: 'stationary' (a draw from pi(H)) or a state name/index")
      ->capture_default_str();
  cmd->add_option("--max-memory", o->max_memory_gib, "Refuse more trials than fit in this much memory (GiB)")
      ->capture_default_str();
  cmd->add_option("--alpha", o->opt.alpha, "Multiply every rate by alpha (layer rate scale)")->capture_default_str();
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o] { run(*o); });
});

}  // namespace
}  // namespace ctmc::cli
