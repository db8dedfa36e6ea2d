// simulate neuron, simulate network (simulate_neuron.hpp, simulate_network.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

#include "ctmc/commands/command_text.hpp"
#include "ctmc/commands/limits.hpp"
#include "ctmc/commands/simulate_network.hpp"
#include "ctmc/commands/simulate_neuron.hpp"
#include "ctmc/sim/engines/if_baseline.hpp"
#include "ctmc/sim/neurons/sampler.hpp"
#include "ctmc/sim/neurons/ssa.hpp"
#include "ctmc/solvers/counting.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/number_text.hpp"

namespace ctmc::commands {
namespace {

constexpr double kZ = 4.4;  // two-sided false-alarm rate 1.1e-5 per statistic
// Work bounds: more trials, or more expected transitions over all trials, than
// this is a typo (--T 1e300) and would run for days or exhaust memory.
constexpr std::size_t kMaxTrials = 1000000000;    // 1e9
constexpr double kMaxExpectedTransitions = 1e11;  // max exit rate x alpha x T x trials

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

}  // namespace

std::uint64_t neuron_sim_memory_bytes(std::size_t trials, std::size_t states, bool with_counts) {
  constexpr double kBlock = 256;             // sim/neurons/ssa.cpp's trials per block
  constexpr double kVectorAndHeap = 64;      // a block's occupancy vector: its header and the allocator's
  constexpr double kJsonNumber = 16;         // a count in the "counts" array
  const double t = static_cast<double>(trials), blocks = std::ceil(t / kBlock);
  const double bytes = t * sizeof(std::uint64_t) + (with_counts ? t * kJsonNumber : 0) +
                       blocks * (static_cast<double>(states) * sizeof(double) + kVectorAndHeap + sizeof(std::uint64_t));
  return bytes >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(bytes);
}

NeuronSimResult run_simulate_neuron(const ModelInput& in, const NeuronSimOptions& o, bool with_counts) {
  if (!std::isfinite(o.T) || o.T <= 0) throw InputError(fmt::format("--T: must be a finite time > 0, got {}", o.T));
  if (o.trials < 2) throw InputError("--trials: must be >= 2 (the variance needs two trials)");
  if (o.trials > kMaxTrials) throw InputError(fmt::format("--trials: {} is too many (at most {})", o.trials, kMaxTrials));
  checked_threads(o.threads);
  if (!std::isfinite(o.alpha) || o.alpha <= 0) throw InputError("--alpha: must be finite and > 0");
  const auto model = load_model(in);
  const std::string& source = in.source;
  const auto H = solvers::parse_input_value(o.h, "--H");
  if (const std::uint64_t need = neuron_sim_memory_bytes(o.trials, model.size(), with_counts); need > o.max_memory_bytes) {
    // The most trials that fit: the estimate grows with the trials, so a
    // bisection between 0 (fits) and o.trials (does not) finds it.
    std::size_t fit = 0, over = o.trials;
    while (over - fit > 1) {
      const std::size_t mid = fit + (over - fit) / 2;
      (neuron_sim_memory_bytes(mid, model.size(), with_counts) <= o.max_memory_bytes ? fit : over) = mid;
    }
    throw InputError(fmt::format("--trials: {} trials need about {} MiB of memory for their counts, more than the limit "
                                 "of {} MiB; lower --trials (at most {} fit) or raise --max-memory (GiB)",
                                 o.trials, need >> 20, o.max_memory_bytes >> 20, fit));
  }
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
  auto run = sim::simulate_neuron(model, H, so, source);
  const auto st = sim::count_stats(run.counts[0]);

  // Exact values. Scaling all rates by alpha is a time change: N_alpha(T) has
  // the law of N_1(alpha T), and the stationary distribution is unchanged.
  const auto asym = solvers::asymptotic_counting<double>(model, H, source);
  const auto exact = solvers::counting_moments<double>(model, H, run.initial, o.alpha * o.T, source);
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
  const bool checked = o.trials >= kMinCheckedTrials;
  const bool ok = !checked || (std::abs(z_mean) < kZ && (!var_testable || std::abs(z_var) < kZ));

  NeuronSimResult r;
  r.model = source;
  r.H = solvers::exact_text(H);
  r.T = o.T;
  r.alpha = o.alpha;
  r.trials = o.trials;
  r.seed = o.seed;
  r.start = o.start;
  r.transitions = run.transitions;
  r.empirical = {st.mean, st.mean / o.T, st.se_mean / o.T, st.variance, st.se_variance, st.variance / o.T,
                 st.mean > 0 ? st.variance / st.mean : NAN};
  r.exact = {flux, exact.mean, exact.mean / o.T, exact.variance, variance_rate,
             asym.rate > 0 ? asym.variance_rate / asym.rate : NAN};
  r.agreement = {z_mean, var_testable ? std::optional<double>(z_var) : std::nullopt, var_testable, kZ, checked, ok};
  for (std::size_t i = 0; i < model.size(); ++i) r.occupancy.push_back({model.states[i], run.occupancy[i], asym.theta[i]});
  if (with_counts) r.counts = std::move(run.counts[0]);  // not a copy: the estimate counts the trials' counts once
  return r;
}

void set_network_options(NetworkCommandOptions& o, const NetworkOptionTexts& t) {
  sim::NetworkSimOptions& opt = o.opt;
  opt.snn.sampler = sim::parse_sampler(t.sampler);
  opt.snn.readout = sim::parse_readout(t.readout);
  opt.scale = sim::parse_scale_mode(t.scale);
  opt.snn.trace_weight = sim::parse_trace_weight(t.trace_weight);
  opt.snn.kernel = sim::parse_kernel(t.kernel, "--kernel");
  opt.snn.conv_path = sim::parse_conv_path(t.conv_path, "--conv-path");
  opt.output_scale = sim::parse_output_scale(t.output_scale);
  opt.subset = sim::parse_test_subset(t.subset);
  opt.layer_alpha.clear();
  if (!t.layer_alpha.empty()) opt.layer_alpha = layer_alpha_list(t.layer_alpha);
  o.if_norm.reset();
  if (!t.if_norm.empty()) o.if_norm = sim::parse_if_norm(t.if_norm);
}

std::string if_norm_name(double percentile) { return fmt::format("p{}", percentile); }

NetworkCommandResult run_simulate_network(const NetworkCommandOptions& o, const NetworkInputs& in) {
  checked_threads(o.opt.threads);
  if (o.opt.trials < 0) throw InputError(fmt::format("--trials: need a number >= 0, got '{}'", o.opt.trials));
  const sim::NetworkSimOptions& opt = o.opt;
  sim::check_kernel(opt.snn.kernel, opt.snn.sampler, "--kernel");
  const std::vector<sim::NeuronModel> neurons = in.neurons();
  if (neurons.empty()) throw InputError("--neurons: no model file given");
  // A dense manifest runs as the Mlp; one with convolutions or pooling, which
  // in.net() refuses, as a layer graph (sim::load_any_network).
  const sim::AnyNetwork net = sim::load_any_network(in.net, in.graph);
  const sim::DatasetSplit data = in.data();
  // The IF baseline first: it is the cheaper of the two, so its bad input
  // (e.g. --if-steps beyond the work budget) is not found after the CTMC run.
  std::optional<sim::IfResult> ifr;
  if (o.if_norm) {
    sim::IfOptions io;
    io.percentile = *o.if_norm;
    io.v0 = o.v0;
    io.steps = o.if_steps;
    io.readout = opt.snn.readout;
    io.threads = opt.threads;
    io.limit = opt.limit;
    io.subset = opt.subset;
    ifr = net.visit([&](const auto& n) { return sim::simulate_if(n, data.train, data.test, io); });
  }
  sim::NetworkSimResult r =
      net.visit([&](const auto& n) { return sim::simulate_network(n, data.train, data.test, neurons, opt); });

  NetworkCommandResult out{in.net_name, in.data_name, o, opt, {}, {}, std::move(ifr)};
  for (std::size_t l = 0; l < r.alpha.size(); ++l)
    out.neurons.push_back(neurons.size() == 1 ? neurons[0].source : neurons[l].source);
  out.sim = std::move(r);
  return out;
}

}  // namespace ctmc::commands
