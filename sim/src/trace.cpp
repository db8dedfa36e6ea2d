#include "ctmc/sim/trace.hpp"

#include <fmt/format.h>

#include "ctmc/solvers/errors.hpp"

namespace ctmc::sim {

TraceKernel::TraceKernel(double tau, double dt) {
  if (!(tau > 0) || !std::isfinite(tau)) throw InputError(fmt::format("--tau: {} must be positive and finite", tau));
  if (!(dt > 0) || !std::isfinite(dt)) throw InputError(fmt::format("--dt: {} must be positive and finite", dt));
  decay = std::exp(-dt / tau);
  // 1 - e^{-dt/tau} by expm1: no cancellation when dt << tau.
  spike_weight = -std::expm1(-dt / tau) / dt;
}

}  // namespace ctmc::sim
