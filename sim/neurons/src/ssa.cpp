// Gillespie direct-method simulation of one CTMC neuron: see ssa.hpp.
#include "ctmc/sim/neurons/ssa.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/stationary.hpp"
#include "ctmc/core/loop_errors.hpp"

namespace ctmc::sim {

namespace {
constexpr std::size_t kBlock = 256;  // trials per reduction block (fixed: thread-count invariant sums)

std::vector<double> rates_at(const solvers::Model& m, const solvers::Rational& H, double scale) {
  if (!(scale > 0) || !std::isfinite(scale))
    throw InputError(fmt::format("rate scale: must be finite and > 0, got {}", scale));
  std::vector<double> r;
  r.reserve(m.transitions.size());
  const auto exact = m.rates(H);
  for (std::size_t e = 0; e < exact.size(); ++e) {
    const double rate = solvers::to_double(exact[e]);
    r.push_back(rate * scale);
    // An overflow (the rate itself, or alpha = 1e308 times it) names the
    // parameter that caused it, not the infinite rate it produced.
    if (!std::isfinite(rate))
      throw InputError("H", fmt::format("the rate of transitions[{}] ({} -> {}) at this H is beyond the range of a "
                                        "double",
                                        e, m.states[m.transitions[e].from], m.states[m.transitions[e].to]));
    if (!std::isfinite(r.back()))
      throw InputError("alpha", fmt::format("{:g} x the rate of transitions[{}] ({} -> {}) at H = {:.6g} overflows "
                                            "a double",
                                            scale, e, m.states[m.transitions[e].from], m.states[m.transitions[e].to],
                                   solvers::to_double(H)));
  }
  return r;
}
}  // namespace

SsaChain::SsaChain(const solvers::Model& m, const solvers::Rational& H, double rate_scale) {
  build(m, rates_at(m, H, rate_scale));
}

SsaChain::SsaChain(const solvers::Model& m, const std::vector<double>& rates) { build(m, rates); }

void SsaChain::build(const solvers::Model& m, const std::vector<double>& rates) {
  const std::size_t n = m.size();
  if (rates.size() != m.transitions.size())
    throw InputError(fmt::format("ssa: {} rates given for {} transitions", rates.size(), m.transitions.size()));
  if (n >= (std::size_t{1} << 32)) throw InputError("ssa: too many states");
  std::vector<std::size_t> deg(n + 1, 0);
  for (std::size_t e = 0; e < rates.size(); ++e) {
    if (!(rates[e] >= 0) || !std::isfinite(rates[e]))
      throw InputError(fmt::format("ssa: transition {}: rate {} is not finite and >= 0", e, rates[e]));
    if (rates[e] > 0) ++deg[m.transitions[e].from + 1];
  }
  first_.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) first_[i + 1] = first_[i] + deg[i + 1];
  edges_.resize(first_[n]);
  std::vector<std::size_t> fill(first_.begin(), first_.end() - 1);
  for (std::size_t e = 0; e < rates.size(); ++e) {
    if (rates[e] <= 0) continue;
    const auto& t = m.transitions[e];
    edges_[fill[t.from]++] = Edge{rates[e], static_cast<std::uint32_t>(t.to), t.spike ? 1u : 0u};
  }
  exit_rate_.assign(n, 0.0);
  inv_exit_.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    // Cumulative rates; the exit rate is the last cumulative sum itself, so a
    // uniform draw on [0, q_i) always lands on an edge.
    double cum = 0;
    for (std::size_t k = first_[i]; k < first_[i + 1]; ++k) edges_[k].cum_rate = cum += edges_[k].cum_rate;
    exit_rate_[i] = cum;
    inv_exit_[i] = cum > 0 ? 1.0 / cum : 0.0;
  }
}

namespace {

template <bool kOccupancy>
std::uint64_t run_path(const SsaChain& c, std::size_t s, std::span<const double> times, Rng& rng,
                       std::span<std::uint64_t> counts_at, double* occ) {
  const std::size_t K = times.size();
  const double horizon = times[K - 1];
  std::uint64_t spikes = 0, transitions = 0;
  double t = 0;
  std::size_t k = 0;
  while (k < K) {
    const double q = c.exit_rate(s);
    // Absorbing state: stays put until the horizon.
    const double tn = q > 0 ? t + rng.exponential() * c.inv_exit_rate(s) : INFINITY;
    // Checkpoints passed before the next jump see the count so far.
    while (k < K && times[k] < tn) counts_at[k++] = spikes;
    if (k == K) {
      if constexpr (kOccupancy) occ[s] += horizon - t;
      break;
    }
    if constexpr (kOccupancy) occ[s] += tn - t;
    // Direct method: the next edge with probability r_ij / q_i.
    const double u = rng.uniform() * q;
    auto edges = c.edges(s);
    const SsaChain::Edge* e = edges.data();
    const SsaChain::Edge* last = e + edges.size() - 1;
    while (e < last && e->cum_rate <= u) ++e;
    spikes += e->spike;
    s = e->target;
    t = tn;
    ++transitions;
  }
  return transitions;
}

void check_times(std::span<const double> times) {
  if (times.empty()) throw InputError("T", "no time given");
  for (std::size_t k = 0; k < times.size(); ++k) {
    if (!std::isfinite(times[k]) || times[k] < 0)
      throw InputError("T", fmt::format("{} is not a finite time >= 0", times[k]));
    if (k && times[k] < times[k - 1]) throw InputError("T", "checkpoint times must be sorted");
  }
}

}  // namespace

std::uint64_t simulate_path(const SsaChain& chain, std::size_t start, std::span<const double> times, Rng& rng,
                            std::span<std::uint64_t> counts_at, double* occupancy) {
  check_times(times);
  if (start >= chain.size()) throw InputError(fmt::format("start state {} out of range", start));
  if (counts_at.size() < times.size()) throw InputError("ssa: counts_at is shorter than times");
  return occupancy ? run_path<true>(chain, start, times, rng, counts_at, occupancy)
                   : run_path<false>(chain, start, times, rng, counts_at, nullptr);
}

SsaRun simulate_neuron(const solvers::Model& m, const solvers::Rational& H, const SsaOptions& opt,
                       const std::string& source) {
  SsaRun run;
  run.times = opt.times.empty() ? std::vector<double>{opt.T} : opt.times;
  check_times(run.times);
  if (opt.trials == 0) throw InputError("trials", "must be >= 1");
  const std::size_t n = m.size();
  if (opt.start == StartMode::State && opt.start_state >= n)
    throw InputError("start", fmt::format("state {} out of range for {} ({} states)", opt.start_state, source, n));
  const SsaChain chain(m, H, opt.rate_scale);

  // Initial distribution: the stationary one (solved by GTH; the process is
  // then stationary on [0, T]) or a point mass.
  if (opt.start == StartMode::Stationary) {
    run.initial = solvers::solve_stationary<double>(m, H, solvers::Method::Auto, source).pi;
  } else {
    run.initial.assign(n, 0.0);
    run.initial[opt.start_state] = 1.0;
  }
  std::vector<double> cum(n);
  double acc = 0;
  for (std::size_t i = 0; i < n; ++i) cum[i] = acc += run.initial[i];

  const std::size_t K = run.times.size(), trials = opt.trials;
  // Each in place: assign(K, std::vector(trials)) held a second copy of the
  // counts (the value it copies from) at its peak.
  run.counts.resize(K);
  for (auto& c : run.counts) c.resize(trials);
  const std::size_t blocks = (trials + kBlock - 1) / kBlock;
  std::vector<std::vector<double>> block_occ(opt.occupancy ? blocks : 0);
  std::vector<std::uint64_t> block_transitions(blocks, 0);
  const int threads = opt.threads > 0 ? opt.threads : omp_get_max_threads();

  LoopErrors errors;  // run_path and the allocations can throw; not across the OpenMP region
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::size_t b = 0; b < blocks; ++b) {
    errors.run(static_cast<std::int64_t>(b), [&] {
      std::vector<std::uint64_t> counts_at(K);
      double* occ = nullptr;
      if (opt.occupancy) {
        block_occ[b].assign(n, 0.0);
        occ = block_occ[b].data();
      }
      std::uint64_t tr = 0;
      for (std::size_t trial = b * kBlock; trial < std::min(trials, (b + 1) * kBlock); ++trial) {
        Rng rng(stream_seed(opt.seed, trial));
        std::size_t s = opt.start_state;
        if (opt.start == StartMode::Stationary) {
          const double u = rng.uniform() * acc;
          s = std::min<std::size_t>(std::upper_bound(cum.begin(), cum.end(), u) - cum.begin(), n - 1);
        }
        tr += occ ? run_path<true>(chain, s, run.times, rng, counts_at, occ)
                  : run_path<false>(chain, s, run.times, rng, counts_at, nullptr);
        for (std::size_t k = 0; k < K; ++k) run.counts[k][trial] = counts_at[k];
      }
      block_transitions[b] = tr;
    });
  }
  errors.rethrow();

  for (auto t : block_transitions) run.transitions += t;
  if (opt.occupancy) {
    run.occupancy.assign(n, 0.0);
    for (const auto& bo : block_occ)
      for (std::size_t i = 0; i < n; ++i) run.occupancy[i] += bo[i];
    const double total = run.times.back() * static_cast<double>(trials);
    for (auto& o : run.occupancy) o = total > 0 ? o / total : 0.0;
  }
  return run;
}

CountStats count_stats(std::span<const std::uint64_t> counts) {
  CountStats st;
  st.n = counts.size();
  if (st.n == 0) return st;
  const double n = static_cast<double>(st.n);
  double sum = 0;
  for (auto c : counts) sum += static_cast<double>(c);
  st.mean = sum / n;
  double m2 = 0, m4 = 0;
  for (auto c : counts) {
    const double d = static_cast<double>(c) - st.mean, d2 = d * d;
    m2 += d2;
    m4 += d2 * d2;
  }
  if (st.n < 2) {
    st.variance = st.se_mean = st.se_variance = NAN;
    return st;
  }
  st.variance = m2 / (n - 1);
  st.se_mean = std::sqrt(st.variance / n);
  m4 /= n;
  const double s4 = st.variance * st.variance;
  st.se_variance = std::sqrt(std::max(0.0, (m4 - s4 * (n - 3) / (n - 1)) / n));
  return st;
}

}  // namespace ctmc::sim
