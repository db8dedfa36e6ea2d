// Single-neuron Gillespie simulation (sim/neurons/ssa.hpp) and the stream RNG
// (sim/neurons/rng.hpp).
//
// Statistical checks: each compares a sample statistic with an exact value by
// a z-score and passes when |z| < kZ = 4.4. Under the normal approximation a
// correct simulator fails one such check with probability 1.1e-5 (two-sided);
// the seeds are fixed, so the outcome is deterministic, and the file makes
// about 15 such comparisons (family-wise false-alarm rate < 2e-4 for a
// randomly chosen seed).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <set>

#include "ctmc/sim/neurons/rng.hpp"
#include "ctmc/sim/neurons/ssa.hpp"
#include "ctmc/solvers/counting.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/model.hpp"

using namespace ctmc;
using namespace ctmc::sim;
using solvers::Rational;

namespace {

constexpr double kZ = 4.4;

// Two-state neuron: B -> R spike at a = max(0, 1 + H), R -> B at d = 1.
const char* kTwoState = R"({"states": ["B", "R"], "transitions": [
  {"from": "B", "to": "R", "offset": 1, "slope": 1, "spike": true},
  {"from": "R", "to": "B", "offset": 1}]})";

// Three-state neuron of paper eq. 1 with a = 2, b = 1, c = 3, d = 1/2
// (tests/fixtures/three_state.json): F = acd / (d(a+b+c) + ac) = 1/3.
const char* kThreeState = R"({"states": ["B", "G", "R"], "transitions": [
  {"from": "B", "to": "G", "offset": 2},
  {"from": "G", "to": "B", "offset": 1},
  {"from": "G", "to": "R", "offset": 3, "spike": true},
  {"from": "R", "to": "B", "offset": "1/2"}]})";

solvers::Model model(const char* json) { return solvers::model_from_json_text(json, "test model"); }

// Hand-derived moments of the stationary two-state spike count (B -> R spikes
// at rate a, R -> B at d, k = a + d, lambda = a d / k). The covariance density
// of the stationary MAP is c(u) = pi D1 e^{Qu} D1 1 - lambda^2 = -lambda^2 e^{-ku}
// (after a spike the chain is in R, and P_R(B at u) = (d/k)(1 - e^{-ku})), so
//   Var N(t) = lambda t + 2 int_0^t (t-u) c(u) du
//            = lambda t - 2 lambda^2 (t/k - (1 - e^{-kt})/k^2).
struct TwoStateMoments {
  double mean, variance;
};
TwoStateMoments two_state_exact(double a, double d, double t) {
  const double k = a + d, lambda = a * d / k;
  return {lambda * t, lambda * t - 2 * lambda * lambda * (t / k - (1 - std::exp(-k * t)) / (k * k))};
}

// The xoshiro256** reference (Blackman and Vigna, xoshiro256starstar.c),
// seeded by splitmix64 (splitmix64.c) as the authors recommend, written out
// here independently of sim/neurons/rng.hpp.
struct ReferenceXoshiro {
  std::uint64_t s[4];
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  explicit ReferenceXoshiro(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (auto& w : s) {
      std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      w = z ^ (z >> 31);
    }
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t, s[3] = rotl(s[3], 45);
    return result;
  }
};

}  // namespace

TEST_CASE("splitmix64 and xoshiro256** match their reference implementations") {
  // Published splitmix64 outputs from state 0 (splitmix64.c test vector).
  std::uint64_t st = 0;
  CHECK(splitmix64_next(st) == 0xe220a8397b1dcdafULL);
  CHECK(splitmix64_next(st) == 0x6e789e6aa1b965f4ULL);
  CHECK(splitmix64_next(st) == 0x06c45d188009454fULL);
  for (std::uint64_t seed : {0ULL, 1ULL, 0xdeadbeefULL}) {
    Rng r(seed);
    ReferenceXoshiro ref(seed);
    for (int i = 0; i < 1000; ++i) REQUIRE(r() == ref.next());
  }
}

TEST_CASE("stream seeds are distinct across streams and seeds") {
  std::set<std::uint64_t> seen;
  for (std::uint64_t seed = 0; seed < 20; ++seed)
    for (std::uint64_t stream = 0; stream < 500; ++stream) seen.insert(stream_seed(seed, stream));
  CHECK(seen.size() == 20 * 500);
  CHECK(stream_seed(7, 3, 0) != stream_seed(7, 3, 1));
}

TEST_CASE("uniform and exponential draws have the right first two moments") {
  Rng r(stream_seed(11, 0));
  const int n = 200000;
  double su = 0, su2 = 0, se = 0, se2 = 0;
  bool in_range = true;
  for (int i = 0; i < n; ++i) {
    double u = r.uniform(), e = r.exponential();
    in_range &= u >= 0 && u < 1 && e >= 0 && std::isfinite(e);
    su += u, su2 += u * u, se += e, se2 += e * e;
  }
  CHECK(in_range);
  // U(0,1): mean 1/2, sd 1/sqrt(12). Exp(1): mean 1, sd 1, E[e^2] = 2, Var(e^2) = 20.
  CHECK(std::abs(z_score(su / n, 0.5, std::sqrt(1.0 / 12 / n))) < kZ);
  CHECK(std::abs(z_score(se / n, 1.0, std::sqrt(1.0 / n))) < kZ);
  CHECK(std::abs(z_score(se2 / n, 2.0, std::sqrt(20.0 / n))) < kZ);
  (void)su2;
}

TEST_CASE("two-state SSA: mean and variance of N(T) match the hand-derived moments") {
  auto m = model(kTwoState);
  SsaOptions opt;
  opt.T = 8.0;
  opt.trials = 40000;
  opt.seed = 2024;
  for (double H : {0.0, 2.0}) {
    auto run = simulate_neuron(m, Rational(static_cast<long>(H)), opt);
    auto st = count_stats(run.counts[0]);
    auto exact = two_state_exact(1.0 + H, 1.0, opt.T);
    INFO("H = " << H << " mean " << st.mean << " vs " << exact.mean << ", var " << st.variance << " vs "
                << exact.variance);
    CHECK(std::abs(z_score(st.mean, exact.mean, st.se_mean)) < kZ);
    CHECK(std::abs(z_score(st.variance, exact.variance, st.se_variance)) < kZ);
    // Stationary occupancy pi_R = a / (a + d); relaxation time 1/(a+d) <= 1, so
    // 3.2e5 time units of path give an sd below 2e-3: 0.01 is > 5 sd.
    CHECK(std::abs(run.occupancy[1] - (1.0 + H) / (2.0 + H)) < 0.01);
  }
}

TEST_CASE("three-state SSA agrees with the exact finite-T moments of solvers/counting") {
  auto m = model(kThreeState);
  const Rational H(0);
  SUBCASE("stationary start") {
    SsaOptions opt;
    opt.T = 6.0;
    opt.trials = 40000;
    opt.seed = 7;
    auto run = simulate_neuron(m, H, opt);
    auto st = count_stats(run.counts[0]);
    auto exact = solvers::counting_moments<double>(m, H, run.initial, opt.T);
    // Stationary start: E[N(T)] = F T exactly, F = 1/3 (hand-derived from eq. 2).
    CHECK(exact.mean == doctest::Approx(opt.T / 3.0).epsilon(1e-12));
    INFO("mean " << st.mean << " vs " << exact.mean << ", var " << st.variance << " vs " << exact.variance);
    CHECK(std::abs(z_score(st.mean, opt.T / 3.0, st.se_mean)) < kZ);
    CHECK(std::abs(z_score(st.variance, exact.variance, st.se_variance)) < kZ);
  }
  SUBCASE("start in R, all rates scaled by alpha = 3") {
    SsaOptions opt;
    opt.T = 2.0;
    opt.trials = 40000;
    opt.seed = 8;
    opt.start = StartMode::State;
    opt.start_state = 2;
    opt.rate_scale = 3.0;
    auto run = simulate_neuron(m, H, opt);
    auto st = count_stats(run.counts[0]);
    // Scaling every rate by alpha is the same as running the unscaled chain
    // for alpha T (time change), so the exact moments come from the unscaled
    // model at t = 3 T.
    std::vector<double> pi0{0, 0, 1};
    auto exact = solvers::counting_moments<double>(m, H, pi0, 3.0 * opt.T);
    INFO("mean " << st.mean << " vs " << exact.mean << ", var " << st.variance << " vs " << exact.variance);
    CHECK(std::abs(z_score(st.mean, exact.mean, st.se_mean)) < kZ);
    CHECK(std::abs(z_score(st.variance, exact.variance, st.se_variance)) < kZ);
    CHECK(run.initial == pi0);
  }
}

TEST_CASE("same seed gives identical results for any thread count") {
  auto m = model(kThreeState);
  SsaOptions opt;
  opt.times = {0.5, 2.0, 10.0};
  opt.trials = 1500;  // several reduction blocks
  opt.seed = 99;
  opt.threads = 1;
  auto one = simulate_neuron(m, Rational(0), opt);
  for (int threads : {2, 3}) {
    opt.threads = threads;
    auto many = simulate_neuron(m, Rational(0), opt);
    CHECK(many.counts == one.counts);
    CHECK(many.occupancy == one.occupancy);  // bitwise: fixed-block reduction
    CHECK(many.transitions == one.transitions);
  }
  opt.seed = 100;
  CHECK(simulate_neuron(m, Rational(0), opt).counts != one.counts);
}

TEST_CASE("checkpoints do not change the path: N at the last checkpoint equals a run to that horizon") {
  auto m = model(kThreeState);
  SsaOptions opt;
  opt.times = {0.0, 1.0, 3.0, 9.0};
  opt.trials = 300;
  opt.seed = 5;
  auto multi = simulate_neuron(m, Rational(0), opt);
  opt.times.clear();
  opt.T = 9.0;
  auto single = simulate_neuron(m, Rational(0), opt);
  CHECK(multi.counts[3] == single.counts[0]);
  bool monotone = true, zero_at_start = true;
  for (std::size_t i = 0; i < opt.trials; ++i) {
    zero_at_start &= multi.counts[0][i] == 0;
    for (std::size_t k = 1; k < 4; ++k) monotone &= multi.counts[k][i] >= multi.counts[k - 1][i];
  }
  CHECK(zero_at_start);
  CHECK(monotone);
}

TEST_CASE("a rectified rate of zero makes a state absorbing") {
  // At H = -1, a = max(0, 1 + H) = 0: from R the chain returns to B once and
  // stays; no spike can occur, and exactly one transition per trial happens
  // (P(Exp(1) > 60) = e^-60).
  auto m = model(kTwoState);
  SsaOptions opt;
  opt.T = 60.0;
  opt.trials = 200;
  opt.start = StartMode::State;
  opt.start_state = 1;
  auto run = simulate_neuron(m, Rational(-1), opt);
  bool all_zero = true;
  for (auto c : run.counts[0]) all_zero &= c == 0;
  CHECK(all_zero);
  CHECK(run.transitions == opt.trials);
  // Time in R is Exp(1): mean fraction 1/60; sd of the mean (1/60)/sqrt(200).
  CHECK(std::abs(z_score(run.occupancy[1], 1.0 / 60, 1.0 / 60 / std::sqrt(200.0))) < kZ);
}

TEST_CASE("bad options are input errors") {
  auto m = model(kThreeState);
  SsaOptions opt;
  opt.trials = 10;
  opt.T = -1;
  CHECK_THROWS_AS(simulate_neuron(m, Rational(0), opt), InputError);
  opt.T = NAN;
  CHECK_THROWS_AS(simulate_neuron(m, Rational(0), opt), InputError);
  opt.T = 1;
  opt.trials = 0;
  CHECK_THROWS_AS(simulate_neuron(m, Rational(0), opt), InputError);
  opt.trials = 10;
  opt.start = StartMode::State;
  opt.start_state = 3;
  CHECK_THROWS_AS(simulate_neuron(m, Rational(0), opt), InputError);
  opt.start_state = 0;
  opt.rate_scale = 0;
  CHECK_THROWS_AS(simulate_neuron(m, Rational(0), opt), InputError);
  opt.rate_scale = 1;
  opt.times = {2.0, 1.0};
  CHECK_THROWS_AS(simulate_neuron(m, Rational(0), opt), InputError);
}
