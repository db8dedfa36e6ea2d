// Single-neuron SSA throughput: transitions per second on one core for the
// paper's three-state chain (eq. 1; a = 2, b = 1, c = 3, d = 1/2, the chain of
// tests/fixtures/three_state.json), beside a baseline in the same run: a
// textbook Gillespie loop with std::mt19937_64, one prebuilt
// std::exponential_distribution and std::discrete_distribution per state.
// Target (issue 5): >= 2e7 transitions per second per core.
//
// Usage: bench_ssa [transitions (default 5e7)]
#include <fmt/format.h>

#include <time.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <vector>

#include "thread_clock.hpp"
#include "ctmc/sim/neurons/rng.hpp"
#include "ctmc/sim/neurons/ssa.hpp"
#include "ctmc/solvers/model.hpp"

namespace {

const char* kThreeState = R"({"states": ["B", "G", "R"], "transitions": [
  {"from": "B", "to": "G", "offset": 2},
  {"from": "G", "to": "B", "offset": 1},
  {"from": "G", "to": "R", "offset": 3, "spike": true},
  {"from": "R", "to": "B", "offset": "1/2"}]})";

using Clock = double;
double seconds_since(Clock t0) { return thread_cpu_seconds() - t0; }

// Baseline: the usual std::<random> Gillespie loop on the same chain.
struct Baseline {
  std::vector<std::exponential_distribution<double>> hold;
  std::vector<std::discrete_distribution<int>> next;
  std::vector<std::vector<int>> target, spike;
};

}  // namespace

int main(int argc, char** argv) {
  const double want = argc > 1 ? std::atof(argv[1]) : 5e7;
  auto m = ctmc::solvers::model_from_json_text(kThreeState, "three-state");
  const ctmc::solvers::Rational H(0);
  ctmc::sim::SsaChain chain(m, H);
  // Mean transitions per unit time in stationarity: sum_i pi_i q_i with
  // pi = (2/9, 1/9, 6/9), q = (2, 4, 1/2) -> 4/9 + 4/9 + 3/9 = 11/9.
  const double horizon = want / (11.0 / 9.0);

  // ctmc-snn SSA, one path, one core.
  ctmc::sim::Rng rng(ctmc::stream_seed(1, 0));
  std::vector<double> times{horizon};
  std::vector<std::uint64_t> counts(1);
  Clock t0 = thread_cpu_seconds();
  auto w0 = std::chrono::steady_clock::now();
  std::uint64_t tr = ctmc::sim::simulate_path(chain, 0, times, rng, counts);
  const double t_ours = seconds_since(t0);
  const double wall_ours = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  const double rate_ours = tr / t_ours;

  // Same, with state occupancy accumulated.
  std::vector<double> occ(3, 0.0);
  t0 = thread_cpu_seconds();
  std::uint64_t tr_occ = ctmc::sim::simulate_path(chain, 0, times, rng, counts, occ.data());
  const double rate_occ = tr_occ / seconds_since(t0);

  // simulate_neuron with per-trial streams (1000 trials), one thread.
  ctmc::sim::SsaOptions opt;
  opt.T = horizon / 1000;
  opt.trials = 1000;
  opt.threads = 1;
  t0 = thread_cpu_seconds();
  auto run = ctmc::sim::simulate_neuron(m, H, opt);
  const double rate_trials = run.transitions / seconds_since(t0);

  // Baseline.
  Baseline b;
  b.hold = {std::exponential_distribution<double>(2.0), std::exponential_distribution<double>(4.0),
            std::exponential_distribution<double>(0.5)};
  b.next = {std::discrete_distribution<int>({2.0}), std::discrete_distribution<int>({1.0, 3.0}),
            std::discrete_distribution<int>({0.5})};
  b.target = {{1}, {0, 2}, {0}};
  b.spike = {{0}, {0, 1}, {0}};
  std::mt19937_64 gen(12345);
  t0 = thread_cpu_seconds();
  w0 = std::chrono::steady_clock::now();
  double t = 0;
  int s = 0;
  std::uint64_t base_tr = 0, base_spikes = 0;
  for (;;) {
    t += b.hold[s](gen);
    if (t > horizon) break;
    int k = b.next[s](gen);
    base_spikes += b.spike[s][k];
    s = b.target[s][k];
    ++base_tr;
  }
  const double t_base = seconds_since(t0);
  const double wall_base = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  const double rate_base = base_tr / t_base;

  fmt::print("three-state chain (a=2, b=1, c=3, d=1/2), horizon T = {:.4g}, one core\n", horizon);
  fmt::print("{:<52}{:>14}{:>12}{:>14}\n", "implementation", "transitions", "CPU s", "trans/CPU s");
  fmt::print("{:<52}{:>14}{:>12.3f}{:>14.3e}\n", "ctmc-snn simulate_path (xoshiro256**)", tr, t_ours, rate_ours);
  fmt::print("{:<52}{:>14}{:>12}{:>14.3e}\n", "ctmc-snn simulate_path + occupancy", tr_occ, "", rate_occ);
  fmt::print("{:<52}{:>14}{:>12}{:>14.3e}\n", "ctmc-snn simulate_neuron, 1000 trials, 1 thread", run.transitions, "",
             rate_trials);
  fmt::print("{:<52}{:>14}{:>12.3f}{:>14.3e}\n", "baseline: std::mt19937_64 + std:: distributions", base_tr, t_base,
             rate_base);
  fmt::print("wall-clock rates (lower when the machine is shared): ctmc-snn {:.3e}/s, baseline {:.3e}/s\n",
             tr / wall_ours, base_tr / wall_base);
  fmt::print("speedup over baseline: {:.2f}x; target >= 2e7 transitions/s per core: {}\n", rate_ours / rate_base,
             rate_ours >= 2e7 ? "met" : "NOT met");
  // Sanity: both estimate the stationary flux 1/3.
  fmt::print("spike rate: ctmc-snn {:.5f}, baseline {:.5f}, exact 1/3\n", counts[0] / horizon,
             base_spikes / horizon);
  return 0;
}
