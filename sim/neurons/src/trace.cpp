#include "ctmc/sim/neurons/trace.hpp"

#include <fmt/format.h>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/det_math.hpp"

namespace ctmc::sim {

TraceWeight parse_trace_weight(const std::string& text, const std::string& option) {
  if (text == "integral") return TraceWeight::Integral;
  if (text == "1/tau") return TraceWeight::InverseTau;
  throw InputError(option, fmt::format("unknown trace weight '{}' (expected integral or 1/tau)", text));
}

std::string trace_weight_name(TraceWeight w) { return w == TraceWeight::Integral ? "integral" : "1/tau"; }

TraceKernel::TraceKernel(double tau, double dt, TraceWeight weight) {
  if (!(tau > 0) || !std::isfinite(tau)) throw InputError("tau", fmt::format("{} must be positive and finite", tau));
  if (!(dt > 0) || !std::isfinite(dt)) throw InputError("dt", fmt::format("{} must be positive and finite", dt));
  decay = detmath::exp(-dt / tau);
  // 1 - e^{-dt/tau} by expm1: no cancellation when dt << tau.
  spike_weight = weight == TraceWeight::Integral ? -detmath::expm1(-dt / tau) / dt : 1 / tau;
}

}  // namespace ctmc::sim
