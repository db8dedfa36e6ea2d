// The fast spiking kernel (Kernel::Fast): the exact and
// end-state samplers of sampler.hpp, the same law as the reference kernel
// and the vectorised one (spiking.cpp), with
//   - float32 structure-of-arrays lanes for the per-step pass over layers
//     2..L: current, H, state index and exit rate, sixteen neurons per
//     AVX-512 instruction, eight per AVX one, four per SSE2 one; the hazard
//     budget (the residual unit exponential of the next-reaction clock) in
//     double beside them, as fast_lanes says why. Every lane rounds each sum
//     and product as the scalar code does (the build forbids contraction,
//     and no path uses FMA), and nothing is summed across lanes, so every
//     width gives the same bits;
//   - float32 synapses: a spike adds c * w (c = the trace's weight times
//     the spike count, rounded to float) to the float current, for an Mlp
//     column by column, for a layer graph through LinearChain's float
//     scatter and gather (net_synapse.hpp). A layer fed by a convolution
//     keeps its current channel-last, and its lanes visit the neurons in
//     that order, so the lane pass reads b + I where the scatter left it;
//     a step's spikes go back to C-H-W order (ascending) before they are
//     transmitted;
//   - per-neuron Philox4x32-10 streams (philox.hpp) whose blocks serve four
//     32-bit draws each: block b of neuron j in spiking layer l is the
//     counter (b, 0, j, l | 2^31) (the top bit keeps it apart from the
//     vectorised kernel's counters), its words used in order. The hazard
//     budgets are unit exponentials from the ziggurat on 32-bit words
//     (ExpZiggurat::sample32), the destination uniforms 24-bit. A neuron's
//     draws do not depend on the order in which neurons are visited, so the
//     results do not depend on the vector width or the thread count;
//   - layer 1 event-driven on its constant input (its exit rates tabulated
//     once per image, the next jump step computed from them), as in the
//     other kernels.
// A jump (rare: about the jump rate times dt per neuron-step) leaves the
// lanes for jump_loop (sampler.hpp) in double, from the lane's float H and
// rate. The lanes' rates are float32 sums and products of H and the rate
// tables rounded to float, the jump loop's the double ones: the two differ
// by a few float roundings of the rate (a relative 1e-7), which the budget
// then integrates without bias (the roundings of H and of the rates vary
// from step to step, unlike a float budget's, fast_lanes).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ctmc/sim/engines/spiking.hpp"
#include "ctmc/sim/neurons/philox.hpp"
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#include "axpy.hpp"
#include "exp_ziggurat.hpp"
#include "spiking_parts.hpp"
#include "step_loop.hpp"

namespace ctmc::sim {

namespace {

using detail::JumpCalendar;
using detail::SmallChain;
using Fired = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

// Lanes per AVX-512 vector of floats: layers are padded to a multiple of it
// (padding: H 0, budget +inf, never jumps), so every width visits the same
// neurons.
constexpr int kPad = 16;

// One spiking layer's neurons in structure-of-arrays form.
struct FastLayer {
  std::uint32_t index = 0;
  int n = 0, padded = 0;
  std::vector<float> state;    // state index (as float, compared in the lanes)
  std::vector<double> budget;  // hazard budget (see fast_lanes: double, not float)
  std::vector<std::uint32_t> draws;             // 32-bit words of the neuron's stream used so far
  std::vector<std::array<std::uint32_t, 4>> block;  // the block those words come from
};

// Neuron j's stream: words in order, one Philox call per four.
class FastDraws {
 public:
  FastDraws(const PhiloxKey& key, FastLayer& L, std::uint32_t j) : key_(key), L_(L), j_(j) {}
  double uniform() { return static_cast<double>(next() >> 8) * 0x1.0p-24; }
  double exponential() {
    return ExpZiggurat::get().sample32([this] { return next(); });
  }

 private:
  std::uint32_t next() {
    const std::uint32_t w = L_.draws[j_]++;
    std::array<std::uint32_t, 4>& blk = L_.block[j_];
    if ((w & 3) == 0) blk = philox4x32({w >> 2, 0u, j_, L_.index | 0x80000000u}, key_);
    return blk[w & 3];
  }
  PhiloxKey key_;
  FastLayer& L_;
  std::uint32_t j_;
};

// jump_loop's view of a SmallChain whose exit slots per state (KMAX, 1 or
// 2) are known at compile time: the same operations in the same order as
// SmallChain's, with the slot loops unrolled and the destination draw's
// test (max_out_degree() == 1) decided by the compiler. single_exit(i):
// state i has one slot whose rate can be positive (the others have offset
// and slope 0, padding of a state with fewer exits, such as the
// three-state neuron's B and R), so a jump from it goes there for any x and
// jump_loop draws no destination uniform.
template <int KMAX>
struct FixedChain {
  const SmallChain& c;
  static constexpr std::size_t max_out_degree() { return KMAX; }
  bool single_exit(std::uint32_t i) const {
    int live = 0;
    for (int k = 0; k < KMAX; ++k) live += c.off[i][k] != 0 || c.slope[i][k] != 0;
    return live <= 1;
  }
  double exit_dt(std::uint32_t i, double H) const {
    double q = 0;
    for (int k = 0; k < KMAX; ++k) q += rectify(c.off[i][k] + c.slope[i][k] * H);
    return q;
  }
  JumpSlot slot(std::uint32_t i, double H, double x) const {
    int chosen = 0;
    double acc = 0;
    for (int k = 0; k < KMAX; ++k) {
      const double r = c.off[i][k] + c.slope[i][k] * H;
      if (r > 0) {
        acc += r;
        chosen = k;
        if (x < acc) break;
      }
    }
    return {c.to[i][chosen], c.spike[i][chosen]};
  }
};

// The rest of a step with a jump for neuron j (budget <= q), in double.
template <SamplerKind K, int KMAX>
[[gnu::noinline]] void fast_jump(const SmallChain& chain, const StepSampler& smp, const PhiloxKey& key, FastLayer& L,
                                 std::uint32_t j, double h, double q, double& budget, StepCounts& counts,
                                 std::uint32_t* cnt, Fired& fired) {
  std::uint32_t s = static_cast<std::uint32_t>(L.state[j]);
  const std::uint32_t start = s;
  FastDraws draws(key, L, j);
  std::uint32_t sp = jump_loop(FixedChain<KMAX>{chain}, h, s, budget, draws, counts, q);
  if constexpr (K == SamplerKind::EndState) sp = smp.end_state_implies_spike(start, s) ? 1u : 0u;
  L.state[j] = static_cast<float>(s);
  if (sp) {
    cnt[j] += sp;
    fired.emplace_back(j, sp);
  }
}

typedef float F4 __attribute__((vector_size(16)));
typedef float F8 __attribute__((vector_size(32)));
typedef double D2 __attribute__((vector_size(16)));
typedef double D4 __attribute__((vector_size(32)));
typedef float F16 __attribute__((vector_size(64)));
typedef double D8 __attribute__((vector_size(64)));

// Always inlined down to fast_pass_sse2, fast_pass_avx and
// fast_pass_avx512, so no vector crosses a call (GCC's -Wpsabi note on 32-
// and 64-byte vectors does not apply).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
using detail::load_lanes;
using detail::store_lanes;
// The low and high halves of a float vector, widened to double (exactly).
[[gnu::always_inline]] inline D2 low_d(const F4& v) {
  return __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1), D2);
}
[[gnu::always_inline]] inline D2 high_d(const F4& v) {
  return __builtin_convertvector(__builtin_shufflevector(v, v, 2, 3), D2);
}
[[gnu::always_inline]] inline D4 low_d(const F8& v) {
  return __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1, 2, 3), D4);
}
[[gnu::always_inline]] inline D4 high_d(const F8& v) {
  return __builtin_convertvector(__builtin_shufflevector(v, v, 4, 5, 6, 7), D4);
}
[[gnu::always_inline]] inline D8 low_d(const F16& v) {
  return __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7), D8);
}
[[gnu::always_inline]] inline D8 high_d(const F16& v) {
  return __builtin_convertvector(__builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15), D8);
}
// Whether every lane of t is > 0 (a NaN lane is not): one compare and a
// movemask. The AVX one takes its vector by reference, so a call that is not
// inlined into the AVX pass passes it in memory, the same for either ABI.
#if defined(__SSE2__)
[[gnu::always_inline]] inline bool all_positive(const D2& t) {
  return _mm_movemask_pd(_mm_cmpngt_pd(t, _mm_setzero_pd())) == 0;
}
#else
[[gnu::always_inline]] inline bool all_positive(const D2& t) { return t[0] > 0 && t[1] > 0; }
#endif
#if defined(CTMC_SIM_AVX_DISPATCH)
__attribute__((target("avx"))) inline bool all_positive(const D4& t) {
  return _mm256_movemask_pd(_mm256_cmp_pd(t, _mm256_setzero_pd(), _CMP_NGT_UQ)) == 0;
}
__attribute__((target("avx512f"))) inline bool all_positive(const D8& t) {
  return _mm512_cmp_pd_mask(t, _mm512_setzero_pd(), _CMP_NGT_UQ) == 0;
}
#endif
// Whether no lane of q is > 0 (q is a sum of rectified rates: never NaN).
#if defined(__SSE2__)
[[gnu::always_inline]] inline bool none_positive(const F4& q) {
  return _mm_movemask_ps(_mm_cmpgt_ps(q, _mm_setzero_ps())) == 0;
}
#else
[[gnu::always_inline]] inline bool none_positive(const F4& q) {
  return !(q[0] > 0) && !(q[1] > 0) && !(q[2] > 0) && !(q[3] > 0);
}
#endif
#if defined(CTMC_SIM_AVX_DISPATCH)
__attribute__((target("avx"))) inline bool none_positive(const F8& q) {
  return _mm256_movemask_ps(_mm256_cmp_ps(q, _mm256_setzero_ps(), _CMP_GT_OQ)) == 0;
}
__attribute__((target("avx512f"))) inline bool none_positive(const F16& q) {
  return _mm512_cmp_ps_mask(q, _mm512_setzero_ps(), _CMP_GT_OQ) == 0;
}
#endif

// One step of a layer of chains with NST <= 4 states and KMAX <= 2 exit
// slots each: H = b + I and I <- d I (trace.hpp, steps 1 and 3; with a null
// cur, bias already holds H), the current state's exit rate * dt at H in
// float, and the no-jump update budget <- budget - q in double. h_out (when
// not null) receives H.
// The budget stays in double: in float, b - q rounds to the float grid of
// b, whose spacing near b = 1 is 1.2e-7, and because b moves by the same q
// step after step the rounding does not average out: the hazard would be
// consumed at round(q / ulp) ulp per step instead of q, a relative error up
// to ulp / (2 q) (0.6% at q = 1e-5, a rate of 2e-3 per second at
// dt = 0.005), a change of law. In double that error is 1e-16 / q.
template <SamplerKind K, int NST, int KMAX, class V, class D>
[[gnu::always_inline]] inline void fast_lanes(const SmallChain& chain, const StepSampler& smp, const PhiloxKey& key,
                                              const float* bias, float* cur, float decay, float* h_out, FastLayer& L,
                                              StepCounts& counts, std::uint32_t* cnt, Fired& fired) {
  constexpr int W = sizeof(V) / sizeof(float);
  const V zero = {};
  V o[NST][KMAX], sl[NST][KMAX], id[NST];
  for (int i = 0; i < NST; ++i) {
    id[i] = zero + static_cast<float>(i);
    for (int k = 0; k < KMAX; ++k) {
      const bool real = static_cast<std::size_t>(i) < chain.n && static_cast<std::size_t>(k) < chain.kmax;
      o[i][k] = zero + (real ? static_cast<float>(chain.off[i][k]) : 0.0f);
      sl[i][k] = zero + (real ? static_cast<float>(chain.slope[i][k]) : 0.0f);
    }
  }
  const V d = zero + decay;
  constexpr int W2 = W / 2;
  float* state = L.state.data();
  double* budget = L.budget.data();
  for (int j = 0; j < L.padded; j += W) {
    V h = load_lanes<V>(bias + j);
    if (cur) {
      const V c = load_lanes<V>(cur + j);
      h = h + c;
      store_lanes(cur + j, c * d);
    }
    if (h_out) store_lanes(h_out + j, h);
    // The current state's slot coefficients, selected lane by lane, then
    // its rectified slot rates summed in slot order (StepSampler::exit_dt's
    // operations on the float tables).
    const V s = load_lanes<V>(state + j);
    V os[KMAX], ss[KMAX];
#pragma GCC unroll 2
    for (int k = 0; k < KMAX; ++k) {
      os[k] = o[0][k];
      ss[k] = sl[0][k];
    }
#pragma GCC unroll 4
    for (int i = 1; i < NST; ++i) {
      const auto here = s == id[i];
#pragma GCC unroll 2
      for (int k = 0; k < KMAX; ++k) {
        os[k] = here ? o[i][k] : os[k];
        ss[k] = here ? sl[i][k] : ss[k];
      }
    }
    V r = os[0] + ss[0] * h;
    V q = r > 0 ? r : zero;
#pragma GCC unroll 2
    for (int k = 1; k < KMAX; ++k) {
      r = os[k] + ss[k] * h;
      q = q + (r > 0 ? r : zero);
    }
    // Dormant lanes: where every lane's exit rate is 0 (a ReLU neuron at
    // rest below threshold, any state without a live exit at this H) the
    // step leaves the budgets as they are (budget - 0) and jumps nowhere
    // (jump_loop returns at once for q = 0), so the block skips the double
    // budget's load and store: the same bits, half the memory traffic.
    if (none_positive(q)) continue;
    counts.budget_updates += W;
    // No jump in the step iff budget > q, i.e. t = budget - q > 0 (a
    // difference of two doubles rounds to 0 only when they are equal).
    const D b0 = load_lanes<D>(budget + j), b1 = load_lanes<D>(budget + j + W2);
    const D t0 = b0 - low_d(q), t1 = b1 - high_d(q);
    store_lanes(budget + j, t0 > 0 ? t0 : b0);
    store_lanes(budget + j + W2, t1 > 0 ? t1 : b1);
    if (!all_positive(t0) || !all_positive(t1)) [[unlikely]] {
      for (int lane = 0; lane < W; ++lane)
        if (!((lane < W2 ? t0[lane] : t1[lane - W2]) > 0)) {
          const auto jj = static_cast<std::uint32_t>(j + lane);
          fast_jump<K, KMAX>(chain, smp, key, L, jj, h[lane], q[lane], budget[jj], counts, cnt, fired);
        }
    }
  }
}

// cur[r] += c * w[r] in float, elementwise (the same bits at any width).
template <class V>
[[gnu::always_inline]] inline void add_scaled_f(float* cur, const float* w, int n, float c) {
  constexpr int W = sizeof(V) / sizeof(float);
  const V cc = V{} + c;
  int r = 0;
  for (; r + W <= n; r += W) store_lanes(cur + r, load_lanes<V>(cur + r) + cc * load_lanes<V>(w + r));
  for (; r < n; ++r) cur[r] += c * w[r];
}
#pragma GCC diagnostic pop

template <SamplerKind K, int NST, int KMAX>
void fast_pass_sse2(const SmallChain& chain, const StepSampler& smp, const PhiloxKey& key, const float* bias,
                    float* cur, float decay, float* h_out, FastLayer& L, StepCounts& counts, std::uint32_t* cnt,
                    Fired& fired) {
  fast_lanes<K, NST, KMAX, F4, D2>(chain, smp, key, bias, cur, decay, h_out, L, counts, cnt, fired);
}

void add_scaled_sse2(float* cur, const float* w, int n, float c) { add_scaled_f<F4>(cur, w, n, c); }

#if defined(CTMC_SIM_AVX_DISPATCH)
template <SamplerKind K, int NST, int KMAX>
__attribute__((target("avx"))) void fast_pass_avx(const SmallChain& chain, const StepSampler& smp,
                                                  const PhiloxKey& key, const float* bias, float* cur, float decay,
                                                  float* h_out, FastLayer& L, StepCounts& counts,
                                                  std::uint32_t* cnt, Fired& fired) {
  fast_lanes<K, NST, KMAX, F8, D4>(chain, smp, key, bias, cur, decay, h_out, L, counts, cnt, fired);
}

__attribute__((target("avx"))) void add_scaled_avx8(float* cur, const float* w, int n, float c) {
  add_scaled_f<F8>(cur, w, n, c);
}

template <SamplerKind K, int NST, int KMAX>
__attribute__((target("avx512f"))) void fast_pass_avx512(const SmallChain& chain, const StepSampler& smp,
                                                         const PhiloxKey& key, const float* bias, float* cur,
                                                         float decay, float* h_out, FastLayer& L, StepCounts& counts,
                                                         std::uint32_t* cnt, Fired& fired) {
  fast_lanes<K, NST, KMAX, F16, D8>(chain, smp, key, bias, cur, decay, h_out, L, counts, cnt, fired);
}
#endif

template <SamplerKind K, int NST, int KMAX>
void fast_pass_any(const SmallChain& chain, const StepSampler& smp, const PhiloxKey& key, const float* bias,
                   float* cur, float decay, float* h_out, FastLayer& L, StepCounts& counts, std::uint32_t* cnt,
                   Fired& fired) {
#if defined(CTMC_SIM_AVX_DISPATCH)
  if (detail::has_avx512())
    return fast_pass_avx512<K, NST, KMAX>(chain, smp, key, bias, cur, decay, h_out, L, counts, cnt, fired);
  if (detail::has_avx())
    return fast_pass_avx<K, NST, KMAX>(chain, smp, key, bias, cur, decay, h_out, L, counts, cnt, fired);
#endif
  fast_pass_sse2<K, NST, KMAX>(chain, smp, key, bias, cur, decay, h_out, L, counts, cnt, fired);
}

template <SamplerKind K>
void fast_pass(const SmallChain& chain, const StepSampler& smp, const PhiloxKey& key, const float* bias, float* cur,
               float decay, float* h_out, FastLayer& L, StepCounts& counts, std::uint32_t* cnt, Fired& fired) {
  if (chain.n == 2 && chain.kmax == 1)
    return fast_pass_any<K, 2, 1>(chain, smp, key, bias, cur, decay, h_out, L, counts, cnt, fired);
  if (chain.n == 3 && chain.kmax == 2)
    return fast_pass_any<K, 3, 2>(chain, smp, key, bias, cur, decay, h_out, L, counts, cnt, fired);
  if (chain.kmax == 1)
    return fast_pass_any<K, 4, 1>(chain, smp, key, bias, cur, decay, h_out, L, counts, cnt, fired);
  fast_pass_any<K, 4, 2>(chain, smp, key, bias, cur, decay, h_out, L, counts, cnt, fired);
}

void add_spike_f(float* cur, const float* w, int n, float c) {
#if defined(CTMC_SIM_AVX_DISPATCH)
  if (detail::has_avx()) return add_scaled_avx8(cur, w, n, c);
#endif
  add_scaled_sse2(cur, w, n, c);
}

// Layer 1's table: per neuron j and state i, at 2 (j nst + i), the exit
// rate q * dt at the neuron's constant H and, beside it, 1 / q (0 for q = 0).
const double* layer1_rate(const double* qtab, std::size_t nst, const FastLayer& L, std::uint32_t j) {
  return qtab + 2 * (static_cast<std::size_t>(j) * nst + static_cast<std::size_t>(L.state[j]));
}

// Layer 1: neuron j's next jump step from its constant exit rate q (per
// step) and its budget, as schedule_vec1 of spiking.cpp: after
// m = max(0, ceil(budget / q) - 1) jump-free steps, with budget - m q left
// (budget / q as budget times the tabulated 1 / q: a rounding apart, and
// the jump loop starts from whatever budget is left, so an m one off at an
// exact integer moves the jump by a relative 1e-16 of a step).
void schedule_fast1(const double* qtab, std::size_t nst, FastLayer& L, std::uint32_t j, std::int64_t from,
                    std::int64_t steps, JumpCalendar& cal) {
  std::vector<double>& budget1 = L.budget;
  const double* rate = layer1_rate(qtab, nst, L, j);
  const double q = rate[0];
  if (!(q > 0)) return;
  const double t = budget1[j] * rate[1];
  if (!(static_cast<double>(from) + t - 1 < static_cast<double>(steps))) return;
  const auto whole = static_cast<std::int64_t>(t);
  const double m = static_cast<double>(std::max<std::int64_t>(0, static_cast<double>(whole) == t ? whole - 1 : whole));
  if (static_cast<double>(from) + m >= static_cast<double>(steps)) return;
  budget1[j] -= m * q;
  cal.add(from + static_cast<std::int64_t>(m), j, from);
}

template <SamplerKind K>
void advance_fast1(const SmallChain& chain, const StepSampler& smp, const PhiloxKey& key, const double* h,
                   const double* qtab, FastLayer& L, std::int64_t k, std::int64_t steps, JumpCalendar& cal,
                   StepCounts& counts, std::uint32_t* cnt, Fired& fired) {
  const std::size_t nst = chain.n;
  std::vector<std::uint32_t>& now = cal.due(k);
  for (std::size_t e = 0; e < now.size(); ++e) {
    const std::uint32_t j = now[e];
    const double q = layer1_rate(qtab, nst, L, j)[0];
    if (chain.kmax == 1)
      fast_jump<K, 1>(chain, smp, key, L, j, h[j], q, L.budget[j], counts, cnt, fired);
    else
      fast_jump<K, 2>(chain, smp, key, L, j, h[j], q, L.budget[j], counts, cnt, fired);
    schedule_fast1(qtab, nst, L, j, k + 1, steps, cal);
  }
  now.clear();
}

FastLayer make_fast_layer(const PhiloxKey& key, std::uint32_t index, int n) {
  FastLayer V;
  V.index = index;
  V.n = n;
  V.padded = (n + kPad - 1) / kPad * kPad;
  const auto p = static_cast<std::size_t>(V.padded);
  V.state.assign(p, 0.0f);
  V.budget.assign(p, std::numeric_limits<double>::infinity());
  V.draws.assign(p, 0);
  V.block.assign(p, {});
  for (int j = 0; j < n; ++j)
    V.budget[static_cast<std::size_t>(j)] = FastDraws(key, V, static_cast<std::uint32_t>(j)).exponential();
  return V;
}

// Carries layer l-1's step spikes (C-H-W indices, ascending) into a layer
// graph's float current through `chain` (LinearChain's float overloads),
// event by event or, for a dense enough step of one convolution, gathered:
// the rule of SpikingNetwork::transmit, so the same paths and the same bits
// for every conv_path. True when it took the dense path.
bool transmit_f(const LinearChain& chain, SpikingConfig::ConvPath path, const Fired& fired, double weight, float* cur,
                ChainScratch& scratch) {
  using CP = SpikingConfig::ConvPath;
  const bool dense = chain.dense_capable() && !fired.empty() &&
                     (path == CP::Dense ||
                      (path == CP::Auto && static_cast<double>(fired.size()) >= kDenseConvDensity * chain.in_size()));
  if (!dense) {
    for (const auto& [i, sp] : fired) chain.add_spike_stored(i, weight * sp, cur, scratch);
    return false;
  }
  std::vector<float>& src = scratch.dense_f;
  src.resize(static_cast<std::size_t>(chain.in_size()), 0.0f);
  for (const auto& [i, sp] : fired) src[i] = static_cast<float>(weight * sp);
  chain.add_step_dense(src.data(), cur);
  for (const auto& [i, sp] : fired) src[i] = 0.0f;
  return true;
}

}  // namespace

// The fast kernel's parts of step_loop: float lanes (FastLayer) whose pass
// reads H = b + I and decays I, so the step's spikes go into the current
// after it; per layer l >= 1 the lanes hold the neurons in the layout in
// which the current arrives (below).
template <SamplerKind K>
struct SpikingNetwork::FastSteps {
  static constexpr bool kTransmitFirst = false;

  const SpikingNetwork& net;
  const PhiloxKey key;
  StepCounts counts;
  SampleRun out;
  ChainScratch scratch;
  const Eigen::VectorXd h1;
  const bool graph;
  // A layer graph's channel-last current (LinearChain::stored_index) is read
  // where the scatter leaves it, with no reordering pass. order[l][s] is the
  // neuron (C-H-W index) at lane s; empty where the two agree. A neuron's
  // stream is keyed by its lane, so the draws do not depend on the visiting
  // order either.
  std::vector<std::vector<std::uint32_t>> order;
  std::vector<std::vector<float>> bias, cur, hf;  // in float (padded), in lane order
  std::vector<double> h_sum_;
  std::vector<SmallChain> chains;
  std::vector<FastLayer> layer;
  std::vector<Fired> fired;
  // Spike counts in lane order where it differs (copied out for a reading).
  std::vector<std::vector<std::uint32_t>> lane_counts;
  std::vector<double> qtab1;
  JumpCalendar layer1_events;
  const double weight;
  const float decay_f;

  static std::size_t padded(int n) { return static_cast<std::size_t>((n + kPad - 1) / kPad * kPad); }

  FastSteps(const SpikingNetwork& network, const float* x, std::uint64_t stream_seed)
      : net(network), key(philox_key(stream_seed)), h1(network.layer1_input(x)), graph(!network.chains_.empty()),
        weight(network.trace_.spike_weight), decay_f(static_cast<float>(network.trace_.decay)) {
    const std::size_t L = net.sizes_.size();
    const std::size_t S = net.layers_.size();
    out.counts.resize(S);
    out.dense_steps.assign(L > 0 ? L - 1 : 0, 0);
    order.resize(L);
    for (std::size_t l = 1; l < L && graph; ++l)
      if (net.chains_[l].channel_last()) {
        order[l].resize(static_cast<std::size_t>(net.sizes_[l]));
        for (std::uint32_t t = 0; t < static_cast<std::uint32_t>(net.sizes_[l]); ++t)
          order[l][net.chains_[l].stored_index(t)] = t;
      }
    bias.resize(L);
    cur.resize(L);
    hf.resize(L);
    for (std::size_t l = 1; l < L; ++l) {
      const std::size_t p = padded(net.sizes_[l]);
      bias[l].assign(p, 0.0f);
      for (std::size_t s = 0; s < net.bias_[l].size(); ++s)
        bias[l][s] = static_cast<float>(net.bias_[l][order[l].empty() ? s : order[l][s]]);
      hf[l].assign(p, 0.0f);
      cur[l].assign(p, 0.0f);
    }
    h_sum_.assign(static_cast<std::size_t>(net.sizes_[L - 1]), 0.0);
    chains.reserve(S);
    layer.reserve(S);
    fired.resize(S);
    lane_counts.resize(S);
    for (std::size_t l = 0; l < S; ++l) {
      chains.emplace_back(net.samplers_[l]);
      layer.push_back(make_fast_layer(key, static_cast<std::uint32_t>(l), net.sizes_[l]));
      out.counts[l].assign(static_cast<std::size_t>(net.sizes_[l]), 0);
      if (!order[l].empty()) lane_counts[l].assign(static_cast<std::size_t>(net.sizes_[l]), 0);
      fired[l].reserve(static_cast<std::size_t>(net.sizes_[l]));
    }
    // Layer 1: exit rates * dt tabulated once per image (its H is constant),
    // and each neuron's first jump step scheduled.
    if (S > 0) {
      const int n1 = net.sizes_[0];
      const std::size_t nst = net.layers_[0].kernel.size();
      const std::vector<double> q = detail::layer1_exit_table(net.samplers_[0], h1.data(), n1);
      qtab1.resize(2 * q.size());
      for (std::size_t e = 0; e < q.size(); ++e) {
        qtab1[2 * e] = q[e];
        qtab1[2 * e + 1] = q[e] > 0 ? 1 / q[e] : 0.0;
      }
      for (int j = 0; j < n1; ++j)
        schedule_fast1(qtab1.data(), nst, layer[0], static_cast<std::uint32_t>(j), 0, net.steps_, layer1_events);
    }
  }
  FastSteps(const FastSteps&) = delete;
  FastSteps& operator=(const FastSteps&) = delete;

  std::uint32_t* counts_of(std::size_t l) { return order[l].empty() ? out.counts[l].data() : lane_counts[l].data(); }

  void layer1(std::int64_t k) {
    if (net.sizes_.size() == 1)
      for (int j = 0; j < net.sizes_[0]; ++j) h_sum_[static_cast<std::size_t>(j)] += h1[j];
    if (!net.layers_.empty())
      advance_fast1<K>(chains[0], net.samplers_[0], key, h1.data(), qtab1.data(), layer[0], k, net.steps_,
                       layer1_events, counts, out.counts[0].data(), fired[0]);
  }
  void read(std::size_t) {}  // in the lane pass
  // H = b + I and I <- d I in the lane pass, in float.
  void pass(std::size_t l, std::int64_t) {
    const int n = net.sizes_[l];
    const float* b = bias[l].data();
    float* lane_cur = cur[l].data();
    const float d = decay_f;
    const bool out_layer = l + 1 == net.sizes_.size();
    if (l < net.layers_.size()) {
      fast_pass<K>(chains[l], net.samplers_[l], key, b, lane_cur, d, out_layer ? hf[l].data() : nullptr, layer[l],
                   counts, counts_of(l), fired[l]);
    } else {  // integrating readout: H only
      float* h = hf[l].data();
      for (int j = 0; j < n; ++j) {
        h[j] = b[j] + lane_cur[j];
        lane_cur[j] *= d;
      }
    }
    if (out_layer)  // the readout sums H in double
      for (int s = 0; s < n; ++s)
        h_sum_[order[l].empty() ? static_cast<std::size_t>(s) : order[l][static_cast<std::size_t>(s)]] +=
            hf[l][static_cast<std::size_t>(s)];
  }
  bool transmit(std::size_t l, Fired& f) {
    if (graph) {
      // Lanes to neurons, in ascending index as the other kernels give
      // them (so every conv_path adds in the same order).
      if (!order[l - 1].empty()) {
        for (auto& e : f) e.first = order[l - 1][e.first];
        std::sort(f.begin(), f.end());
      }
      return transmit_f(net.chains_[l], net.cfg_.conv_path, f, weight, cur[l].data(), scratch);
    }
    const Eigen::MatrixXf& Wm = net.w_scaled_[l - 1];
    const auto rows = static_cast<int>(Wm.rows());
    for (const auto& [i, sp] : f)
      add_spike_f(cur[l].data(), Wm.data() + static_cast<Eigen::Index>(i) * rows, rows,
                  static_cast<float>(weight * sp));
    return false;
  }
  void sync_counts() {
    for (std::size_t l = 0; l < lane_counts.size(); ++l)
      for (std::size_t s = 0; s < order[l].size(); ++s) out.counts[l][order[l][s]] = lane_counts[l][s];
  }
  Eigen::VectorXd h_sum() const {
    return Eigen::Map<const Eigen::VectorXd>(h_sum_.data(), net.sizes_.back()).eval();
  }
};

template <SamplerKind K>
SampleRun SpikingNetwork::run_fast(const float* x, std::uint64_t stream_seed) const {
  FastSteps<K> steps(*this, x, stream_seed);
  return step_loop(steps);
}

template SampleRun SpikingNetwork::run_fast<SamplerKind::Exact>(const float*, std::uint64_t) const;
template SampleRun SpikingNetwork::run_fast<SamplerKind::EndState>(const float*, std::uint64_t) const;

}  // namespace ctmc::sim
