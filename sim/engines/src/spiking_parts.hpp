// Internal: parts the spiking kernels share (spiking.cpp, spiking_fast.cpp):
// layer 1's event calendar and the small-chain tables of the jump loop.
#pragma once
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <utility>
#include <vector>

#include "ctmc/sim/neurons/sampler.hpp"

namespace ctmc::sim::detail {

// The lanes of a GCC vector (vector_size) loaded from and stored to memory of
// its element type: the one pair both vectorised kernels use. Always inlined
// into their passes, so no vector crosses a call (GCC's -Wpsabi note on
// 32-byte vectors in SSE2 code does not apply).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
template <class V, class T>
[[gnu::always_inline]] inline V load_lanes(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V, class T>
[[gnu::always_inline]] inline void store_lanes(T* p, const V& v) {
  std::memcpy(p, &v, sizeof v);
}
#pragma GCC diagnostic pop

// Layer 1's exit rates * dt at its constant input (h[j] for neuron j), per
// neuron j and state i at j * (states) + i: every kernel tabulates them once
// per image, layer 1 being event-driven (below).
inline std::vector<double> layer1_exit_table(const StepSampler& s, const double* h, int n) {
  const std::size_t nst = s.kernel().size();
  std::vector<double> q(static_cast<std::size_t>(n) * nst);
  for (int j = 0; j < n; ++j)
    for (std::size_t st = 0; st < nst; ++st)
      q[static_cast<std::size_t>(j) * nst + st] = s.exit_dt(static_cast<std::uint32_t>(st), h[j]);
  return q;
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

// A chain of at most four states with at most two exit slots each, its
// tables (rates * dt) in one cache line or two: jump_loop (sampler.hpp)
// reads them without going through the kernel's vectors.
struct SmallChain {
  bool usable = false;
  std::size_t n = 0, kmax = 0;
  double off[4][2] = {}, slope[4][2] = {};
  std::uint32_t to[4][2] = {};
  bool spike[4][2] = {};

  explicit SmallChain(const StepSampler& smp) : n(smp.kernel().size()), kmax(smp.max_out_degree()) {
    usable = n <= 4 && kmax <= 2;
    if (!usable) return;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < kmax; ++k) {
        const std::size_t at = i * kmax + k;
        off[i][k] = smp.offset_dt()[at];
        slope[i][k] = smp.slope_dt()[at];
        to[i][k] = smp.kernel().slot_to(at);
        spike[i][k] = smp.kernel().slot_spike(at);
      }
  }
  // StepSampler::exit_dt, the same operations in the same order.
  double exit_dt(std::uint32_t i, double H) const {
    double q = 0;
    for (std::size_t k = 0; k < kmax; ++k) q += rectify(off[i][k] + slope[i][k] * H);
    return q;
  }
  // jump_loop's view of the chain (StepSampler::slot on these tables).
  std::size_t max_out_degree() const { return kmax; }
  JumpSlot slot(std::uint32_t i, double H, double x) const {
    std::size_t chosen = 0;
    double acc = 0;
    for (std::size_t k = 0; k < kmax; ++k) {
      const double r = off[i][k] + slope[i][k] * H;
      if (r > 0) {
        acc += r;
        chosen = k;
        if (x < acc) break;
      }
    }
    return {to[i][chosen], spike[i][chosen]};
  }
  template <class Draws>
  std::uint32_t jumps(double H, std::uint32_t& state, double& clock, Draws& rng, StepCounts& c, double q) const {
    return jump_loop(*this, H, state, clock, rng, c, q);
  }
};

// hb = b + cur and cur *= decay for a current kept channel-last (pixel p,
// channel c at p C + c) and neurons in C-H-W order (c P + p), P pixels and
// C channels: each element's sum and product as a plain loop computes them.
void read_channel_last(const double* b, double* cur, double* hb, int P, int C, double decay);

}  // namespace ctmc::sim::detail
