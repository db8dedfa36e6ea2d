#include "ctmc/sim/neurons/sampler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/det_math.hpp"

namespace ctmc::sim {

SamplerKind parse_sampler(const std::string& text, const std::string& option) {
  if (text == "exact") return SamplerKind::Exact;
  if (text == "uniformization") return SamplerKind::Uniformization;
  if (text == "end-state") return SamplerKind::EndState;
  if (text == "euler") return SamplerKind::Euler;
  throw InputError(option, fmt::format("unknown sampler '{}' (expected exact, uniformization, end-state or euler)", text));
}

std::string sampler_name(SamplerKind k) {
  switch (k) {
    case SamplerKind::Exact:
      return "exact";
    case SamplerKind::Uniformization:
      return "uniformization";
    case SamplerKind::EndState:
      return "end-state";
    case SamplerKind::Euler:
      return "euler";
  }
  return "?";
}

std::string sampler_rule(SamplerKind k) {
  switch (k) {
    case SamplerKind::Exact:
      return "exact path within each step (next-reaction clock); every spike transition on the path counted";
    case SamplerKind::Uniformization:
      return "exact path within each step by uniformization (Poisson(Lambda dt) jumps of P = I + Q/Lambda); every "
             "spike counted";
    case SamplerKind::EndState:
      return "end state drawn from the row of expm(Q dt); one spike counted when the end state is unreachable from "
             "the start state through non-spike transitions (spike-then-recovery within a step is missed)";
    case SamplerKind::Euler:
      return "probability rate*dt per transition, at most one per step; rows renormalized when they sum above 1 "
             "(counted as euler_renormalized)";
  }
  return "?";
}

StepSampler::StepSampler(const NeuronKernel& kernel, SamplerKind kind, double dt)
    : kernel_(&kernel), kind_(kind), dt_(dt), n_(kernel.size()), kmax_(kernel.max_out_degree()) {
  if (!(dt > 0) || !std::isfinite(dt)) throw InputError("dt", fmt::format("time step {} must be positive", dt));
  off_dt_.resize(n_ * kmax_);
  slope_dt_.resize(n_ * kmax_);
  for (std::size_t s = 0; s < n_ * kmax_; ++s) {
    off_dt_[s] = kernel.slot_offset(s) * dt;
    slope_dt_[s] = kernel.slot_slope(s) * dt;
  }
  if (kind == SamplerKind::EndState) rule_ = EndStateRule(kernel);
}

std::uint32_t StepSampler::step_uniformization(double H, NeuronState& s, StepRng& rng, StepCounts& c) const {
  double mu = 0;  // Lambda * dt
  for (std::size_t i = 0; i < n_; ++i) mu = std::max(mu, exit_dt(static_cast<std::uint32_t>(i), H));
  if (!(mu > 0)) return 0;
  // Number of jumps K ~ Poisson(mu) by inversion; a large mu as the sum of
  // ceil(mu/30) independent Poisson(mu/parts) draws (the same law), so that
  // e^-part never underflows and no library sampler (whose logs and lgammas
  // come from the C library) decides the count.
  std::uint64_t jumps = 0;
  const double parts = std::ceil(mu / 30);
  const double part = mu / parts;
  const double p0 = detmath::exp(-part);
  for (double i = 0; i < parts; ++i) {
    double p = p0, cum = p;
    const double u = rng.uniform();
    std::uint64_t k = 0;
    while (u > cum && p > 0) {
      ++k;
      p *= part / static_cast<double>(k);
      cum += p;
    }
    jumps += k;
  }
  std::uint32_t spikes = 0;
  for (std::uint64_t m = 0; m < jumps; ++m) {
    // Row of P = I + Q/Lambda: slot k with probability r_k / Lambda, else stay.
    const double x = rng.uniform() * mu;
    const std::size_t b = static_cast<std::size_t>(s.state) * kmax_;
    double acc = 0;
    for (std::size_t k = 0; k < kmax_; ++k) {
      const double r = off_dt_[b + k] + slope_dt_[b + k] * H;
      if (r > 0) {
        acc += r;
        if (x < acc) {
          if (kernel_->slot_spike(b + k)) ++spikes;
          s.state = kernel_->slot_to(b + k);
          ++c.transitions;
          break;
        }
      }
    }
  }
  return spikes;
}

std::uint32_t StepSampler::step_euler(double H, NeuronState& s, StepRng& rng, StepCounts& c) const {
  const double total = exit_dt(s.state, H);
  if (!(total > 0)) return 0;
  double norm = 1.0;
  if (total > 1) {
    norm = total;
    ++c.euler_renormalized;
  }
  const double x = rng.uniform() * norm;
  if (x >= total) return 0;
  const std::size_t chosen = choose_slot(s.state, H, x);
  ++c.transitions;
  s.state = kernel_->slot_to(chosen);
  return kernel_->slot_spike(chosen) ? 1u : 0u;
}

}  // namespace ctmc::sim
