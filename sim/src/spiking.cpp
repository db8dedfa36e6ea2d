#include "ctmc/sim/spiking.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

#include "ctmc/sim/rng.hpp"
#include "ctmc/core/errors.hpp"

namespace ctmc::sim {

Readout parse_readout(const std::string& text, const std::string& option) {
  if (text == "spike") return Readout::Spike;
  if (text == "integrate") return Readout::Integrate;
  throw InputError(option, fmt::format("unknown readout '{}' (expected spike or integrate)", text));
}

std::string readout_name(Readout r) { return r == Readout::Spike ? "spike" : "integrate"; }

std::size_t spiking_layer_count(const Mlp& net, Readout readout) {
  const std::size_t L = net.layers.size();
  return readout == Readout::Spike || L == 0 ? L : L - 1;
}

std::size_t spiking_neuron_count(const Mlp& net, Readout readout) {
  std::size_t n = 0;
  for (std::size_t l = 0; l < spiking_layer_count(net, readout); ++l) n += net.layers[l].out_size();
  return n;
}

std::uint64_t sample_stream_seed(std::uint64_t seed, std::uint64_t trial, std::uint64_t sample) {
  return stream_seed(seed, trial, sample);
}

std::int64_t window_steps(double T, double dt, const std::string& what) {
  if (!(T > 0) || !std::isfinite(T)) throw InputError(what, fmt::format("{} must be positive", T));
  const double steps = std::round(T / dt);
  // Beyond this the step count is a typo (T = 1e300), and the cast below
  // would be undefined past 2^63.
  if (steps > kMaxSteps)
    throw InputError(what, fmt::format("T / dt = {:.3g} steps is too many (at most {:.0e}); raise dt", T / dt,
                                       kMaxSteps));
  if (steps < 1 || std::abs(steps * dt - T) > 1e-9 * T)
    throw InputError(what, fmt::format("{} is not a positive multiple of dt = {}", T, dt));
  return static_cast<std::int64_t>(steps);
}

namespace {

// The exact and end-state samplers' inner loop over one layer for one step,
// specialised on the out-degree (KMAX > 0; 0 = read it at run time) and on
// whether H is constant over the window (layer 1: the exit rates come from a
// per-sample table). A neuron without a jump costs its exit rate (KMAX
// multiply-adds, or one load) and a compare; no random draw.
template <SamplerKind K, int KMAX, bool ConstH>
void advance_fast(const StepSampler& smp, const double* h, const double* qtab, NeuronState* st, int n, StepRng& rng,
                  StepCounts& counts, std::uint32_t* cnt, std::vector<std::pair<std::uint32_t, std::uint32_t>>& fired) {
  const double* off = smp.offset_dt();
  const double* slope = smp.slope_dt();
  const std::size_t kmax = KMAX > 0 ? static_cast<std::size_t>(KMAX) : smp.max_out_degree();
  const std::size_t nst = smp.kernel().size();
  for (int j = 0; j < n; ++j) {
    const std::uint32_t s = st[j].state;
    double q;
    if constexpr (ConstH) {
      q = qtab[static_cast<std::size_t>(j) * nst + s];
    } else {
      q = 0;
      const std::size_t b = s * kmax;
      for (std::size_t k = 0; k < kmax; ++k) {
        const double r = off[b + k] + slope[b + k] * h[j];
        q += rectify(r);
      }
    }
    const double c = st[j].clock;
    if (c > q) {
      st[j].clock = c - q;
      continue;
    }
    std::uint32_t sp = smp.jumps_exact(h[j], st[j], rng, counts, q);
    if constexpr (K == SamplerKind::EndState) sp = smp.end_state_implies_spike(s, st[j].state) ? 1u : 0u;
    if (sp) {
      cnt[j] += sp;
      fired.emplace_back(static_cast<std::uint32_t>(j), sp);
    }
  }
}

// Layer 1 of the exact/end-state samplers, event-driven. With H constant the
// exit rate q (per step) of the current state is constant, so the per-step
// rule "if clock > q: clock -= q, else jump" first jumps after
// m = max(0, ceil(clock / q) - 1) jump-free steps, with clock - m q left: the
// same law as stepping, at a cost per jump instead of per neuron-step.
// A timing wheel holds each neuron's next jump step: slot k mod kWheel lists
// the neurons due at step k when k is less than kWheel - 1 steps ahead; later
// jumps wait in a far list that is moved into the wheel every kWheel steps.
// O(1) per event; neurons due in the same step are processed in the order
// they were scheduled (deterministic).
class JumpCalendar {
 public:
  static constexpr std::int64_t kWheel = 1024;
  JumpCalendar() : wheel_(kWheel) {}
  // A jump at `step`, scheduled while processing step now - 1 (step >= now).
  void add(std::int64_t step, std::uint32_t j, std::int64_t now) {
    if (step - now < kWheel - 1)
      wheel_[static_cast<std::size_t>(step & (kWheel - 1))].push_back(j);
    else
      far_.push_back({step, j});
  }
  // The neurons due at step k; called for k = 0, 1, 2, ... in order.
  std::vector<std::uint32_t>& due(std::int64_t k) {
    if ((k & (kWheel - 1)) == 0) {
      std::size_t keep = 0;
      for (const auto& e : far_) {
        if (e.first < k + kWheel)
          wheel_[static_cast<std::size_t>(e.first & (kWheel - 1))].push_back(e.second);
        else
          far_[keep++] = e;
      }
      far_.resize(keep);
    }
    return wheel_[static_cast<std::size_t>(k & (kWheel - 1))];
  }

 private:
  std::vector<std::vector<std::uint32_t>> wheel_;
  std::vector<std::pair<std::int64_t, std::uint32_t>> far_;
};

void schedule_layer1(const StepSampler& smp, const double* qtab, NeuronState* st, std::uint32_t j, std::int64_t from,
                     std::int64_t steps, JumpCalendar& cal) {
  const double q = qtab[static_cast<std::size_t>(j) * smp.kernel().size() + st[j].state];
  if (!(q > 0)) return;  // no exit: the neuron stays put for the whole window
  const double m = std::max(0.0, std::ceil(st[j].clock / q) - 1);
  if (static_cast<double>(from) + m >= static_cast<double>(steps)) return;
  st[j].clock -= m * q;
  cal.add(from + static_cast<std::int64_t>(m), j, from);
}

template <SamplerKind K>
void advance_layer1_events(const StepSampler& smp, const double* h, const double* qtab, NeuronState* st,
                           std::int64_t k, std::int64_t steps, JumpCalendar& cal, StepRng& rng, StepCounts& counts,
                           std::uint32_t* cnt, std::vector<std::pair<std::uint32_t, std::uint32_t>>& fired) {
  const std::size_t nst = smp.kernel().size();
  std::vector<std::uint32_t>& now = cal.due(k);
  for (std::size_t e = 0; e < now.size(); ++e) {
    const std::uint32_t j = now[e];
    const std::uint32_t s = st[j].state;
    std::uint32_t sp = smp.jumps_exact(h[j], st[j], rng, counts, qtab[static_cast<std::size_t>(j) * nst + s]);
    if constexpr (K == SamplerKind::EndState) sp = smp.end_state_implies_spike(s, st[j].state) ? 1u : 0u;
    if (sp) {
      cnt[j] += sp;
      fired.emplace_back(j, sp);
    }
    schedule_layer1(smp, qtab, st, j, k + 1, steps, cal);  // never into slot k (see JumpCalendar::add)
  }
  now.clear();
}

template <SamplerKind K, bool ConstH>
void advance_fast_any(const StepSampler& smp, const double* h, const double* qtab, NeuronState* st, int n,
                      StepRng& rng, StepCounts& counts, std::uint32_t* cnt,
                      std::vector<std::pair<std::uint32_t, std::uint32_t>>& fired) {
  switch (smp.max_out_degree()) {
    case 1:
      return advance_fast<K, 1, ConstH>(smp, h, qtab, st, n, rng, counts, cnt, fired);
    case 2:
      return advance_fast<K, 2, ConstH>(smp, h, qtab, st, n, rng, counts, cnt, fired);
    default:
      return advance_fast<K, 0, ConstH>(smp, h, qtab, st, n, rng, counts, cnt, fired);
  }
}

}  // namespace

SpikingNetwork::SpikingNetwork(const Mlp& net, std::vector<SpikingLayer> layers, SpikingConfig cfg)
    : net_(&net), layers_(std::move(layers)), cfg_(cfg), trace_(cfg.tau, cfg.dt, cfg.trace_weight) {
  const std::size_t L = net.layers.size();
  if (L == 0) throw InputError("network: no layers");
  const std::size_t want = spiking_layer_count(net, cfg.readout);
  if (layers_.size() != want)
    throw InputError("neurons", fmt::format("{} spiking layers given, the network with readout '{}' needs {}",
                                            layers_.size(), readout_name(cfg.readout), want));
  steps_ = window_steps(cfg.T, cfg.dt, "T");
  for (std::size_t c = 0; c < cfg.checkpoints.size(); ++c) {
    const double Tc = cfg.checkpoints[c];
    const std::int64_t k = window_steps(Tc, cfg.dt, "T");
    if (!checkpoint_steps_.empty() && k <= checkpoint_steps_.back())
      throw InputError("T", fmt::format("checkpoint {} does not follow {} (give increasing times)", Tc,
                                        cfg.checkpoints[c - 1]));
    if (k > steps_) throw InputError("T", fmt::format("checkpoint {} lies beyond the window T = {}", Tc, cfg.T));
    checkpoint_steps_.push_back(k);
  }
  for (const auto& l : layers_)
    if (!(l.alpha > 0) || !std::isfinite(l.alpha))
      throw InputError(fmt::format("layer scale alpha = {} must be positive and finite", l.alpha));
  samplers_.reserve(layers_.size());
  for (const auto& l : layers_) samplers_.emplace_back(l.kernel, cfg.sampler, cfg.dt);
  // W~^l = W^l / alpha_{l-1} feeds layer l from spiking layer l-1.
  for (std::size_t l = 1; l < L; ++l) w_scaled_.push_back(net.layers[l].W / static_cast<float>(layers_[l - 1].alpha));
  for (std::size_t l = 0; l + 1 < L && l < layers_.size(); ++l) {
    const auto& W = net.layers[l + 1].W;
    std::vector<std::uint32_t> f(W.cols());
    for (Eigen::Index i = 0; i < W.cols(); ++i) f[i] = static_cast<std::uint32_t>((W.col(i).array() != 0.0f).count());
    fanout_.push_back(std::move(f));
  }
}

std::size_t SpikingNetwork::spiking_neurons() const { return spiking_neuron_count(*net_, cfg_.readout); }

Eigen::VectorXd SpikingNetwork::decode(const SampleRun& r, std::size_t l) const {
  Eigen::VectorXd a(r.counts[l].size());
  for (std::size_t i = 0; i < r.counts[l].size(); ++i) a[i] = r.counts[l][i] / (r.T * layers_[l].alpha);
  return a;
}

SampleRun SpikingNetwork::run(const float* x, std::uint64_t stream_seed) const {
  switch (cfg_.sampler) {
    case SamplerKind::Exact:
      return run_impl<SamplerKind::Exact>(x, stream_seed);
    case SamplerKind::EndState:
      return run_impl<SamplerKind::EndState>(x, stream_seed);
    case SamplerKind::Uniformization:
      return run_impl<SamplerKind::Uniformization>(x, stream_seed);
    case SamplerKind::Euler:
      return run_impl<SamplerKind::Euler>(x, stream_seed);
  }
  return {};
}

template <SamplerKind K>
SampleRun SpikingNetwork::run_impl(const float* x, std::uint64_t stream_seed) const {
  const std::size_t L = net_->layers.size();
  const std::size_t S = layers_.size();
  StepRng rng(stream_seed);
  StepCounts counts;
  SampleRun out;
  out.counts.resize(S);

  // H^1 = W^1 x + b^1 in double, skipping zero pixels.
  const auto& first = net_->layers[0];
  Eigen::VectorXd h1 = first.b.cast<double>();
  for (Eigen::Index i = 0; i < first.W.cols(); ++i)
    if (x[i] != 0.0f) {
      const double xi = x[i];
      for (Eigen::Index r = 0; r < first.W.rows(); ++r) h1[r] += xi * first.W(r, i);
    }

  std::vector<std::vector<double>> bias(L), current(L), h_buf(L);
  for (std::size_t l = 1; l < L; ++l) {
    const auto& b = net_->layers[l].b;
    bias[l].assign(b.data(), b.data() + b.size());
    current[l].assign(b.size(), 0.0);
    h_buf[l].assign(b.size(), 0.0);
  }
  std::vector<std::vector<NeuronState>> state(S);
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> fired(S);
  for (std::size_t l = 0; l < S; ++l) {
    const int n = net_->layers[l].out_size();
    state[l].resize(n);
    for (int j = 0; j < n; ++j) state[l][j] = samplers_[l].init(0, rng);
    out.counts[l].assign(n, 0);
    fired[l].reserve(n);
  }
  // Layer 1's input is constant: tabulate its exit rates * dt per neuron and state.
  std::vector<double> qtab1;
  if (S > 0) {
    const std::size_t nst = layers_[0].kernel.size();
    qtab1.resize(static_cast<std::size_t>(first.out_size()) * nst);
    for (int j = 0; j < first.out_size(); ++j)
      for (std::size_t st = 0; st < nst; ++st)
        qtab1[static_cast<std::size_t>(j) * nst + st] = samplers_[0].exit_dt(static_cast<std::uint32_t>(st), h1[j]);
  }
  // Exact/end-state: layer 1's exit rates are constant, so the step of each
  // neuron's next jump is known in advance and only those steps are visited.
  JumpCalendar layer1_events;
  if constexpr (K == SamplerKind::Exact || K == SamplerKind::EndState) {
    if (S > 0)
      for (int j = 0; j < first.out_size(); ++j)
        schedule_layer1(samplers_[0], qtab1.data(), state[0].data(), static_cast<std::uint32_t>(j), 0, steps_,
                        layer1_events);
  }
  Eigen::VectorXd h_sum = Eigen::VectorXd::Zero(net_->layers[L - 1].out_size());
  std::size_t next_checkpoint = 0;
  out.at.reserve(checkpoint_steps_.size());

  const double decay = trace_.decay, weight = trace_.spike_weight;
  for (std::int64_t k = 0; k < steps_; ++k) {
    // Layers in order. Layer l reads its input for step k (update order of
    // trace.hpp, step 1), then its current is closed for step k (step 3:
    // decay, plus the step-k spikes of layer l-1, simulated just before), and
    // its neurons advance over the step (step 2).
    for (std::size_t l = 0; l < L; ++l) {
      const int n = net_->layers[l].out_size();
      const double* h;
      if (l == 0) {
        h = h1.data();
      } else {
        double* cur = current[l].data();
        const double* b = bias[l].data();
        double* hb = h_buf[l].data();
        for (int j = 0; j < n; ++j) {
          hb[j] = b[j] + cur[j];
          cur[j] *= decay;
        }
        if (l - 1 < S) {
          const Eigen::MatrixXf& W = w_scaled_[l - 1];
          const Eigen::Index rows = W.rows();
          for (const auto& [i, sp] : fired[l - 1]) {
            const double c = weight * sp;
            const float* col = W.data() + static_cast<Eigen::Index>(i) * rows;
            for (Eigen::Index r = 0; r < rows; ++r) cur[r] += c * col[r];
          }
          fired[l - 1].clear();
        }
        h = hb;
      }
      if (l == L - 1)
        for (int j = 0; j < n; ++j) h_sum[j] += h[j];
      if (l >= S) continue;  // integrating readout
      const StepSampler& sampler = samplers_[l];
      NeuronState* st = state[l].data();
      std::uint32_t* cnt = out.counts[l].data();
      if constexpr (K == SamplerKind::Exact || K == SamplerKind::EndState) {
        if (l == 0)
          advance_layer1_events<K>(sampler, h, qtab1.data(), st, k, steps_, layer1_events, rng, counts, cnt, fired[l]);
        else
          advance_fast_any<K, false>(sampler, h, nullptr, st, n, rng, counts, cnt, fired[l]);
      } else {
        for (int j = 0; j < n; ++j) {
          const std::uint32_t sp = sampler.step(h[j], st[j], rng, counts);
          if (sp) {
            cnt[j] += sp;
            fired[l].emplace_back(static_cast<std::uint32_t>(j), sp);
          }
        }
      }
    }
    if (S == L) fired[L - 1].clear();  // output spikes are counted, not transmitted
    if (next_checkpoint < checkpoint_steps_.size() && k + 1 == checkpoint_steps_[next_checkpoint]) {
      SampleRun& at = out.at.emplace_back();
      at.counts = out.counts;
      read_out(at, h_sum, k + 1, cfg_.checkpoints[next_checkpoint], counts);
      ++next_checkpoint;
    }
  }

  read_out(out, h_sum, steps_, cfg_.T, counts);
  return out;
}

void SpikingNetwork::read_out(SampleRun& out, const Eigen::VectorXd& h_sum, std::int64_t steps, double T,
                              const StepCounts& counts) const {
  const std::size_t L = net_->layers.size();
  const std::size_t S = layers_.size();
  out.T = T;
  out.mean_output_input = h_sum / static_cast<double>(steps);
  const int n_out = net_->layers[L - 1].out_size();
  int best = 0;
  if (S == L) {
    const auto& c = out.counts[L - 1];
    for (int j = 1; j < n_out; ++j)
      if (c[j] > c[best] || (c[j] == c[best] && out.mean_output_input[j] > out.mean_output_input[best])) best = j;
    for (int j = 0; j < n_out; ++j) out.tie = out.tie || (j != best && c[j] == c[best]);
  } else {
    for (int j = 1; j < n_out; ++j)
      if (out.mean_output_input[j] > out.mean_output_input[best]) best = j;
  }
  out.prediction = best;
  for (std::size_t l = 0; l < S; ++l) {
    for (std::size_t i = 0; i < out.counts[l].size(); ++i) {
      out.spikes += out.counts[l][i];
      if (l < fanout_.size()) out.synops += static_cast<double>(out.counts[l][i]) * fanout_[l][i];
    }
  }
  out.transitions = counts.transitions;
  out.euler_renormalized = counts.euler_renormalized;
}

}  // namespace ctmc::sim
