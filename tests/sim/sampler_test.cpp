// Per-step samplers (sampler.hpp) against exact counting statistics.
//
// Statistical tests use a fixed seed and accept when the estimate lies within
// kZ standard errors of the exact value; kZ = 4.4 gives a two-sided
// false-alarm rate of about 1e-5 per check under the normal approximation
// (about 4e-5 with 63 degrees of freedom), so a failure means a real bias.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "ctmc/sim/neurons/neuron_kernel.hpp"
#include "ctmc/sim/neurons/rng.hpp"
#include "ctmc/sim/neurons/sampler.hpp"
#include "ctmc/solvers/counting.hpp"
#include "expm.hpp"  // solvers/src (internal): the matrix exponential
#include "ctmc/solvers/families.hpp"

using namespace ctmc;
using namespace ctmc::sim;
using solvers::Affine;
using solvers::Rational;

namespace {

constexpr double kZ = 4.4;

struct Moments {
  double mean = 0, var = 0, se_mean = 0, se_var = 0;
};

Moments moments(const std::vector<double>& x) {
  const double n = static_cast<double>(x.size());
  Moments m;
  for (double v : x) m.mean += v;
  m.mean /= n;
  double m2 = 0, m4 = 0;
  for (double v : x) {
    const double d = v - m.mean;
    m2 += d * d;
    m4 += d * d * d * d;
  }
  m.var = m2 / (n - 1);
  m.se_mean = std::sqrt(m.var / n);
  // SE of the sample variance: sqrt((mu4 - sigma^4) / n).
  m.se_var = std::sqrt(std::max(m4 / n - (m2 / n) * (m2 / n), 0.0) / n);
  return m;
}

// Spike counts of `reps` independent neurons over `steps` steps at fixed H,
// each started from `start` (or from the distribution `pi0` when given).
std::vector<double> counts(const NeuronKernel& k, SamplerKind kind, double H, double dt, int steps, int reps,
                           std::uint64_t seed, const std::vector<double>& pi0) {
  StepSampler s(k, kind, dt);
  std::vector<double> out;
  StepCounts c;
  for (int r = 0; r < reps; ++r) {
    Rng rng(stream_seed(seed, r));
    std::uint32_t start = 0;
    double u = rng.uniform(), acc = 0;
    for (std::size_t i = 0; i < pi0.size(); ++i) {
      acc += pi0[i];
      if (u < acc) {
        start = static_cast<std::uint32_t>(i);
        break;
      }
    }
    NeuronState st = s.init(start, rng);
    double n = 0;
    for (int t = 0; t < steps; ++t) n += s.step(H, st, rng, c);
    out.push_back(n);
  }
  return out;
}

}  // namespace

TEST_CASE("end-state undercounts the two-state neuron by (1 - e^-x)/x; exact samplers do not") {
  // a = d = 100, dt = 0.005: x = (a + d) dt = 1, nu = a d / (a + d) = 50.
  const double a = 100, d = 100, dt = 0.005, nu = a * d / (a + d), x = (a + d) * dt;
  const NeuronKernel k(solvers::two_state_model(Affine{Rational(100), 0}, Affine{Rational(100), 0}), 1.0, "two-state");
  const int steps = 4000, reps = 64;
  const double T = steps * dt;
  const std::vector<double> pi{d / (a + d), a / (a + d)};  // stationary start: E N(T) = nu T exactly
  const double exact_mean = nu * T;
  const double end_state_mean = nu * (1 - std::exp(-x)) / x * T;  // pi_B P_BR(dt) per step

  for (SamplerKind kind : {SamplerKind::Exact, SamplerKind::Uniformization}) {
    const Moments m = moments(counts(k, kind, 0.0, dt, steps, reps, 11, pi));
    INFO(sampler_name(kind), " mean ", m.mean, " exact ", exact_mean, " se ", m.se_mean);
    CHECK(std::abs(m.mean - exact_mean) < kZ * m.se_mean);
  }
  const Moments e = moments(counts(k, SamplerKind::EndState, 0.0, dt, steps, reps, 12, pi));
  INFO("end-state mean ", e.mean, " predicted ", end_state_mean, " (", e.mean / exact_mean, " of nu T)");
  CHECK(std::abs(e.mean - end_state_mean) < kZ * e.se_mean);
  CHECK(exact_mean - e.mean > 20 * e.se_mean);  // the undercount (37% here) is unmistakable
  // Euler: for the two-state chain with a dt, d dt <= 1 the discrete chain has
  // the same stationary spike rate p q / (p + q) / dt = nu (p = a dt, q = d dt).
  const Moments u = moments(counts(k, SamplerKind::Euler, 0.0, dt, steps, reps, 13, pi));
  CHECK(std::abs(u.mean - exact_mean) < kZ * u.se_mean);
}

TEST_CASE("exact and uniformization samplers match E[N(T)] and Var N(T) of the three-state chain") {
  // a = 1 + 2H, b = 1, c = 1/2 + H (spike), d = 2; H = 3/4.
  const auto model = solvers::three_state_model(Affine{Rational(1), Rational(2)}, Affine{Rational(1), 0},
                                                Affine{Rational(1, 2), Rational(1)}, Affine{Rational(2), 0});
  const NeuronKernel k(model, 1.0, "three-state");
  const double H = 0.75, dt = 0.01, T = 3;
  const auto exact = solvers::counting_moments<double>(model, Rational(3, 4), {1.0, 0.0, 0.0}, T);
  for (SamplerKind kind : {SamplerKind::Exact, SamplerKind::Uniformization}) {
    const Moments m = moments(counts(k, kind, H, dt, 300, 3000, 21, {1.0}));
    INFO(sampler_name(kind), " mean ", m.mean, " vs ", exact.mean, ", var ", m.var, " vs ", exact.variance);
    CHECK(std::abs(m.mean - exact.mean) < kZ * m.se_mean);
    CHECK(std::abs(m.var - exact.variance) < kZ * m.se_var);
  }
}

TEST_CASE("the exact sampler's clock carries correctly across steps with changing H") {
  // H alternates between -0.4 and 1.5 every step. Reference: propagate the
  // state distribution p_{k+1} = p_k expm(Q(H_k) dt) and add the exact
  // expected spikes of each step from p_k (Van Loan, solvers/counting).
  const auto model = solvers::three_state_model(Affine{Rational(1), Rational(2)}, Affine{Rational(1), 0},
                                                Affine{Rational(1, 2), Rational(1)}, Affine{Rational(2), 0});
  const NeuronKernel k(model, 1.0, "three-state");
  const double dt = 0.05;
  const int steps = 40, reps = 4000;
  const Rational hs[2] = {Rational(-2, 5), Rational(3, 2)};
  std::vector<double> p{1, 0, 0};
  double expected = 0;
  for (int t = 0; t < steps; ++t) {
    const Rational& h = hs[t % 2];
    expected += solvers::counting_moments<double>(model, h, p, dt).mean;
    auto g = solvers::spike_generator<double>(model, h);
    for (auto& v : g.q.a) v *= dt;
    const auto e = solvers::expm(g.q);
    std::vector<double> next(3, 0);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) next[j] += p[i] * e(i, j);
    p = next;
  }
  StepSampler s(k, SamplerKind::Exact, dt);
  std::vector<double> n;
  StepCounts c;
  for (int r = 0; r < reps; ++r) {
    Rng rng(stream_seed(31, r));
    NeuronState st = s.init(0, rng);
    double cnt = 0;
    for (int t = 0; t < steps; ++t) cnt += s.step(solvers::to_double(hs[t % 2]), st, rng, c);
    n.push_back(cnt);
  }
  const Moments m = moments(n);
  INFO("mean ", m.mean, " expected ", expected, " se ", m.se_mean);
  CHECK(std::abs(m.mean - expected) < kZ * m.se_mean);
}

TEST_CASE("euler flags renormalized steps only when rate*dt exceeds one") {
  const NeuronKernel k(solvers::two_state_model(Affine{0, Rational(1)}, Affine{Rational(10), 0}), 1.0, "two-state");
  StepSampler s(k, SamplerKind::Euler, 0.01);
  Rng rng(5);
  StepCounts c;
  NeuronState st = s.init(0, rng);
  for (int t = 0; t < 1000; ++t) s.step(50.0, st, rng, c);  // a dt = 0.5, d dt = 0.1
  CHECK(c.euler_renormalized == 0);
  for (int t = 0; t < 1000; ++t) s.step(150.0, st, rng, c);  // a dt = 1.5
  CHECK(c.euler_renormalized > 0);
}

TEST_CASE("kernel flux matches the closed forms, including reducible inputs") {
  const auto model = solvers::three_state_model(Affine{Rational(1), Rational(2)}, Affine{Rational(1), 0},
                                                Affine{Rational(1, 2), Rational(1)}, Affine{Rational(2), 0});
  const NeuronKernel k(model, 3.0, "three-state");
  for (double H : {-2.0, -0.5, -0.25, 0.0, 0.3, 1.0, 7.5}) {
    const double a = std::max(0.0, 1 + 2 * H), b = 1, c = std::max(0.0, 0.5 + H), d = 2;
    const double f = 3 * solvers::three_state_flux(a, b, c, d).value();
    INFO("H = ", H);
    CHECK(k.flux(H) == doctest::Approx(f).epsilon(1e-13));
  }
  CHECK(k.max_exit_rate(1.0) == doctest::Approx(3 * 3.0));
  // Two-state with recovery d = max(0, H): at H <= 0 the refractory state is
  // absorbing, GTH meets a zero pivot and the exact fallback gives flux 0.
  const NeuronKernel k2(solvers::two_state_model(Affine{Rational(2), 0}, Affine{0, Rational(1)}), 1.0, "two-state");
  CHECK(k2.flux(-1.0) == 0.0);
  CHECK(k2.stationary(-1.0)[1] == 1.0);
  CHECK(k2.flux(0.5) == doctest::Approx(2 * 0.5 / 2.5).epsilon(1e-14));
  const EndStateRule rule(k);
  CHECK(rule.implies_spike(0, 2));   // B -> R only through G -> R (spike)
  CHECK(!rule.implies_spike(2, 0));  // R -> B is not a spike
  CHECK(!rule.implies_spike(1, 0));
}
