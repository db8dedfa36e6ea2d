#include "ctmc/sim/engines/spiking.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ctmc/sim/neurons/philox.hpp"
#include "ctmc/sim/neurons/rng.hpp"
#include "ctmc/core/errors.hpp"
#include "axpy.hpp"
#include "spiking_parts.hpp"
#include "step_loop.hpp"
#include "exp_ziggurat.hpp"
#include "kernel_math.hpp"

namespace ctmc::sim {

Readout parse_readout(const std::string& text, const std::string& option) {
  if (text == "spike") return Readout::Spike;
  if (text == "integrate") return Readout::Integrate;
  throw InputError(option, fmt::format("unknown readout '{}' (expected spike or integrate)", text));
}

std::string readout_name(Readout r) { return r == Readout::Spike ? "spike" : "integrate"; }

namespace {
// The samplers the vectorised kernel runs (SpikingNetwork::run).
bool vectorised_runs(SamplerKind sampler) {
  return sampler == SamplerKind::Exact || sampler == SamplerKind::EndState;
}
}  // namespace

Kernel parse_kernel(const std::string& text, const std::string& option) {
  if (text == "auto") return Kernel::Auto;
  if (text == "reference") return Kernel::Reference;
  if (text == "vectorised") return Kernel::Vectorised;
  if (text == "fast") return Kernel::Fast;
  throw InputError(option, fmt::format("unknown kernel '{}' (expected auto, reference, vectorised or fast)", text));
}

void check_kernel(Kernel kernel, SamplerKind sampler, const std::string& option) {
  if ((kernel == Kernel::Vectorised || kernel == Kernel::Fast) && !vectorised_runs(sampler))
    throw InputError(option, fmt::format("the vectorised kernel runs the exact and end-state samplers; {} runs on the "
                                         "reference kernel",
                                         sampler_name(sampler)));
}

const char* kernel_name(Kernel kernel) {
  switch (kernel) {
    case Kernel::Auto: return "auto";
    case Kernel::Reference: return "reference";
    case Kernel::Vectorised: return "vectorised";
    case Kernel::Fast: return "fast";
  }
  return "auto";
}

Kernel kernel_used(const SpikingConfig& cfg, bool fast_fits) {
  if (!vectorised_runs(cfg.sampler) || cfg.kernel == Kernel::Reference) return Kernel::Reference;
  if (cfg.kernel == Kernel::Auto) return fast_fits ? Kernel::Fast : Kernel::Vectorised;
  return cfg.kernel;
}

SpikingConfig::ConvPath parse_conv_path(const std::string& text, const std::string& option) {
  using CP = SpikingConfig::ConvPath;
  if (text == "auto") return CP::Auto;
  if (text == "event") return CP::Event;
  if (text == "dense") return CP::Dense;
  throw InputError(option, fmt::format("unknown conv path '{}' (expected auto, event or dense)", text));
}

const char* conv_path_name(SpikingConfig::ConvPath path) {
  switch (path) {
    case SpikingConfig::ConvPath::Auto: return "auto";
    case SpikingConfig::ConvPath::Event: return "event";
    case SpikingConfig::ConvPath::Dense: return "dense";
  }
  return "auto";
}

std::size_t spiking_layer_count(const Mlp& net, Readout readout) {
  const std::size_t L = net.layers.size();
  return readout == Readout::Spike || L == 0 ? L : L - 1;
}

std::size_t spiking_neuron_count(const Mlp& net, Readout readout) {
  std::size_t n = 0;
  for (std::size_t l = 0; l < spiking_layer_count(net, readout); ++l) n += net.layers[l].out_size();
  return n;
}

std::size_t spiking_layer_count(const Net& net, Readout readout) {
  return net.nonlinear_layer_count() + (readout == Readout::Spike ? 1 : 0);
}

std::size_t spiking_neuron_count(const Net& net, Readout readout) {
  const std::vector<NetStage> stages = spiking_stages(net, "net");
  std::size_t n = 0;
  for (std::size_t l = 0; l < spiking_layer_count(net, readout); ++l)
    n += static_cast<std::size_t>(net.layers[stages[l].last].out.size());
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

using detail::JumpCalendar;
using detail::SmallChain;

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

// ---- The vectorised kernel (exact and end-state samplers) ----
//
// Same law as above; what changes is the layout and the random stream.
// Neuron j of spiking layer l draws from its own Philox4x32-10 stream
// (philox.hpp), keyed by the sample's stream seed: block b of the stream is
// the counter (b, j, l), and its two 64-bit words are the neuron's draws
// 2b and 2b+1, used in order (a destination uniform only where the state has
// several exits, then the words of the next unit-exponential clock, usually
// one: exp_ziggurat.hpp). A neuron's draws therefore do not depend on the
// order in which neurons are visited, so later layers are advanced two or
// four neurons at a time and layer 1 in event order, without a shared stream.
//
// Later layers: one fused, branch-free pass per step over structure-of-
// arrays data (current, bias, state, clock): H = b + I, I <- d I (trace.hpp,
// steps 1 and 3), the exit rate of the current state at H (every state's
// rate evaluated and the neuron's own selected with a mask, so chains of up
// to four states and two exits per state need no gather), and the no-jump
// update clock <- clock - q. Lanes with a jump (rare: about the jump rate
// times dt) leave the vector loop for the jump loop (SmallChain::jumps, or
// StepSampler::jumps_exact for other chains). The same operations in
// the same order as StepSampler::exit_dt, so the SSE2 and AVX passes and
// the scalar one (other chains) give the same bits. A neuron in a state
// whose exit rate does not depend on H costs the same lane work as any
// other, so no separate skip-ahead is kept for those states.

// One spiking layer's neurons, padded to whole vectors (padding: clock +inf,
// never jumps). The state index is held as a double so that it is compared
// in the same vector registers as the rates.
struct VecLayer {
  const SmallChain* chain = nullptr;  // null: not a small chain
  std::uint32_t index = 0;
  int n = 0, padded = 0;
  std::vector<double> state, clock;
  std::vector<std::uint64_t> draws;  // words of the neuron's stream used so far
  std::vector<std::uint64_t> spare;  // the second word of the last block (draws odd)
};

class NeuronDraws {
 public:
  NeuronDraws(const PhiloxKey& key, VecLayer& L, std::uint32_t neuron)
      : key_(key), layer_(L.index), neuron_(neuron), draws_(&L.draws[neuron]), spare_(&L.spare[neuron]) {}
  double uniform() { return philox_uniform(next()); }
  // Exp(1) by the ziggurat (exp_ziggurat.hpp): most draws need no log.
  double exponential() {
    return ExpZiggurat::get().sample([this] { return next(); });
  }

 private:
  std::uint64_t next() {
    const std::uint64_t w = (*draws_)++;
    if (w & 1) return *spare_;
    const std::uint64_t b = w >> 1;
    const PhiloxBlock blk =
        philox4x32({static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32), neuron_, layer_}, key_);
    *spare_ = philox_word(blk, 1);
    return philox_word(blk, 0);
  }
  PhiloxKey key_;
  std::uint32_t layer_, neuron_;
  std::uint64_t *draws_, *spare_;
};

using Fired = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

template <SamplerKind K>
[[gnu::noinline]] void jump_neuron(const StepSampler& smp, const PhiloxKey& key, VecLayer& L, std::uint32_t j,
                                   double h, double q, StepCounts& counts, std::uint32_t* cnt, Fired& fired) {
  std::uint32_t s = static_cast<std::uint32_t>(L.state[j]);
  const std::uint32_t start = s;
  NeuronDraws draws(key, L, j);
  std::uint32_t sp = L.chain ? L.chain->jumps(h, s, L.clock[j], draws, counts, q)
                             : smp.jumps_exact(h, s, L.clock[j], draws, counts, q);
  if constexpr (K == SamplerKind::EndState) sp = smp.end_state_implies_spike(start, s) ? 1u : 0u;
  L.state[j] = s;
  if (sp) {
    cnt[j] += sp;
    fired.emplace_back(j, sp);
  }
}

// Any chain, one neuron at a time.
template <SamplerKind K>
void advance_scalar(const StepSampler& smp, const PhiloxKey& key, const double* bias, double* cur, double decay,
                    double* h_sum, VecLayer& L, StepCounts& counts, std::uint32_t* cnt, Fired& fired) {
  for (int j = 0; j < L.n; ++j) {
    double h = bias[j];
    if (cur) {
      h += cur[j];
      cur[j] *= decay;
    }
    if (h_sum) h_sum[j] += h;
    const double q = smp.exit_dt(static_cast<std::uint32_t>(L.state[j]), h);
    if (L.clock[j] > q)
      L.clock[j] -= q;
    else
      jump_neuron<K>(smp, key, L, static_cast<std::uint32_t>(j), h, q, counts, cnt, fired);
  }
}

// Chains of NST <= 4 states with KMAX <= 2 exit slots each, W = 2 or 4
// neurons per vector (GCC's vector extensions: SSE2 instructions in the
// baseline build, AVX ones in advance_vec_avx, which the target attribute
// compiles for AVX and which runs only where the CPU has it). Each lane
// rounds every sum and product as the scalar code does (no contraction), so
// the two widths give the same bits. h_sum (when not null) accumulates H for
// the readout. A null cur means bias already holds H (a layer graph's
// channel-last current, read across and decayed by read_channel_last).
typedef double Lanes2 __attribute__((vector_size(16)));
typedef double Lanes4 __attribute__((vector_size(32)));

// Always inlined down to advance_vec and advance_vec_avx, so no vector
// crosses a call and GCC's note on 32-byte vector returns in SSE2 code
// (-Wpsabi) does not apply.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
using detail::load_lanes;
using detail::store_lanes;

// Whether every lane of a comparison's result is true (all bits set), by
// halving in registers: reading the lanes one by one would go through memory.
typedef long Mask2 __attribute__((vector_size(16)));
typedef long Mask4 __attribute__((vector_size(32)));
// __builtin_shufflevector: GCC (from 12) and clang alike (the fuzzing build).
[[gnu::always_inline]] inline bool all_lanes(Mask2 m) { return (m & __builtin_shufflevector(m, m, 1, 0))[0] != 0; }
[[gnu::always_inline]] inline bool all_lanes(const Mask4& m) {
  const Mask4 half = m & __builtin_shufflevector(m, m, 2, 3, 0, 1);
  return (half & __builtin_shufflevector(half, half, 1, 0, 3, 2))[0] != 0;
}

template <SamplerKind K, int NST, int KMAX, class V>
[[gnu::always_inline]] inline void advance_lanes(const StepSampler& smp, const PhiloxKey& key, const double* bias,
                                                 double* cur, double decay, double* h_sum, VecLayer& L,
                                                 StepCounts& counts, std::uint32_t* cnt, Fired& fired) {
  constexpr int W = sizeof(V) / sizeof(double);
  const double* off = smp.offset_dt();
  const double* slope = smp.slope_dt();
  // Slots beyond the chain's own (states >= n, slots >= kmax) stay zero:
  // adding a rectified zero rate leaves a sum unchanged.
  const std::size_t n = smp.kernel().size(), kmax = smp.max_out_degree();
  const V zero = {};
  V o[NST][KMAX], sl[NST][KMAX], id[NST];
  for (int i = 0; i < NST; ++i) {
    id[i] = zero + static_cast<double>(i);
    for (int k = 0; k < KMAX; ++k) {
      const bool real = static_cast<std::size_t>(i) < n && static_cast<std::size_t>(k) < kmax;
      o[i][k] = zero + (real ? off[static_cast<std::size_t>(i) * kmax + k] : 0.0);
      sl[i][k] = zero + (real ? slope[static_cast<std::size_t>(i) * kmax + k] : 0.0);
    }
  }
  const V d = zero + decay;
  double* state = L.state.data();
  double* clock = L.clock.data();
  for (int j = 0; j < L.padded; j += W) {
    V h = load_lanes<V>(bias + j);
    if (cur) {
      const V c = load_lanes<V>(cur + j);
      h = h + c;
      store_lanes(cur + j, c * d);
    }
    if (h_sum) store_lanes(h_sum + j, load_lanes<V>(h_sum + j) + h);
    const V s = load_lanes<V>(state + j);
    V q = zero;
#pragma GCC unroll 4
    for (int i = 0; i < NST; ++i) {
      // Exit rate of state i: its rectified slot rates summed in slot order
      // (r > 0 ? r : 0 is rectify's max(r, 0), 0 for a NaN r).
      V r = o[i][0] + sl[i][0] * h;
      V qi = r > 0 ? r : zero;
#pragma GCC unroll 2
      for (int k = 1; k < KMAX; ++k) {
        r = o[i][k] + sl[i][k] * h;
        qi = qi + (r > 0 ? r : zero);
      }
      q = i == 0 ? qi : (s == id[i] ? qi : q);
    }
    const V clk = load_lanes<V>(clock + j);
    const auto quiet = clk > q;
    store_lanes(clock + j, quiet ? clk - q : clk);
    if (!all_lanes(quiet)) [[unlikely]] {
      for (int lane = 0; lane < W; ++lane)
        if (!quiet[lane])
          jump_neuron<K>(smp, key, L, static_cast<std::uint32_t>(j + lane), h[lane], q[lane], counts, cnt, fired);
    }
  }
}

#pragma GCC diagnostic pop

template <SamplerKind K, int NST, int KMAX>
void advance_vec(const StepSampler& smp, const PhiloxKey& key, const double* bias, double* cur, double decay,
                 double* h_sum, VecLayer& L, StepCounts& counts, std::uint32_t* cnt, Fired& fired) {
  advance_lanes<K, NST, KMAX, Lanes2>(smp, key, bias, cur, decay, h_sum, L, counts, cnt, fired);
}

#if defined(CTMC_SIM_AVX_DISPATCH)
template <SamplerKind K, int NST, int KMAX>
__attribute__((target("avx"))) void advance_vec_avx(const StepSampler& smp, const PhiloxKey& key, const double* bias,
                                                    double* cur, double decay, double* h_sum, VecLayer& L,
                                                    StepCounts& counts, std::uint32_t* cnt, Fired& fired) {
  advance_lanes<K, NST, KMAX, Lanes4>(smp, key, bias, cur, decay, h_sum, L, counts, cnt, fired);
}
#endif

template <SamplerKind K, int NST, int KMAX>
void advance_vec_any(const StepSampler& smp, const PhiloxKey& key, const double* bias, double* cur, double decay,
                     double* h_sum, VecLayer& L, StepCounts& counts, std::uint32_t* cnt, Fired& fired) {
#if defined(CTMC_SIM_AVX_DISPATCH)
  if (detail::has_avx()) return advance_vec_avx<K, NST, KMAX>(smp, key, bias, cur, decay, h_sum, L, counts, cnt, fired);
#endif
  advance_vec<K, NST, KMAX>(smp, key, bias, cur, decay, h_sum, L, counts, cnt, fired);
}

template <SamplerKind K>
void advance_later(const StepSampler& smp, const PhiloxKey& key, const double* bias, double* cur, double decay,
                   double* h_sum, VecLayer& L, StepCounts& counts, std::uint32_t* cnt, Fired& fired) {
  const std::size_t n = smp.kernel().size(), k = smp.max_out_degree();
  if (n == 2 && k == 1) return advance_vec_any<K, 2, 1>(smp, key, bias, cur, decay, h_sum, L, counts, cnt, fired);
  if (n == 3 && k == 2) return advance_vec_any<K, 3, 2>(smp, key, bias, cur, decay, h_sum, L, counts, cnt, fired);
  if (n <= 4 && k <= 2) return advance_vec_any<K, 4, 2>(smp, key, bias, cur, decay, h_sum, L, counts, cnt, fired);
  advance_scalar<K>(smp, key, bias, cur, decay, h_sum, L, counts, cnt, fired);
}

// Layer 1, event-driven as in the reference kernel (schedule_layer1): the
// neuron's next jump step follows from its constant exit rate.
void schedule_vec1(const double* qtab, std::size_t nst, VecLayer& L, std::uint32_t j, std::int64_t from,
                   std::int64_t steps, JumpCalendar& cal) {
  const double q = qtab[static_cast<std::size_t>(j) * nst + static_cast<std::size_t>(L.state[j])];
  if (!(q > 0)) return;
  // m = max(0, ceil(t) - 1), t = clock / q >= 0: floor(t) for a t that is
  // not an integer, t - 1 for one; t at or beyond the window is not scheduled.
  const double t = L.clock[j] / q;
  if (!(static_cast<double>(from) + t - 1 < static_cast<double>(steps))) return;
  const auto whole = static_cast<std::int64_t>(t);  // floor: t >= 0 and below 2^63 here
  const double m = static_cast<double>(std::max<std::int64_t>(0, static_cast<double>(whole) == t ? whole - 1 : whole));
  if (static_cast<double>(from) + m >= static_cast<double>(steps)) return;
  L.clock[j] -= m * q;
  cal.add(from + static_cast<std::int64_t>(m), j, from);
}

template <SamplerKind K>
void advance_vec1_events(const StepSampler& smp, const PhiloxKey& key, const double* h, const double* qtab,
                         VecLayer& L, std::int64_t k, std::int64_t steps, JumpCalendar& cal, StepCounts& counts,
                         std::uint32_t* cnt, Fired& fired) {
  const std::size_t nst = smp.kernel().size();
  std::vector<std::uint32_t>& now = cal.due(k);
  for (std::size_t e = 0; e < now.size(); ++e) {
    const std::uint32_t j = now[e];
    jump_neuron<K>(smp, key, L, j, h[j], qtab[static_cast<std::size_t>(j) * nst + static_cast<std::size_t>(L.state[j])],
                   counts, cnt, fired);
    schedule_vec1(qtab, nst, L, j, k + 1, steps, cal);
  }
  now.clear();
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
  configure();
  // W~^l = W^l / alpha_{l-1} feeds layer l from spiking layer l-1.
  for (std::size_t l = 1; l < L; ++l) w_scaled_.push_back(net.layers[l].W / static_cast<float>(layers_[l - 1].alpha));
  for (std::size_t l = 0; l + 1 < L && l < layers_.size(); ++l) {
    const auto& W = net.layers[l + 1].W;
    std::vector<std::uint32_t> f(W.cols());
    for (Eigen::Index i = 0; i < W.cols(); ++i) f[i] = static_cast<std::uint32_t>((W.col(i).array() != 0.0f).count());
    fanout_.push_back(std::move(f));
  }
  for (std::size_t l = 0; l < L; ++l) {
    const auto& b = net.layers[l].b;
    sizes_.push_back(net.layers[l].out_size());
    bias_.emplace_back(b.data(), b.data() + b.size());
  }
}

SpikingNetwork::SpikingNetwork(const Net& net, std::vector<SpikingLayer> layers, SpikingConfig cfg)
    : layers_(std::move(layers)), cfg_(cfg), trace_(cfg.tau, cfg.dt, cfg.trace_weight) {
  const std::vector<NetStage> stages = spiking_stages(net, "net");
  const std::size_t L = stages.size();
  const std::size_t want = spiking_layer_count(net, cfg.readout);
  if (layers_.size() != want)
    throw InputError("neurons", fmt::format("{} spiking layers given, the network with readout '{}' needs {}",
                                            layers_.size(), readout_name(cfg.readout), want));
  configure();
  chains_.reserve(L);
  for (std::size_t l = 0; l < L; ++l) {
    // Layer l reads the image (l = 0) or the traces of spiking layer l-1,
    // whose rates are alpha_{l-1} times the ANN's activations.
    chains_.emplace_back(net, stages[l], l == 0 ? 1.0 : layers_[l - 1].alpha);
    sizes_.push_back(chains_.back().out_size());
    bias_.push_back(chains_.back().bias());
  }
  for (std::size_t l = 0; l + 1 < L && l < layers_.size(); ++l) fanout_.push_back(chains_[l + 1].fanouts());
}

void SpikingNetwork::configure() {
  steps_ = window_steps(cfg_.T, cfg_.dt, "T");
  for (std::size_t c = 0; c < cfg_.checkpoints.size(); ++c) {
    const double Tc = cfg_.checkpoints[c];
    const std::int64_t k = window_steps(Tc, cfg_.dt, "T");
    if (!checkpoint_steps_.empty() && k <= checkpoint_steps_.back())
      throw InputError("T", fmt::format("checkpoint {} does not follow {} (give increasing times)", Tc,
                                        cfg_.checkpoints[c - 1]));
    if (k > steps_) throw InputError("T", fmt::format("checkpoint {} lies beyond the window T = {}", Tc, cfg_.T));
    checkpoint_steps_.push_back(k);
  }
  for (const auto& l : layers_)
    if (!(l.alpha > 0) || !std::isfinite(l.alpha))
      throw InputError(fmt::format("layer scale alpha = {} must be positive and finite", l.alpha));
  samplers_.reserve(layers_.size());
  for (const auto& l : layers_) samplers_.emplace_back(l.kernel, cfg_.sampler, cfg_.dt);
  // The fast kernel's lanes hold chains of at most 4 states and 2 exits per
  // state. Asked for by name, a chain beyond that is refused rather than run
  // on another kernel under its name; Auto takes the vectorised kernel then
  // (kernel_used).
  const auto fits_fast = [](const StepSampler& s) { return s.kernel().size() <= 4 && s.max_out_degree() <= 2; };
  const auto beyond = std::find_if_not(samplers_.begin(), samplers_.end(), fits_fast);
  fast_fits_ = beyond == samplers_.end();
  if (cfg_.kernel == Kernel::Fast && vectorised_runs(cfg_.sampler) && !fast_fits_)
    throw InputError("kernel", fmt::format("the fast kernel runs chains of at most 4 states and 2 exits per "
                                           "state; spiking layer {} has {} states and up to {} exits (use "
                                           "vectorised)",
                                           beyond - samplers_.begin() + 1, beyond->kernel().size(),
                                           beyond->max_out_degree()));
}

std::size_t SpikingNetwork::spiking_neurons() const {
  std::size_t n = 0;
  for (std::size_t l = 0; l < layers_.size(); ++l) n += static_cast<std::size_t>(sizes_[l]);
  return n;
}

Eigen::VectorXd SpikingNetwork::decode(const SampleRun& r, std::size_t l) const {
  Eigen::VectorXd a(r.counts[l].size());
  for (std::size_t i = 0; i < r.counts[l].size(); ++i) a[i] = r.counts[l][i] / (r.T * layers_[l].alpha);
  return a;
}

SampleRun SpikingNetwork::run(const float* x, std::uint64_t stream_seed) const {
  const Kernel kernel = this->kernel();
  const bool fast = kernel == Kernel::Fast;
  switch (cfg_.sampler) {
    case SamplerKind::Exact:
      if (kernel == Kernel::Reference) return run_impl<SamplerKind::Exact>(x, stream_seed);
      return fast ? run_fast<SamplerKind::Exact>(x, stream_seed) : run_vec<SamplerKind::Exact>(x, stream_seed);
    case SamplerKind::EndState:
      if (kernel == Kernel::Reference) return run_impl<SamplerKind::EndState>(x, stream_seed);
      return fast ? run_fast<SamplerKind::EndState>(x, stream_seed) : run_vec<SamplerKind::EndState>(x, stream_seed);
    case SamplerKind::Uniformization:
      return run_impl<SamplerKind::Uniformization>(x, stream_seed);
    case SamplerKind::Euler:
      return run_impl<SamplerKind::Euler>(x, stream_seed);
  }
  return {};
}

namespace {

// H^1 = W^1 x + b^1 in double, skipping zero pixels: layer 1's constant input
// (both kernels).
Eigen::VectorXd first_layer_input(const DenseLayer& first, const float* x) {
  Eigen::VectorXd h1 = first.b.cast<double>();
  for (Eigen::Index i = 0; i < first.W.cols(); ++i)
    if (x[i] != 0.0f) {
      const double xi = x[i];
      for (Eigen::Index r = 0; r < first.W.rows(); ++r) h1[r] += xi * first.W(r, i);
    }
  return h1;
}

}  // namespace

Eigen::VectorXd SpikingNetwork::layer1_input(const float* x) const {
  if (chains_.empty()) return first_layer_input(net_->layers[0], x);
  // The same sum as first_layer_input: b, then each nonzero pixel's column
  // times its value, target by target.
  const LinearChain& first = chains_[0];
  Eigen::VectorXd h1 = Eigen::Map<const Eigen::VectorXd>(first.bias().data(), first.out_size());
  ChainScratch scratch;
  for (int i = 0; i < first.in_size(); ++i)
    if (x[i] != 0.0f) first.add_spike(static_cast<std::uint32_t>(i), x[i], h1.data(), scratch);
  return h1;
}

// bench_conv's calibration (VGG-11 layers at width 0.25, one x86-64 core
// with AVX): the dense gather costs 2-20x the event-driven scatter's time at
// densities up to 0.05, 1.1-1.5x at 0.5, and becomes the cheaper from 0.7
// or 1 by layer (some of the last layers, 512 channels in VGG-11, not even at 1; the figures
// vary by about 0.2 from run to run). The event-driven scatter adds each spike's
// contiguous kernel runs, so the gather saves only the stores of partial
// sums and pays for scanning the zeros.
const double kDenseConvDensity = 0.6;

namespace detail {

// hb = b + cur and cur *= decay for a current kept channel-last (pixel p,
// channel c at p C + c) and neurons in C-H-W order (c P + p): each element's
// sum and product as the plain loop computes them. Pixels in blocks of 8,
// whose H values (one cache line per channel) stay in the L1 cache while
// pairs of pixels fill them, each pair's two channels swapped in SSE2
// registers.
void read_channel_last(const double* b, double* cur, double* hb, int P, int C, double decay) {
  for (int p0 = 0; p0 < P; p0 += 8) {
    const int p1 = std::min(P, p0 + 8);
    int p = p0;
#if defined(__SSE2__)
    const __m128d d = _mm_set1_pd(decay);
    for (; p + 2 <= p1; p += 2) {
      double* r0 = cur + static_cast<std::size_t>(p) * C;
      double* r1 = r0 + C;
      int c = 0;
      for (; c + 2 <= C; c += 2) {
        const __m128d a0 = _mm_loadu_pd(r0 + c), a1 = _mm_loadu_pd(r1 + c);
        const std::size_t j0 = static_cast<std::size_t>(c) * P + p, j1 = j0 + P;
        _mm_storeu_pd(hb + j0, _mm_add_pd(_mm_loadu_pd(b + j0), _mm_unpacklo_pd(a0, a1)));
        _mm_storeu_pd(hb + j1, _mm_add_pd(_mm_loadu_pd(b + j1), _mm_unpackhi_pd(a0, a1)));
        _mm_storeu_pd(r0 + c, _mm_mul_pd(a0, d));
        _mm_storeu_pd(r1 + c, _mm_mul_pd(a1, d));
      }
      for (; c < C; ++c) {
        const std::size_t j = static_cast<std::size_t>(c) * P + p;
        hb[j] = b[j] + r0[c];
        hb[j + 1] = b[j + 1] + r1[c];
        r0[c] *= decay;
        r1[c] *= decay;
      }
    }
#endif
    for (; p < p1; ++p) {
      double* r = cur + static_cast<std::size_t>(p) * C;
      for (int c = 0; c < C; ++c) {
        const std::size_t j = static_cast<std::size_t>(c) * P + p;
        hb[j] = b[j] + r[c];
        r[c] *= decay;
      }
    }
  }
}

}  // namespace detail

using detail::read_channel_last;

bool SpikingNetwork::transmit(std::size_t l, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& fired,
                              double weight, double* cur, ChainScratch& scratch) const {
  if (!chains_.empty()) {
    const LinearChain& chain = chains_[l];
    using CP = SpikingConfig::ConvPath;
    bool dense = chain.dense_capable() && !fired.empty() &&
                 (cfg_.conv_path == CP::Dense ||
                  (cfg_.conv_path == CP::Auto &&
                   static_cast<double>(fired.size()) >= kDenseConvDensity * chain.in_size()));
    // The dense path adds in ascending input index: only a step whose
    // spikes came in that order gives the event path's sums.
    dense = dense && std::is_sorted(fired.begin(), fired.end(),
                                    [](const auto& a, const auto& b) { return a.first < b.first; });
    if (!dense) {
      for (const auto& [i, sp] : fired) chain.add_spike_stored(i, weight * sp, cur, scratch);
      return false;
    }
    std::vector<double>& src = scratch.dense;
    src.resize(static_cast<std::size_t>(chain.in_size()), 0.0);
    for (const auto& [i, sp] : fired) src[i] = weight * sp;
    chain.add_step_dense(src.data(), cur);
    for (const auto& [i, sp] : fired) src[i] = 0.0;
    return true;
  }
  const Eigen::MatrixXf& W = w_scaled_[l - 1];
  const Eigen::Index rows = W.rows();
  for (const auto& [i, sp] : fired) {
    const double c = weight * sp;
    const float* col = W.data() + static_cast<Eigen::Index>(i) * rows;
    for (Eigen::Index r = 0; r < rows; ++r) cur[r] += c * col[r];
  }
  return false;
}

// The reference kernel's parts of step_loop: one NeuronState per neuron,
// one StepRng for the sample, H read into h_buf ahead of the pass (so the
// step's spikes go into the current before it, kTransmitFirst).
template <SamplerKind K>
struct SpikingNetwork::ReferenceSteps {
  static constexpr bool kTransmitFirst = true;
  static constexpr bool kEvents = K == SamplerKind::Exact || K == SamplerKind::EndState;

  const SpikingNetwork& net;
  StepRng rng;
  StepCounts counts;
  SampleRun out;
  ChainScratch scratch;
  const Eigen::VectorXd h1;
  std::vector<std::vector<double>> current, h_buf;
  std::vector<std::vector<NeuronState>> state;
  std::vector<Fired> fired;
  std::vector<double> qtab1;  // layer 1's exit rates * dt per neuron and state
  JumpCalendar layer1_events;
  Eigen::VectorXd h_sum_;
  const double decay, weight;

  ReferenceSteps(const SpikingNetwork& network, const float* x, std::uint64_t stream_seed)
      : net(network), rng(stream_seed), h1(network.layer1_input(x)), decay(network.trace_.decay),
        weight(network.trace_.spike_weight) {
    const std::size_t L = net.sizes_.size();
    const std::size_t S = net.layers_.size();
    const int n1 = net.sizes_[0];
    out.counts.resize(S);
    out.dense_steps.assign(L > 0 ? L - 1 : 0, 0);
    current.resize(L);
    h_buf.resize(L);
    for (std::size_t l = 1; l < L; ++l) {
      current[l].assign(net.bias_[l].size(), 0.0);
      h_buf[l].assign(net.bias_[l].size(), 0.0);
    }
    state.resize(S);
    fired.resize(S);
    for (std::size_t l = 0; l < S; ++l) {
      const int n = net.sizes_[l];
      state[l].resize(n);
      for (int j = 0; j < n; ++j) state[l][j] = net.samplers_[l].init(0, rng);
      out.counts[l].assign(n, 0);
      fired[l].reserve(n);
    }
    // Layer 1's input is constant: tabulate its exit rates * dt per neuron and state.
    if (S > 0) qtab1 = detail::layer1_exit_table(net.samplers_[0], h1.data(), n1);
    // Exact/end-state: layer 1's exit rates are constant, so the step of each
    // neuron's next jump is known in advance and only those steps are visited.
    if constexpr (kEvents) {
      if (S > 0)
        for (int j = 0; j < n1; ++j)
          schedule_layer1(net.samplers_[0], qtab1.data(), state[0].data(), static_cast<std::uint32_t>(j), 0,
                          net.steps_, layer1_events);
    }
    h_sum_ = Eigen::VectorXd::Zero(net.sizes_[L - 1]);
  }
  ReferenceSteps(const ReferenceSteps&) = delete;
  ReferenceSteps& operator=(const ReferenceSteps&) = delete;

  void layer1(std::int64_t k) {
    add_h_sum(0, h1.data());
    if (!net.layers_.empty()) advance(0, h1.data(), k);
  }
  // hb = b + I, then I decays: H is held for the step before the spikes arrive.
  void read(std::size_t l) {
    double* cur = current[l].data();
    const double* b = net.bias_[l].data();
    double* hb = h_buf[l].data();
    const double d = decay;
    if (!net.chains_.empty() && net.chains_[l].channel_last()) {
      // The current is kept channel-last (net_synapse.hpp), the neurons
      // in C-H-W order: read it across, then decay it in place.
      const Shape3& o = net.chains_[l].out_shape();
      read_channel_last(b, cur, hb, o.h * o.w, o.c, d);
    } else {
      const int n = net.sizes_[l];
      for (int j = 0; j < n; ++j) {
        hb[j] = b[j] + cur[j];
        cur[j] *= d;
      }
    }
  }
  void pass(std::size_t l, std::int64_t k) {
    const double* h = h_buf[l].data();
    add_h_sum(l, h);
    if (l < net.layers_.size()) advance(l, h, k);  // else the integrating readout
  }
  bool transmit(std::size_t l, const Fired& f) { return net.transmit(l, f, weight, current[l].data(), scratch); }
  void sync_counts() {}
  const Eigen::VectorXd& h_sum() const { return h_sum_; }

 private:
  void add_h_sum(std::size_t l, const double* h) {
    if (l + 1 != net.sizes_.size()) return;
    const int n = net.sizes_[l];
    for (int j = 0; j < n; ++j) h_sum_[j] += h[j];
  }
  void advance(std::size_t l, const double* h, std::int64_t k) {
    const StepSampler& sampler = net.samplers_[l];
    NeuronState* st = state[l].data();
    std::uint32_t* cnt = out.counts[l].data();
    const int n = net.sizes_[l];
    if constexpr (kEvents) {
      if (l == 0)
        advance_layer1_events<K>(sampler, h, qtab1.data(), st, k, net.steps_, layer1_events, rng, counts, cnt,
                                 fired[l]);
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
};

template <SamplerKind K>
SampleRun SpikingNetwork::run_impl(const float* x, std::uint64_t stream_seed) const {
  ReferenceSteps<K> steps(*this, x, stream_seed);
  return step_loop(steps);
}

// The vectorised kernel's parts of step_loop: per-neuron Philox streams,
// double lanes (VecLayer) whose pass reads H = b + I and decays I, so the
// step's spikes go into the current after it.
template <SamplerKind K>
struct SpikingNetwork::VectorisedSteps {
  static constexpr bool kTransmitFirst = false;

  const SpikingNetwork& net;
  const PhiloxKey key;
  StepCounts counts;
  SampleRun out;
  ChainScratch scratch;
  const Eigen::VectorXd h1;
  // Biases, currents and the readout's sum of H, padded like the layers, in
  // the neurons' order (C-H-W for a layer graph). A current that a layer
  // graph keeps channel-last (LinearChain::channel_last) stays in the
  // chain's layout; each step it is read across into h_buf (as the
  // reference kernel does), and the lane pass takes H from there.
  std::vector<std::vector<double>> bias, current, h_buf;
  std::vector<double> h_sum_;
  std::vector<SmallChain> chains;  // VecLayer::chain points into it
  std::vector<VecLayer> layer;
  std::vector<Fired> fired;
  std::vector<double> qtab1;
  JumpCalendar layer1_events;
  const double decay, weight;
#if defined(CTMC_SIM_AVX_DISPATCH)
  const bool avx = detail::has_avx();  // the same sums as add_scaled's, four targets at a time
#endif

  static int padded(int n) { return (n + 3) & ~3; }
  bool across(std::size_t l) const { return !net.chains_.empty() && net.chains_[l].channel_last(); }

  VectorisedSteps(const SpikingNetwork& network, const float* x, std::uint64_t stream_seed)
      : net(network), key(philox_key(stream_seed)), h1(network.layer1_input(x)), decay(network.trace_.decay),
        weight(network.trace_.spike_weight) {
    const std::size_t L = net.sizes_.size();
    const std::size_t S = net.layers_.size();
    const int n1 = net.sizes_[0];
    out.counts.resize(S);
    out.dense_steps.assign(L > 0 ? L - 1 : 0, 0);
    bias.resize(L);
    current.resize(L);
    h_buf.resize(L);
    for (std::size_t l = 1; l < L; ++l) {
      const auto& b = net.bias_[l];
      bias[l].assign(static_cast<std::size_t>(padded(net.sizes_[l])), 0.0);
      std::copy(b.begin(), b.end(), bias[l].begin());
      current[l].assign(across(l) ? b.size() : bias[l].size(), 0.0);
      if (across(l)) h_buf[l].assign(bias[l].size(), 0.0);
    }
    h_sum_.assign(static_cast<std::size_t>(padded(net.sizes_[L - 1])), 0.0);
    layer.resize(S);
    fired.resize(S);
    chains.reserve(S);
    for (std::size_t l = 0; l < S; ++l) {
      VecLayer& V = layer[l];
      const SmallChain& chain = chains.emplace_back(net.samplers_[l]);
      V.chain = chain.usable ? &chain : nullptr;
      V.index = static_cast<std::uint32_t>(l);
      V.n = net.sizes_[l];
      V.padded = padded(V.n);
      V.state.assign(static_cast<std::size_t>(V.padded), 0.0);
      V.clock.assign(static_cast<std::size_t>(V.padded), std::numeric_limits<double>::infinity());
      V.draws.assign(static_cast<std::size_t>(V.padded), 0);
      V.spare.assign(static_cast<std::size_t>(V.padded), 0);
      for (int j = 0; j < V.n; ++j) V.clock[j] = NeuronDraws(key, V, static_cast<std::uint32_t>(j)).exponential();
      out.counts[l].assign(static_cast<std::size_t>(V.n), 0);
      fired[l].reserve(static_cast<std::size_t>(V.n));
    }
    if (S > 0) {
      const std::size_t nst = net.layers_[0].kernel.size();
      qtab1 = detail::layer1_exit_table(net.samplers_[0], h1.data(), n1);
      for (int j = 0; j < n1; ++j)
        schedule_vec1(qtab1.data(), nst, layer[0], static_cast<std::uint32_t>(j), 0, net.steps_, layer1_events);
    }
  }
  VectorisedSteps(const VectorisedSteps&) = delete;
  VectorisedSteps& operator=(const VectorisedSteps&) = delete;

  void layer1(std::int64_t k) {
    if (net.sizes_.size() == 1)
      for (int j = 0; j < net.sizes_[0]; ++j) h_sum_[j] += h1[j];
    if (!net.layers_.empty())
      advance_vec1_events<K>(net.samplers_[0], key, h1.data(), qtab1.data(), layer[0], k, net.steps_, layer1_events,
                             counts, out.counts[0].data(), fired[0]);
  }
  void read(std::size_t) {}  // in the lane pass
  void pass(std::size_t l, std::int64_t) {
    double* hs = l + 1 == net.sizes_.size() ? h_sum_.data() : nullptr;
    double* cur = current[l].data();
    const double d = decay;
    // H from b + I in the lane pass, or read across here (cur then null).
    const double* b = bias[l].data();
    double* lane_cur = cur;
    if (across(l)) {
      const Shape3& o = net.chains_[l].out_shape();
      read_channel_last(net.bias_[l].data(), cur, h_buf[l].data(), o.h * o.w, o.c, d);
      b = h_buf[l].data();
      lane_cur = nullptr;
    }
    if (l < net.layers_.size()) {
      advance_later<K>(net.samplers_[l], key, b, lane_cur, d, hs, layer[l], counts, out.counts[l].data(), fired[l]);
    } else {  // integrating readout: H only
      const int n = net.sizes_[l];
      for (int j = 0; j < n; ++j) {
        hs[j] += lane_cur ? b[j] + lane_cur[j] : b[j];
        if (lane_cur) lane_cur[j] *= d;
      }
    }
  }
  bool transmit(std::size_t l, const Fired& f) {
    double* cur = current[l].data();
    if (!net.chains_.empty()) return net.transmit(l, f, weight, cur, scratch);
    const Eigen::MatrixXf& W = net.w_scaled_[l - 1];
    const Eigen::Index rows = W.rows();
    for (const auto& [i, sp] : f) {
      const float* w = W.data() + static_cast<Eigen::Index>(i) * rows;
#if defined(CTMC_SIM_AVX_DISPATCH)
      if (avx) {
        detail::add_scaled_avx(cur, w, rows, weight * sp);
        continue;
      }
#endif
      detail::add_scaled(cur, w, rows, weight * sp);
    }
    return false;
  }
  void sync_counts() {}
  Eigen::VectorXd h_sum() const {
    Eigen::VectorXd v(net.sizes_.back());
    for (Eigen::Index j = 0; j < v.size(); ++j) v[j] = h_sum_[static_cast<std::size_t>(j)];
    return v;
  }
};

template <SamplerKind K>
SampleRun SpikingNetwork::run_vec(const float* x, std::uint64_t stream_seed) const {
  VectorisedSteps<K> steps(*this, x, stream_seed);
  return step_loop(steps);
}

void SpikingNetwork::read_out(SampleRun& out, const Eigen::VectorXd& h_sum, std::int64_t steps, double T,
                              const StepCounts& counts) const {
  const std::size_t L = sizes_.size();
  const std::size_t S = layers_.size();
  out.T = T;
  out.mean_output_input = h_sum / static_cast<double>(steps);
  const int n_out = sizes_[L - 1];
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
  out.budget_updates = counts.budget_updates;
}

}  // namespace ctmc::sim
