// Integral-preserving exponential traces (trace.hpp; DESIGN.md section 7).
#include <doctest/doctest.h>

#include <cmath>

#include "ctmc/sim/neurons/trace.hpp"
#include "ctmc/core/errors.hpp"

using namespace ctmc::sim;

namespace {
// sum_{k >= 1} dt x_k after one spike in step 0, summed until the remaining
// geometric tail is below 1e-17 of the total.
double kernel_integral(const TraceKernel& k, double dt) {
  ExpTrace x(k);
  x.advance(1.0);
  double total = 0;
  for (int m = 0; m < 1000000 && x.value() * dt > 1e-19; ++m) {
    total += dt * x.value();
    x.advance(0.0);
  }
  return total;
}
}  // namespace

TEST_CASE("each spike adds exactly total weight one to sum_k dt x_k") {
  for (double tau : {0.005, 0.02, 0.1, 1.0})
    for (double dt : {0.001, 0.005, 0.01, 0.05}) {
      const TraceKernel k(tau, dt);
      INFO("tau ", tau, " dt ", dt);
      CHECK(kernel_integral(k, dt) == doctest::Approx(1.0).epsilon(1e-12));
      // The naive weight 1/tau (the continuous kernel's height) overshoots by
      // (dt/tau) / (1 - e^{-dt/tau}) = 1 + dt/(2 tau) + O((dt/tau)^2).
      if (dt / tau <= 0.5) {
        const double naive = (dt / tau) / -std::expm1(-dt / tau);
        CHECK(naive - 1 == doctest::Approx(dt / (2 * tau)).epsilon(dt / tau));
      }
    }
  // DESIGN.md's example: dt = 0.005, tau = 0.02 -> the naive trace is 12% off.
  const double naive = (0.005 / 0.02) / -std::expm1(-0.25);
  CHECK(naive == doctest::Approx(1.1302).epsilon(1e-4));
}

TEST_CASE("a steady spike rate r gives a trace with time average r") {
  // Spikes every 4th step: rate 1/(4 dt). After the transient the average of
  // x over one period is exactly the rate (the kernel integrates to one).
  const double dt = 0.005, tau = 0.02;
  ExpTrace x(TraceKernel(tau, dt));
  for (int k = 0; k < 4000; ++k) x.advance(k % 4 == 0 ? 1.0 : 0.0);
  double avg = 0;
  for (int k = 4000; k < 4004; ++k) {
    avg += x.value() / 4;
    x.advance(k % 4 == 0 ? 1.0 : 0.0);
  }
  CHECK(avg == doctest::Approx(1 / (4 * dt)).epsilon(1e-12));
}

TEST_CASE("bad tau or dt is an input error") {
  CHECK_THROWS_AS(TraceKernel(0.0, 0.01), ctmc::InputError);
  CHECK_THROWS_AS(TraceKernel(0.02, -1.0), ctmc::InputError);
  CHECK_THROWS_AS(TraceKernel(NAN, 0.01), ctmc::InputError);
}
