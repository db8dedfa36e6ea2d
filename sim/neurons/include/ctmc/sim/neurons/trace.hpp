// Exponential synaptic traces on a time grid (DESIGN.md section 7; paper
// eq. trace): x(t) = (k_tau * dN)(t), k_tau(t) = (1/tau) e^{-t/tau}.
//
// Update order within step k (H is held for the step):
//   1. every neuron reads its input from the traces x_k;
//   2. the neurons advance over [k dt, (k+1) dt); s_k spikes are counted;
//   3. x_{k+1} = d x_k + w s_k,  d = e^{-dt/tau},  w = (1 - d) / dt.
// A spike in step k therefore contributes w d^{m-k-1} to x_m for m > k, and
//   sum_{m > k} dt * w d^{m-k-1} = dt w / (1 - d) = 1
// exactly: the discrete kernel integrates to one, like k_tau, so a stationary
// presynaptic rate r gives the mean input r (the rate is preserved). The naive
// "add 1/tau, then decay" weight gives (dt/tau) / (1 - e^{-dt/tau}) =
// 1 + dt/(2 tau) + O((dt/tau)^2) instead (12% too large at dt = 0.005,
// tau = 0.02).
//
// Other codes add 1/tau per spike (TraceWeight::InverseTau, trace weight
// "1/tau"): the rate-r input is then (dt/tau) / (1 - e^{-dt/tau}) r, kept as
// an option to pose their experiments exactly.
//
// The network does not store x itself but the synaptic current
// I = W~ x (W~ = W / alpha), which obeys the same linear recursion, so a
// spike of neuron i costs one column of W~ (fanout_i multiply-adds).
#pragma once
#include <cmath>
#include <string>

namespace ctmc::sim {

// The trace's increment per spike: (1 - d) / dt (the discrete kernel
// integrates to one; the default) or 1 / tau.
enum class TraceWeight { Integral, InverseTau };
// "integral" or "1/tau"; InputError naming `option` otherwise.
TraceWeight parse_trace_weight(const std::string& text, const std::string& option = "trace_weight");
std::string trace_weight_name(TraceWeight w);

struct TraceKernel {
  double decay = 0;         // d = exp(-dt / tau)
  double spike_weight = 0;  // w = (1 - d) / dt (integral-preserving) or 1 / tau

  // Throws ctmc::InputError when tau or dt is not positive and finite.
  TraceKernel(double tau, double dt, TraceWeight weight = TraceWeight::Integral);
};

// One scalar trace, for tests and single-neuron use; the network applies the
// same (decay, spike_weight) to whole current vectors.
class ExpTrace {
 public:
  explicit ExpTrace(const TraceKernel& k) : k_(k) {}
  double value() const { return x_; }
  // Step 3 of the update order: close step k with s_k spikes.
  void advance(double spikes) { x_ = k_.decay * x_ + k_.spike_weight * spikes; }

 private:
  TraceKernel k_;
  double x_ = 0;
};

}  // namespace ctmc::sim
