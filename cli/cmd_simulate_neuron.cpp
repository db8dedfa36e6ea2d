// ctmc-snn simulate neuron MODEL.json --H h --T t --trials n [--seed s]
//     [--threads k] [--start stationary|STATE] [--alpha a] [--json]
//
// Exact Gillespie simulation of one neuron at a fixed input H over [0, T]
// (sim/ssa.hpp), set beside the exact values from solvers/: the stationary
// flux F(H) (GTH), the exact E[N(T)] and Var N(T) from the same initial
// distribution (Van Loan block exponential), and the asymptotic rate and
// variance rate (Markovian arrival process). The agreement is printed in
// standard errors: z = (empirical - exact) / se, the mean's se from the exact
// Var N(T), the variance's from the sample's fourth moment (not judged when
// every trial gave the same count). With at least 100 trials the command
// exits 1 when |z| >= 4.4 for the mean or the variance (a false alarm rate of
// about 1e-5 per statistic under the normal approximation).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "ctmc/sim/ssa.hpp"
#include "ctmc/solvers/counting.hpp"
#include "ctmc/solvers/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/stationary.hpp"

namespace ctmc::cli {
namespace {

constexpr double kZ = 4.4;            // two-sided false-alarm rate 1.1e-5 per statistic
constexpr std::size_t kMinChecked = 100;  // below this the variance's se is too rough to judge
// Work bounds: more trials, or more expected transitions over all trials, than
// this is a typo (--T 1e300) and would run for days or exhaust memory.
constexpr std::size_t kMaxTrials = 1000000000;    // 1e9
constexpr double kMaxExpectedTransitions = 1e11;  // max exit rate x alpha x T x trials

struct Options {
  std::string model_path, h_text, start = "stationary";
  double T = 0, alpha = 1;
  std::size_t trials = 1000;
  unsigned long long seed = 1;
  int threads = 0;
  bool json = false;
};

std::size_t parse_start(const std::string& text, const solvers::Model& m) {
  for (std::size_t i = 0; i < m.size(); ++i)
    if (m.states[i] == text) return i;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (!text.empty() && *end == '\0' && errno == 0 && v < m.size()) return static_cast<std::size_t>(v);
  throw InputError(fmt::format("--start: '{}' is neither 'stationary' nor a state of the model (name or index < {})",
                               text, m.size()));
}

void run(const Options& o) {
  if (!std::isfinite(o.T) || o.T <= 0) throw InputError(fmt::format("--T: must be a finite time > 0, got {}", o.T));
  if (o.trials < 2) throw InputError("--trials: must be >= 2 (the variance needs two trials)");
  if (o.trials > kMaxTrials) throw InputError(fmt::format("--trials: {} is too many (at most {})", o.trials, kMaxTrials));
  if (o.threads < 0 || o.threads > kMaxThreads)
    throw InputError(fmt::format("--threads: {} is not in 0..{} (0 = all cores)", o.threads, kMaxThreads));
  if (!std::isfinite(o.alpha) || o.alpha <= 0) throw InputError("--alpha: must be finite and > 0");
  const auto model = solvers::read_model_file(o.model_path);
  const auto H = solvers::parse_input_value(o.h_text, "--H");
  {
    // Refuse before simulating when the expected number of transitions (the
    // fastest state's exit rate bounds it) is beyond the budget.
    const sim::SsaChain chain(model, H, o.alpha);
    double max_rate = 0;
    for (std::size_t i = 0; i < chain.size(); ++i) max_rate = std::max(max_rate, chain.exit_rate(i));
    const double work = max_rate * o.T * static_cast<double>(o.trials);
    if (!(work <= kMaxExpectedTransitions))
      throw InputError(fmt::format("--T/--trials: up to {:.3g} transitions expected (max exit rate {:.3g} x T {:g} x {} "
                                   "trials), beyond the budget of {:.0e}; lower --T or --trials",
                                   work, max_rate, o.T, o.trials, kMaxExpectedTransitions));
  }

  sim::SsaOptions so;
  so.T = o.T;
  so.trials = o.trials;
  so.seed = o.seed;
  so.threads = o.threads;
  so.rate_scale = o.alpha;
  if (o.start != "stationary") {
    so.start = sim::StartMode::State;
    so.start_state = parse_start(o.start, model);
  }
  const auto run = sim::simulate_neuron(model, H, so, o.model_path);
  const auto st = sim::count_stats(run.counts[0]);

  // Exact values. Scaling all rates by alpha is a time change: N_alpha(T) has
  // the law of N_1(alpha T), and the stationary distribution is unchanged.
  const auto asym = solvers::asymptotic_counting<double>(model, H, o.model_path);
  const auto exact = solvers::counting_moments<double>(model, H, run.initial, o.alpha * o.T, o.model_path);
  const double flux = o.alpha * asym.rate, variance_rate = o.alpha * asym.variance_rate;
  // The mean's standard error from the exact Var N(T), not the sample's:
  // with rare spikes every trial can count 0, the sample se is then 0 and
  // any difference would read as infinitely many standard errors.
  const double z_mean = sim::z_score(st.mean, exact.mean, std::sqrt(std::max(0.0, exact.variance) / st.n));
  // The variance's se needs the fourth moment, taken from the sample; when
  // every trial gave the same count it is 0 and the variance cannot be judged
  // (NaN: not tested) unless the exact variance is 0 as well.
  const bool var_testable = st.se_variance > 0 || exact.variance == 0;
  const double z_var = var_testable ? sim::z_score(st.variance, exact.variance, st.se_variance) : NAN;
  const bool checked = o.trials >= kMinChecked;
  const bool ok = !checked || (std::abs(z_mean) < kZ && (!var_testable || std::abs(z_var) < kZ));

  nlohmann::ordered_json j;
  j["model"] = o.model_path;
  j["H"] = solvers::exact_text(H);
  j["T"] = o.T;
  j["alpha"] = o.alpha;
  j["trials"] = o.trials;
  j["seed"] = o.seed;
  j["start"] = o.start;
  j["transitions"] = run.transitions;
  j["empirical"] = {{"mean_count", st.mean},
                    {"rate", st.mean / o.T},
                    {"se_rate", st.se_mean / o.T},
                    {"variance_count", st.variance},
                    {"se_variance_count", st.se_variance},
                    {"variance_per_time", st.variance / o.T},
                    {"fano", st.mean > 0 ? st.variance / st.mean : NAN}};
  j["exact"] = {{"stationary_flux", flux},
                {"mean_count", exact.mean},
                {"rate", exact.mean / o.T},
                {"variance_count", exact.variance},
                {"asymptotic_variance_rate", variance_rate},
                {"asymptotic_fano", asym.rate > 0 ? asym.variance_rate / asym.rate : NAN}};
  j["agreement"] = {{"z_mean", z_mean},
                    {"z_variance", var_testable ? nlohmann::ordered_json(z_var) : nlohmann::ordered_json(nullptr)},
                    {"variance_tested", var_testable},
                    {"threshold", kZ},
                    {"checked", checked},
                    {"ok", ok}};
  nlohmann::ordered_json occ = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < model.size(); ++i)
    occ[model.states[i]] = {{"empirical", run.occupancy[i]}, {"stationary", asym.theta[i]}};
  j["occupancy"] = occ;

  if (o.json) {
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("model {} at H = {}, T = {}, alpha = {}: {} trials (seed {}, start {}), {} transitions\n",
               o.model_path, solvers::exact_text(H), o.T, o.alpha, o.trials, o.seed, o.start, run.transitions);
    // z as a number of standard errors; "inf" where the exact value has no
    // spread and the sample differs from it, "n/a" where it cannot be judged.
    auto z_text = [](double z) {
      if (std::isnan(z)) return std::string("n/a");
      if (std::abs(z) >= 1e6) return std::string(z > 0 ? "inf" : "-inf");
      return fmt::format("{:.2f}", z);
    };
    fmt::print("{:<30}{:>16}{:>16}{:>12}\n", "", "empirical", "exact", "z (se)");
    fmt::print("{:<30}{:>16.6g}{:>16.6g}{:>12}\n", "E[N(T)]", st.mean, exact.mean, z_text(z_mean));
    fmt::print("{:<30}{:>16.6g}{:>16.6g}{:>12}\n", "Var N(T)", st.variance, exact.variance, z_text(z_var));
    fmt::print("{:<30}{:>16.6g}{:>16.6g}\n", "rate N(T)/T", st.mean / o.T, exact.mean / o.T);
    fmt::print("{:<30}{:>16}{:>16.6g}\n", o.alpha == 1 ? "stationary flux F(H)" : "stationary flux alpha F(H)", "", flux);
    fmt::print("{:<30}{:>16.6g}{:>16.6g}\n", "Var N(T)/T (exact: T -> inf)", st.variance / o.T, variance_rate);
    fmt::print("state occupancy (empirical / stationary):");
    for (std::size_t i = 0; i < model.size(); ++i)
      fmt::print(" {} {:.4f}/{:.4f}", model.states[i], run.occupancy[i], asym.theta[i]);
    fmt::print("\n");
    if (checked && !var_testable)
      fmt::print("agreement: |z| {} {} for the mean ({}); the variance is not judged: every trial counted {} "
                 "spikes, so the sample gives no standard error for it\n",
                 ok ? "<" : ">=", kZ, ok ? "ok" : "FAILED", st.mean);
    else if (checked)
      fmt::print("agreement: |z| {} {} for the mean and the variance ({})\n", ok ? "<" : ">=", kZ,
                 ok ? "ok" : "FAILED");
    else
      fmt::print("agreement not checked: fewer than {} trials\n", kMinChecked);
  }
  if (!ok) throw ExitStatus{1};
}

Register reg([](CLI::App& root) {
  auto* group = subcommand_group(root, "simulate", "Simulate CTMC neurons and networks");
  auto o = std::make_shared<Options>();
  auto* cmd = group->add_subcommand(
      "neuron", "Exact Gillespie simulation of one neuron at a fixed H: N(T) statistics beside the exact moments");
  cmd->add_option("model", o->model_path, "Model JSON file")->required();
  cmd->add_option("--H", o->h_text, "Input H (exact decimal or p/q)")->required();
  cmd->add_option("--T", o->T, "Horizon T of each trial")->required();
  cmd->add_option("--trials", o->trials, "Independent trials")->check(kNoMinus)->capture_default_str();
  cmd->add_option("--seed", o->seed, "Random seed (trial k uses stream k)")->check(kNoMinus)->capture_default_str();
  cmd->add_option("--threads", o->threads, "Threads (0: all cores, or OMP_NUM_THREADS if set); results do not depend on it")
      ->capture_default_str()
      ->check(CLI::Range(0, kMaxThreads));
  cmd->add_option("--start", o->start, "Initial state: 'stationary' (a draw from pi(H)) or a state name/index")
      ->capture_default_str();
  cmd->add_option("--alpha", o->alpha, "Multiply every rate by alpha (layer rate scale)")->capture_default_str();
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o] { run(*o); });
});

}  // namespace
}  // namespace ctmc::cli
