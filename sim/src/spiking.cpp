#include "ctmc/sim/spiking.hpp"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "ctmc/sim/rng.hpp"
#include "ctmc/solvers/errors.hpp"

namespace ctmc::sim {

Readout parse_readout(const std::string& text, const std::string& option) {
  if (text == "spike") return Readout::Spike;
  if (text == "integrate") return Readout::Integrate;
  throw InputError(fmt::format("{}: unknown readout '{}' (expected spike or integrate)", option, text));
}

std::string readout_name(Readout r) { return r == Readout::Spike ? "spike" : "integrate"; }

std::uint64_t sample_stream_seed(std::uint64_t seed, std::uint64_t trial, std::uint64_t sample) {
  return stream_seed(seed, trial, sample);
}

SpikingNetwork::SpikingNetwork(const Mlp& net, std::vector<SpikingLayer> layers, SpikingConfig cfg)
    : net_(&net), layers_(std::move(layers)), cfg_(cfg), trace_(cfg.tau, cfg.dt) {
  const std::size_t L = net.layers.size();
  if (L == 0) throw InputError("network: no layers");
  const std::size_t want = cfg.readout == Readout::Spike ? L : L - 1;
  if (layers_.size() != want)
    throw InputError(fmt::format("--neurons: {} spiking layers given, the network with readout '{}' needs {}",
                                 layers_.size(), readout_name(cfg.readout), want));
  if (!(cfg.T > 0) || !std::isfinite(cfg.T)) throw InputError(fmt::format("--T: {} must be positive", cfg.T));
  const double steps = std::round(cfg.T / cfg.dt);
  if (steps < 1 || std::abs(steps * cfg.dt - cfg.T) > 1e-9 * cfg.T)
    throw InputError(fmt::format("--T: {} is not a positive multiple of --dt {}", cfg.T, cfg.dt));
  steps_ = static_cast<std::int64_t>(steps);
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

std::size_t SpikingNetwork::spiking_neurons() const {
  std::size_t n = 0;
  for (std::size_t l = 0; l < layers_.size(); ++l) n += net_->layers[l].out_size();
  return n;
}

Eigen::VectorXd SpikingNetwork::decode(const SampleRun& r, std::size_t l) const {
  Eigen::VectorXd a(r.counts[l].size());
  for (std::size_t i = 0; i < r.counts[l].size(); ++i) a[i] = r.counts[l][i] / (cfg_.T * layers_[l].alpha);
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

  std::vector<Eigen::VectorXd> bias(L), current(L);
  for (std::size_t l = 1; l < L; ++l) {
    bias[l] = net_->layers[l].b.cast<double>();
    current[l] = Eigen::VectorXd::Zero(net_->layers[l].out_size());
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
  Eigen::VectorXd h_sum = Eigen::VectorXd::Zero(net_->layers[L - 1].out_size());
  Eigen::VectorXd h_buf;

  for (std::int64_t k = 0; k < steps_; ++k) {
    // 1-2: every layer reads its input for step k and advances over the step.
    for (std::size_t l = 0; l < L; ++l) {
      const double* h;
      if (l == 0) {
        h = h1.data();
      } else {
        h_buf = bias[l] + current[l];
        h = h_buf.data();
      }
      const int n = net_->layers[l].out_size();
      if (l == L - 1)
        for (int j = 0; j < n; ++j) h_sum[j] += h[j];
      if (l >= S) continue;  // integrating readout
      const StepSampler& sampler = samplers_[l];
      NeuronState* st = state[l].data();
      std::uint32_t* cnt = out.counts[l].data();
      for (int j = 0; j < n; ++j) {
        std::uint32_t sp;
        if constexpr (K == SamplerKind::Exact)
          sp = sampler.step_exact(h[j], st[j], rng, counts);
        else
          sp = sampler.step(h[j], st[j], rng, counts);
        if (sp) {
          cnt[j] += sp;
          fired[l].emplace_back(static_cast<std::uint32_t>(j), sp);
        }
      }
    }
    // 3: close step k: decay every current and add the spikes of step k.
    for (std::size_t l = 1; l < L; ++l) {
      Eigen::VectorXd& I = current[l];
      I *= trace_.decay;
      if (l - 1 >= S) continue;
      const Eigen::MatrixXf& W = w_scaled_[l - 1];
      const Eigen::Index rows = W.rows();
      for (const auto& [i, sp] : fired[l - 1]) {
        const double c = trace_.spike_weight * sp;
        const float* col = W.data() + static_cast<Eigen::Index>(i) * rows;
        double* dst = I.data();
        for (Eigen::Index r = 0; r < rows; ++r) dst[r] += c * col[r];
      }
    }
    for (auto& f : fired) f.clear();
  }

  out.mean_output_input = h_sum / static_cast<double>(steps_);
  const int n_out = net_->layers[L - 1].out_size();
  int best = 0;
  if (S == L) {
    const auto& c = out.counts[L - 1];
    for (int j = 1; j < n_out; ++j)
      if (c[j] > c[best] || (c[j] == c[best] && out.mean_output_input[j] > out.mean_output_input[best])) best = j;
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
  return out;
}

}  // namespace ctmc::sim
