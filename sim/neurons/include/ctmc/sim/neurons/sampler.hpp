// Per-time-step samplers of a CTMC neuron whose input H is held constant over
// a step of length dt (DESIGN.md section 7).
//
//   exact           The exact law of the chain over the step, every jump on the
//                   path visible, every spike transition counted. Implemented
//                   as a next-reaction clock: each neuron carries a unit
//                   exponential E; in state i the integrated hazard grows at
//                   the exit rate q_i(H); a jump happens when it reaches E (at
//                   a time inside the step), the destination is drawn in
//                   proportion to the rates, and a fresh E is drawn. For a
//                   generator piecewise constant in time this is the exact
//                   holding-time law (P(no jump in [0,t]) = exp(-int q_i)), and
//                   the residual clock carried across steps is again Exp(1) by
//                   memorylessness. A step without a jump costs the exit rate
//                   (a few flops) and no random draw.
//   uniformization  The same law by uniformization (Jensen 1953): the number
//                   of jumps in the step is Poisson(Lambda dt) with
//                   Lambda = max_i q_i(H) >= every exit rate, each jump moves
//                   by P = I + Q/Lambda (self-loops allowed); every spike on the
//                   path is counted. Kept as an independent cross-check.
//   end-state       Reproduces codes that draw only the state at the end of
//                   the step from the row of expm(Q dt) (rates already scaled
//                   by alpha): the end state is drawn from exactly that law
//                   (by running the exact path and discarding it), and ONE
//                   spike is counted when the end state cannot be reached from
//                   the start state through non-spike transitions
//                   (EndStateRule, built by the sampler for this kind only). A spike followed
//                   by recovery inside one step is missed: for the two-state
//                   neuron the observed rate is nu (1 - e^-x)/x, x = (a+d) dt.
//   euler           Reproduces first-order codes: transition i -> j fires with
//                   probability r_ij dt, at most one transition per step; when
//                   the probabilities of a state sum above 1 they are
//                   renormalized to sum 1 and the step is counted in
//                   StepCounts::euler_renormalized (flagged in the output).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ctmc/sim/neurons/neuron_kernel.hpp"
#include "ctmc/sim/neurons/rng.hpp"

namespace ctmc::sim {

enum class SamplerKind { Exact, Uniformization, EndState, Euler };

// "exact" | "uniformization" | "end-state" | "euler"; InputError naming
// `option` otherwise.
SamplerKind parse_sampler(const std::string& text, const std::string& option = "sampler");
std::string sampler_name(SamplerKind k);
// One line saying what the sampler does and which spike rule it uses.
std::string sampler_rule(SamplerKind k);

// max(r, 0) without a branch: rectified rates of neurons whose input hovers
// around a kink would otherwise mispredict about half the time in the
// per-step loop. (maxsd returns 0 for a NaN r.)
inline double rectify(double r) {
#if defined(__SSE2__)
  return _mm_cvtsd_f64(_mm_max_sd(_mm_set_sd(r), _mm_setzero_pd()));
#else
  return r > 0 ? r : 0.0;
#endif
}

// Per-stream generator (rng.hpp: xoshiro256**, seeded by stream_seed).
using StepRng = Rng;

// The state of one simulated neuron.
struct NeuronState {
  std::uint32_t state = 0;
  double clock = 0;  // exact/end-state samplers: residual unit-exponential hazard
};

struct StepCounts {
  std::uint64_t transitions = 0;         // jumps taken (self-loops excluded)
  std::uint64_t euler_renormalized = 0;  // euler steps whose probabilities exceeded 1
  // The fast kernel's work: neuron-steps of layers 2..L whose hazard budget
  // its lane pass read and wrote (blocks of lanes at exit rate 0 skip it;
  // counted per vector, so the figure depends on the vector width).
  std::uint64_t budget_updates = 0;
};

// Advances neurons of one kernel over steps of length dt. The rates are
// premultiplied by dt once, so the inner loop works in units of one step.
// Where a jump goes: the destination state and whether it is a spike.
struct JumpSlot {
  std::uint32_t to;
  bool spike;
};

// The rest of a step that has at least one jump (clock <= q, q the current
// state's exit rate * dt at H), on any chain with exit_dt(state, H),
// max_out_degree() and slot(state, H, x) (the exit slot whose cumulative
// rate * dt first exceeds x): StepSampler's, and the vectorised kernel's
// small chains with their tables at hand (spiking.cpp), so both draw the
// same numbers in the same order and give the same bits. Per jump at most
// one uniform (the destination, only where a state has several exit slots),
// then exactly one exponential (the next clock).
template <class Chain, class Draws>
std::uint32_t jump_loop(const Chain& chain, double H, std::uint32_t& state, double& clock, Draws& rng, StepCounts& c,
                        double q) {
  // Invariant: `left` is the unused fraction of the step, clock the hazard
  // still to accumulate before the next jump, q the current exit rate * dt.
  double left = 1.0;
  std::uint32_t spikes = 0;
  for (;;) {
    if (!(q > 0) || clock > q * left) {
      clock -= q * left;
      return spikes;
    }
    left -= clock / q;
    // Destination in proportion to the rates at H (no draw when the state
    // has a single exit slot, e.g. every state of the two-state neuron, or
    // when the chain says that only one of the state's slots can have a
    // positive rate: single_exit(state), where it has that method).
    bool draw = chain.max_out_degree() != 1;
    if constexpr (requires { chain.single_exit(state); }) draw = draw && !chain.single_exit(state);
    const double x = draw ? rng.uniform() * q : 0.0;
    const JumpSlot slot = chain.slot(state, H, x);
    if (slot.spike) ++spikes;
    state = slot.to;
    ++c.transitions;
    clock = rng.exponential();
    q = chain.exit_dt(state, H);
  }
}

class StepSampler {
 public:
  StepSampler(const NeuronKernel& kernel, SamplerKind kind, double dt);

  SamplerKind kind() const { return kind_; }
  const NeuronKernel& kernel() const { return *kernel_; }

  // A fresh neuron in `state` (its first clock drawn from rng).
  NeuronState init(std::uint32_t state, StepRng& rng) const { return {state, rng.exponential()}; }

  // One step with input H held; returns the number of spikes counted.
  std::uint32_t step(double H, NeuronState& s, StepRng& rng, StepCounts& c) const {
    switch (kind_) {
      case SamplerKind::Exact:
        return step_exact(H, s, rng, c);
      case SamplerKind::EndState: {
        const std::uint32_t start = s.state;
        step_exact(H, s, rng, c);
        return end_state_implies_spike(start, s.state) ? 1u : 0u;
      }
      case SamplerKind::Uniformization:
        return step_uniformization(H, s, rng, c);
      case SamplerKind::Euler:
        return step_euler(H, s, rng, c);
    }
    return 0;
  }

  // The end-state sampler's spike rule (EndStateRule); false for the other kinds.
  bool end_state_implies_spike(std::uint32_t from, std::uint32_t to) const {
    return kind_ == SamplerKind::EndState && rule_.implies_spike(from, to);
  }

  // Exit rate of state i times dt.
  double exit_dt(std::uint32_t i, double H) const {
    double q = 0;
    const std::size_t b = static_cast<std::size_t>(i) * kmax_;
    for (std::size_t k = 0; k < kmax_; ++k) {
      const double r = off_dt_[b + k] + slope_dt_[b + k] * H;
      q += rectify(r);
    }
    return q;
  }

  std::uint32_t step_exact(double H, NeuronState& s, StepRng& rng, StepCounts& c) const {
    double q = exit_dt(s.state, H);
    if (s.clock > q) {  // no jump this step: the common case
      s.clock -= q;
      return 0;
    }
    return jumps_exact(H, s, rng, c, q);
  }

  // The rest of a step that has at least one jump (s.clock <= q, q = the
  // current state's exit rate * dt at H): the slow path of step_exact, for
  // callers that evaluate the no-jump test themselves.
  std::uint32_t jumps_exact(double H, NeuronState& s, StepRng& rng, StepCounts& c, double q) const {
    return jumps_exact(H, s.state, s.clock, rng, c, q);
  }
  // The same on a neuron's state and clock held apart, drawing from any
  // source with uniform() on [0, 1) and exponential() (Exp(1)): jump_loop.
  template <class Draws>
  std::uint32_t jumps_exact(double H, std::uint32_t& state, double& clock, Draws& rng, StepCounts& c,
                            double q) const {
    return jump_loop(*this, H, state, clock, rng, c, q);
  }
  // jump_loop's view of the chain: where the slot of state `state` whose
  // cumulative rate * dt at H first exceeds x leads.
  JumpSlot slot(std::uint32_t state, double H, double x) const {
    const std::size_t k = choose_slot(state, H, x);
    return {kernel_->slot_to(k), kernel_->slot_spike(k)};
  }

  // Raw per-slot tables (state i, slot k at i * max_out_degree + k), rates * dt.
  const double* offset_dt() const { return off_dt_.data(); }
  const double* slope_dt() const { return slope_dt_.data(); }
  std::size_t max_out_degree() const { return kmax_; }

 private:
  // The exit slot of state `state` whose cumulative rate * dt at H first
  // exceeds x (the last positive slot when x is beyond the total).
  std::size_t choose_slot(std::uint32_t state, double H, double x) const {
    const std::size_t b = static_cast<std::size_t>(state) * kmax_;
    std::size_t chosen = b;
    double acc = 0;
    for (std::size_t k = 0; k < kmax_; ++k) {
      const double r = off_dt_[b + k] + slope_dt_[b + k] * H;
      if (r > 0) {
        acc += r;
        chosen = b + k;
        if (x < acc) break;
      }
    }
    return chosen;
  }

  std::uint32_t step_uniformization(double H, NeuronState& s, StepRng& rng, StepCounts& c) const;
  std::uint32_t step_euler(double H, NeuronState& s, StepRng& rng, StepCounts& c) const;

  const NeuronKernel* kernel_;
  SamplerKind kind_;
  double dt_;
  std::size_t n_, kmax_;
  std::vector<double> off_dt_, slope_dt_;
  EndStateRule rule_;  // built only for SamplerKind::EndState
};

}  // namespace ctmc::sim
