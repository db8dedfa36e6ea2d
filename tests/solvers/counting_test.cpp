// Counting statistics of spike trains against independent references:
// published/hand-derived exact values (REFERENCES.md "Counting statistics"),
// renewal-process closed forms, an exact rational Taylor series of the Van
// Loan block matrix at small t, and asymptotic identities.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <type_traits>

#include "ctmc/solvers/counting.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "expm.hpp"  // solvers/src (internal): the matrix exponential
#include "ctmc/solvers/families.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/solvers/stationary.hpp"
#include "scalar_accuracy.hpp"

using namespace ctmc;
using namespace ctmc::solvers;

namespace {

Affine constant(const Rational& r) { return Affine{r, 0}; }

Model three_state(const Rational& a, const Rational& b, const Rational& c, const Rational& d) {
  return three_state_model(constant(a), constant(b), constant(c), constant(d));
}

Mpfr mp(const Rational& q) { return from_rational<Mpfr>(q); }

double rel(const Mpfr& x, const Mpfr& ref) { return to_double(abs(x - ref) / abs(ref)); }

}  // namespace

TEST_CASE("asymptotic counting, three-state a=2 b=1 c=3 d=1/2: lambda = 1/3, Fano = 14/27 exactly") {
  const auto r = asymptotic_counting<Rational>(three_state(2, 1, 3, Rational(1, 2)), 0);
  CHECK(r.rate == Rational(1, 3));
  CHECK(r.fano() == Rational(14, 27));
  CHECK(r.theta == std::vector<Rational>{Rational(2, 9), Rational(1, 9), Rational(6, 9)});
}

TEST_CASE("asymptotic counting, three-state a=b=c=d=1: lambda = 1/4, variance rate 1/8 exactly") {
  const auto r = asymptotic_counting<Rational>(three_state(1, 1, 1, 1), 0);
  CHECK(r.rate == Rational(1, 4));
  CHECK(r.variance_rate == Rational(1, 8));
}

TEST_CASE("asymptotic counting, two-state renewal: Fano = squared CV of Exp(a)+Exp(d) intervals") {
  // Intervals X = Exp(a) + Exp(d): E X = 1/a + 1/d, Var X = 1/a^2 + 1/d^2;
  // renewal theory: lambda = 1/E X, v = lambda Var X / (E X)^2.
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> num(1, 50), den(1, 13);
  for (int trial = 0; trial < 25; ++trial) {
    const Rational a(num(rng), den(rng)), d(num(rng), den(rng));
    const auto r = asymptotic_counting<Rational>(two_state_model(constant(a), constant(d)), 0);
    const Rational mean = 1 / a + 1 / d, var = 1 / (a * a) + 1 / (d * d);
    CHECK(r.rate == 1 / mean);
    CHECK(r.variance_rate == var / (mean * mean * mean));
  }
}

namespace {
// The three-state chain's spikes (G -> R) form a renewal process: after a
// spike the chain is in R. An interval is X = Exp(d) + T_B, and T_B (B to the
// next spike) is a geometric number K of cycles Exp(a) + Exp(b + c), each
// ending in a spike with probability p = c / (b + c). With the cycle's mean m
// and variance s2: E T_B = m / p, Var T_B = s2 / p + m^2 (1 - p) / p^2.
// Renewal theory: lambda = 1 / E X, variance rate = Var X / (E X)^3.
std::pair<Rational, Rational> three_state_renewal(const Rational& a, const Rational& b, const Rational& c,
                                                  const Rational& d) {
  const Rational p = c / (b + c), m = 1 / a + 1 / (b + c), s2 = 1 / (a * a) + 1 / ((b + c) * (b + c));
  const Rational mean = 1 / d + m / p;
  const Rational var = 1 / (d * d) + s2 / p + m * m * (1 - p) / (p * p);
  return {1 / mean, var / (mean * mean * mean)};
}

// Error bounds of asymptotic_counting in units of 2^-p (scalar_accuracy.hpp)
// on the chains below: largest observed 2.0 ulps (rate) and 2.4 ulps
// (variance rate), MPFR; 0.5 and 1.1 ulps in double.
constexpr double kRateUlps = 8;
constexpr double kVarianceRateUlps = 8;
// expm's absolute error on the 2x2 example in units of 2^s u (see below):
// largest observed 0.46 (double), 0.32 (MPFR).
constexpr double kExpmUlps = 1;
}  // namespace

TEST_CASE_TEMPLATE("asymptotic counting of three-state chains: rate and variance rate of the renewal closed form", T,
                   CTMC_POINT_SCALARS) {
  // Exact for Rational; a few ulps for double and MPFR (64, 256, 1024 bits).
  using Acc = test::ScalarAccuracy<T>;
  const Rational H(5, 7);
  struct Case {
    Model model;
    Rational a, b, c, d;  // the rates at H
  };
  const Case cases[] = {
      {three_state(2, 1, 3, Rational(1, 2)), 2, 1, 3, Rational(1, 2)},
      {three_state_model(Affine{1, Rational(1, 2)}, constant(Rational(7, 3)), Affine{Rational(1, 5), 2},
                         constant(Rational(3, 4))),
       1 + H / 2, Rational(7, 3), Rational(1, 5) + 2 * H, Rational(3, 4)},
      {three_state(Rational(1, 1000), 250, Rational(9, 7), 40), Rational(1, 1000), 250, Rational(9, 7), 40},
  };
  double worst_rate = 0, worst_var = 0;
  for (const auto& k : cases) {
    const auto [rate, variance_rate] = three_state_renewal(k.a, k.b, k.c, k.d);
    for (unsigned bits : Acc::precisions()) {
      PrecisionScope scope(bits);
      const auto r = asymptotic_counting<T>(k.model, H);
      const double e_rate = Acc::error_ulps(r.rate, rate), e_var = Acc::error_ulps(r.variance_rate, variance_rate);
      INFO(Acc::name() << " at " << Acc::bits() << " bits, rates " << to_string(k.a) << ", " << to_string(k.b)
                       << ", " << to_string(k.c) << ", " << to_string(k.d) << ": rate error " << e_rate
                       << " ulps, variance-rate error " << e_var << " ulps");
      CHECK(e_rate <= kRateUlps);
      CHECK(e_var <= kVarianceRateUlps);
      worst_rate = std::max(worst_rate, e_rate);
      worst_var = std::max(worst_var, e_var);
    }
  }
  MESSAGE(Acc::name() << " asymptotic counting: largest error " << worst_rate << " ulps (rate), " << worst_var
                       << " ulps (variance rate)");
}

TEST_CASE_TEMPLATE("expm: 2x2 generator against its closed form", T, double, Mpfr) {
  // exp(Q t) for Q = [[-a, a], [d, -d]]: P_00 = d/(a+d) + a/(a+d) e^{-(a+d)t},
  // the reference evaluated in MPFR at the working precision + 64 bits.
  // Scaling and squaring is normwise stable: each of its s squarings can
  // double the error, so the bound is kExpmUlps x 2^s u, absolute against
  // ||exp(Qt)|| = 1 (u = 2^-p; s from the plan expm uses: 7 in double, up to
  // 28 at 1024 bits, where more squarings buy fewer Taylor terms).
  using Acc = test::ScalarAccuracy<T>;
  const Rational a(3), d(1, 7), t(13, 2);
  double largest = 0;
  for (unsigned bits : Acc::precisions()) {
    PrecisionScope scope(bits);
    const unsigned p = Acc::bits();
    DenseMatrix<T> q(2);
    q(0, 0) = from_rational<T>(-a * t);
    q(0, 1) = from_rational<T>(a * t);
    q(1, 0) = from_rational<T>(d * t);
    q(1, 1) = from_rational<T>(-d * t);
    const auto e = expm(q);
    const int squarings = expm_plan_log2(log2_norm_inf(q), working_bits<T>(), 1).squarings;
    double worst = 0;
    {
      PrecisionScope wide(p + 64);
      const Mpfr am = mp(a), dm = mp(d), tm = mp(t), s = am + dm, decay = exp(-s * tm);
      const Mpfr ref[4] = {dm / s + am / s * decay, am / s - am / s * decay, dm / s - dm / s * decay,
                           am / s + dm / s * decay};  // P_00, P_01, P_10, P_11
      for (std::size_t i = 0; i < 4; ++i)
        worst = std::max(worst, std::ldexp(to_double(abs(Mpfr(e.a[i]) - ref[i])), static_cast<int>(p) - squarings));
    }
    INFO(Acc::name() << " at " << p << " bits, " << squarings << " squarings: max |error| " << worst << " x 2^s u");
    CHECK(worst <= kExpmUlps);
    largest = std::max(largest, worst);
    // P_00 in double, ten times closer than the bound: 1e-14.
    if constexpr (std::is_same_v<T, double>)
      CHECK(std::abs(e(0, 0) - to_double(mp(d / (a + d)) + mp(a / (a + d)) * exp(-mp((a + d) * t)))) < 1e-14);
  }
  MESSAGE(Acc::name() << " expm: largest error " << largest << " x 2^s u (bound " << kExpmUlps << ")");
}

TEST_CASE("finite-T mean, two-state renewal from state B: closed form") {
  // P(B at s) = d/(a+d) + a/(a+d) e^{-(a+d)s}; E N(t) = int_0^t a P(B at s) ds.
  const ctmc::PrecisionScope precision_256_at_166(256);
  const Rational a(5, 2), d(2, 3);
  const auto m = two_state_model(constant(a), constant(d));
  for (const Rational& tq : {Rational(1, 10), Rational(3), Rational(40)}) {
    const Mpfr t = mp(tq), am = mp(a), dm = mp(d), s = am + dm;
    const Mpfr expected = am * dm / s * t + am * am / (s * s) * (1 - exp(-s * t));
    const auto r = counting_moments<Mpfr>(m, 0, {mp(1), mp(0)}, t);
    CHECK(rel(r.mean, expected) < 1e-70);
  }
}

TEST_CASE("finite-T counting from stationarity: E N(T) = lambda T, and Var N(T)/T -> variance rate") {
  const ctmc::PrecisionScope precision_256_at_178(256);
  const auto m = three_state(2, 1, 3, Rational(1, 2));
  const auto as = asymptotic_counting<Rational>(m, 0);
  std::vector<Mpfr> pi0;
  for (const auto& p : as.theta) pi0.push_back(mp(p));
  for (const Rational& tq : {Rational(1, 3), Rational(7), Rational(250)}) {
    const auto r = counting_moments<Mpfr>(m, 0, pi0, mp(tq));
    CHECK(rel(r.mean, mp(as.rate * tq)) < 1e-65);
  }
  // The spectral gap of Q is 2 (eigenvalues 0, -2, -9/2), so Var N(T) = v T + c + O(e^{-2T}):
  // the difference between T = 30 and T = 60 is v * 30 up to about e^{-60}.
  const auto v30 = counting_moments<Mpfr>(m, 0, pi0, mp(30)).variance;
  const auto v60 = counting_moments<Mpfr>(m, 0, pi0, mp(60)).variance;
  CHECK(rel(v60 - v30, mp(as.variance_rate * 30)) < 1e-22);
  // The same from a non-stationary start (the constant c changes, the slope does not).
  const std::vector<Mpfr> start{mp(0), mp(1), mp(0)};
  const auto w30 = counting_moments<Mpfr>(m, 0, start, mp(30)).variance;
  const auto w60 = counting_moments<Mpfr>(m, 0, start, mp(60)).variance;
  CHECK(rel(w60 - w30, mp(as.variance_rate * 30)) < 1e-22);
  // Double precision: a few digits lost to the mean^2 cancellation only.
  const std::vector<double> pid{2.0 / 9, 1.0 / 9, 6.0 / 9};
  const auto d = counting_moments<double>(m, 0, pid, 60.0);
  CHECK(std::abs(d.variance - to_double(v60)) / to_double(v60) < 1e-11);
  CHECK(std::abs(d.mean - 20.0) / 20.0 < 1e-12);
}

namespace {
// E N(t) and E N(t)(N(t)-1) from pi0 by the exact rational Taylor series
// sum_{k <= terms} (A t)^k / k! of Van Loan's matrix A = [[Q, D1, 0], [0, Q,
// D1], [0, 0, Q]]: independent of scaling and squaring and of centering.
std::pair<Rational, Rational> taylor_moments(const Model& m, const std::vector<Rational>& pi0, const Rational& t,
                                             int terms) {
  const auto g = spike_generator<Rational>(m, 0);
  const std::size_t n = m.size();
  DenseMatrix<Rational> a(3 * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      for (std::size_t b = 0; b < 3; ++b) a(b * n + i, b * n + j) = g.q(i, j) * t;
      a(i, n + j) = g.d1(i, j) * t;
      a(n + i, 2 * n + j) = g.d1(i, j) * t;
    }
  // Row vector x_k = [pi0, 0, 0] (A t)^k / k!, accumulated.
  std::vector<Rational> x(3 * n, Rational(0)), sum(3 * n, Rational(0));
  for (std::size_t i = 0; i < n; ++i) x[i] = pi0[i];
  for (int k = 0; k <= terms; ++k) {
    for (std::size_t j = 0; j < 3 * n; ++j) sum[j] += x[j];
    std::vector<Rational> y(3 * n, Rational(0));
    for (std::size_t i = 0; i < 3 * n; ++i)
      if (x[i] != 0)
        for (std::size_t j = 0; j < 3 * n; ++j) y[j] += x[i] * a(i, j);
    for (auto& v : y) v /= (k + 1);
    x = std::move(y);
  }
  Rational mean(0), fm2(0);
  for (std::size_t j = 0; j < n; ++j) {
    mean += sum[n + j];
    fm2 += 2 * sum[2 * n + j];
  }
  return {mean, fm2};
}
}  // namespace

TEST_CASE("finite-T moments at small t against the exact rational Taylor series of exp(A t)") {
  // 40 terms at t = 1/8 with ||A|| <= 2 * 12: the tail is below 3^41/41! < 1e-29.
  const ctmc::PrecisionScope precision_256_at_242(256);
  const auto m = three_state_model(constant(4), constant(3), constant(5), constant(Rational(2, 3)));
  const Rational t(1, 8);
  const std::vector<Rational> pi0{Rational(1, 2), Rational(1, 3), Rational(1, 6)};
  const auto [mean, fm2] = taylor_moments(m, pi0, t, 40);
  std::vector<Mpfr> pim;
  for (const auto& p : pi0) pim.push_back(mp(p));
  const auto r = counting_moments<Mpfr>(m, 0, pim, mp(t));
  CHECK(relative_error(r.mean, mean) < 1e-27);
  CHECK(relative_error(r.factorial_moment2, fm2) < 1e-27);
  CHECK(relative_error(r.variance, fm2 + mean - mean * mean) < 1e-27);
}

TEST_CASE("finite-T moments with rates x t far below 1, from a state away from the spikes") {
  // From B the first spike needs B -> G -> R: E N(t) ~ a c t^2 / 2, and the
  // second moment's entries start at t^4. The Taylor degree chosen from ||A t||
  // alone (1 at ||A t|| ~ 1e-11) returned them as 0, and centering at c t
  // cancelled the mean: E N(1) = 0 and Var N(1) = -1.1e-25 in double with
  // rates ~1e-12, 61 of 77 digits at 256 bits with rates ~1 and t = 1e-30.
  // References: the exact series to 40 terms (tail below 1e-180 with these norms).
  const ctmc::PrecisionScope precision_256_at_262(256);
  struct Case {
    Model model;
    Rational t;
  };
  const Case cases[] = {
      {three_state(*parse_exact("2e-12"), *parse_exact("1e-12"), *parse_exact("3e-12"), *parse_exact("5e-13")), 1},
      {three_state(*parse_exact("2e-6"), *parse_exact("1e-6"), *parse_exact("3e-6"), *parse_exact("5e-7")), 1},
      {three_state(4, 3, 5, Rational(2, 3)), *parse_exact("1e-30")}};
  for (const auto& [m, t] : cases) {
    CAPTURE(to_double(t));
    const std::vector<Rational> from_b{1, 0, 0};
    const auto [mean, fm2] = taylor_moments(m, from_b, t, 40);
    const Rational var = fm2 + mean - mean * mean;
    const auto r = counting_moments<Mpfr>(m, 0, std::vector<Mpfr>{mp(1), mp(0), mp(0)}, mp(t));
    CHECK(relative_error(r.mean, mean) < 1e-70);
    CHECK(relative_error(r.variance, var) < 1e-70);
    const auto d = counting_moments<double>(m, 0, std::vector<double>{1, 0, 0}, to_double(t));
    CHECK(relative_error(d.mean, mean) < 1e-14);
    CHECK(relative_error(d.variance, var) < 1e-14);
  }
}

TEST_CASE("finite-T moments when the rates x T are below double's smallest subnormal (T = 1e-400, 1e-10000)") {
  // ||A T|| ~ 4e-400 is 0 in double: an expm plan made from the norm in
  // double would return exp(A T) = I, so E N(T) = Var N(T) = 0. The plan is
  // made from log2 of the norm taken in MPFR. References: the exact series to 12
  // terms (the leading terms are T and T^2; the tail is below T^12).
  const ctmc::PrecisionScope precision_256_at_290(256);
  const auto m = three_state(2, 1, 3, Rational(1, 2));  // tests/fixtures/three_state.json: lambda = 1/3
  const auto stationary = solve_stationary<Rational>(m, 0).pi;
  const std::vector<Rational> from_b{1, 0, 0};
  for (const std::string text : {"1e-400", "1e-10000"}) {
    CAPTURE(text);
    const Rational t = *parse_exact(text);
    for (const auto* pi0 : {&stationary, &from_b}) {
      const auto [mean, fm2] = taylor_moments(m, *pi0, t, 12);
      const Rational var = fm2 + mean - mean * mean;
      std::vector<Mpfr> pim;
      for (const auto& p : *pi0) pim.push_back(mp(p));
      const auto r = counting_moments<Mpfr>(m, 0, pim, mp(t));
      CHECK(relative_error(r.mean, mean) < 1e-70);
      CHECK(relative_error(r.variance, var) < 1e-70);
      CHECK(relative_error(r.factorial_moment2, fm2) < 1e-70);
    }
    // From stationarity E N(T) = lambda T exactly.
    std::vector<Mpfr> pim;
    for (const auto& p : stationary) pim.push_back(mp(p));
    CHECK(relative_error(counting_moments<Mpfr>(m, 0, pim, mp(t)).mean, t / 3) < 1e-70);
  }
}

TEST_CASE("expm plan from log2 of the norm: tiny norms keep the path terms, zero and huge norms as before") {
  // log2(4e-400) = -1327: no squaring, degree = the path terms alone.
  const ExpmPlan tiny = expm_plan_log2(-1327.0, 256, 8);
  CHECK(tiny.squarings == 0);
  CHECK(tiny.degree == 8);
  const ExpmPlan zero = expm_plan_log2(-std::numeric_limits<double>::infinity(), 256, 8);
  CHECK(zero.squarings == 0);
  CHECK(zero.degree == 0);
  for (double norm : {1e-300, 0.3, 1.0, 7.5, 1e10}) {
    CAPTURE(norm);
    const ExpmPlan a = expm_plan(norm, 128, 5), b = expm_plan_log2(std::log2(norm), 128, 5);
    CHECK(a.squarings == b.squarings);
    CHECK(a.degree == b.degree);
  }
  CHECK_THROWS_AS(expm_plan_log2(std::numeric_limits<double>::infinity(), 128), ctmc::InputError);
  CHECK_THROWS_AS(expm_plan_log2(std::numeric_limits<double>::quiet_NaN(), 128), ctmc::InputError);
  CHECK_THROWS_AS(expm_plan_log2(2000.0, 128), ctmc::InputError);
}

TEST_CASE("counting: bad inputs are InputErrors") {
  const auto m = three_state(2, 1, 3, Rational(1, 2));
  CHECK_THROWS_AS(counting_moments<double>(m, 0, {1.0, 0.0}, 1.0), ctmc::InputError);
  CHECK_THROWS_AS(counting_moments<double>(m, 0, {1.0, -0.5, 0.5}, 1.0), ctmc::InputError);
  CHECK_THROWS_AS(counting_moments<double>(m, 0, {1.0, 0.0, 0.0}, -1.0), ctmc::InputError);
}

TEST_CASE("structured Van Loan exponential equals the generic expm of the 3n x 3n block matrix") {
  const auto m = three_state_model(Affine{1, 1}, constant(2), constant(5), constant(Rational(1, 3)));
  for (double t : {0.01, 1.0, 37.0}) {
    const auto g = spike_generator<double>(m, Rational(1, 2));
    const std::size_t n = 3;
    DenseMatrix<double> q(n), d(n), a(3 * n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        q(i, j) = g.q(i, j) * t;
        d(i, j) = g.d1(i, j) * t;
        for (std::size_t b = 0; b < 3; ++b) a(b * n + i, b * n + j) = q(i, j);
        a(i, n + j) = d(i, j);
        a(n + i, 2 * n + j) = d(i, j);
      }
    const auto full = expm(a);
    const auto blocks = expm_van_loan(q, d);
    double scale = 0;  // ||exp(A)||_max
    for (double x : full.a) scale = std::max(scale, std::abs(x));
    for (std::size_t blk = 0; blk < 3; ++blk)
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) CHECK(std::abs(blocks[blk](i, j) - full(i, blk * n + j)) <= 1e-13 * scale);
  }
}

TEST_CASE("asymptotic counting on a chain with transient states (one closed class)") {
  // Three-state with a(H) = max(0, 1 + H): at H = -1 the rest state B is absorbing;
  // no spikes in the long run, and 1 theta - Q is still nonsingular.
  const auto m = three_state_model(Affine{1, 1}, constant(1), constant(3), constant(Rational(1, 2)));
  const auto r = asymptotic_counting<Rational>(m, -1);
  CHECK(r.rate == 0);
  CHECK(r.variance_rate == 0);
  CHECK(r.theta == std::vector<Rational>{1, 0, 0});
  // At H = 1 (a = 2) it is the chain of REFERENCES.md again: Fano factor 14/27.
  CHECK(asymptotic_counting<Rational>(m, 1).fano() == Rational(14, 27));
  // Started in G at H = -1: at most one spike (G -> R before G -> B, probability c/(b+c) = 3/4).
  const ctmc::PrecisionScope precision_256_at_375(256);
  const auto fin = counting_moments<Mpfr>(m, -1, {mp(0), mp(1), mp(0)}, mp(80));
  CHECK(rel(fin.mean, mp(Rational(3, 4))) < 1e-60);
  CHECK(rel(fin.variance, mp(Rational(3, 16))) < 1e-60);  // Bernoulli(3/4)
}

TEST_CASE("double precision at large lambda t: the centered formulas keep the variance accurate") {
  // Rates x1000, t = 1000: E N ~ 3.3e5, so the uncentered E[N(N-1)] + E N - (E N)^2
  // would cancel about 1e11 against 1.7e5 and lose ~6 digits (a relative
  // error of about 3e-4). Reference: the same moments in MPFR
  // at 256 bits.
  const ctmc::PrecisionScope precision_256_at_386(256);
  const auto m = three_state(2000, 1000, 3000, 500);
  for (double t : {1.0, 1000.0}) {
    const auto d = counting_moments<double>(m, 0, {1.0, 0.0, 0.0}, t);
    const auto p = counting_moments<Mpfr>(m, 0, {mp(1), mp(0), mp(0)}, Mpfr(t));
    CHECK(std::abs(d.mean - to_double(p.mean)) / to_double(p.mean) < 1e-12);
    CHECK(std::abs(d.variance - to_double(p.variance)) / to_double(p.variance) < 1e-8);
  }
}

TEST_CASE("MPFR at huge lambda t: guard bits grow with the squarings, Var N(t) = v t + c to 60 digits") {
  // Two-state renewal chain from its stationary start: E N(t) = lambda t
  // exactly and Var N(t) = v t + c + O(e^{-(a+d) t}). c is taken at t = 200
  // (the exponential term is below 1e-170 there), then t = 1e16 and 1e80
  // need 55 and 268 squarings: a fixed 64 guard bits would keep only about
  // 12 of the variance's 77 digits at 1e80.
  const ctmc::PrecisionScope precision_256_at_402(256);
  const Rational a(3, 2), d(1, 2);
  const auto m = two_state_model(constant(a), constant(d));
  const auto as = asymptotic_counting<Rational>(m, 0);
  std::vector<Mpfr> pi0;
  for (const auto& x : as.theta) pi0.push_back(mp(x));
  const Mpfr v = mp(as.variance_rate), lambda = mp(as.rate);
  const Mpfr c = counting_moments<Mpfr>(m, 0, pi0, mp(200)).variance - v * mp(200);
  for (const char* t_text : {"1e16", "1e80"}) {
    const Mpfr t = mp(*parse_exact(t_text));
    const auto r = counting_moments<Mpfr>(m, 0, pi0, t);
    CHECK(rel(r.mean, lambda * t) < 1e-70);
    CHECK(rel(r.variance, v * t + c) < 1e-70);
  }
}

TEST_CASE("double refuses horizons whose squarings would cost it more than 25 bits, and infinite ones") {
  // Two-state a = 3/2, d = 1/2: ||A t|| <= 4 * 3/2 * t, so s = ceil(log2(6 t)) + 1:
  // t = 1e6 needs 24 squarings (allowed), t = 1e8 needs 31 (refused).
  const auto m = two_state_model(constant(Rational(3, 2)), constant(Rational(1, 2)));
  CHECK_NOTHROW(counting_moments<double>(m, 0, {0.25, 0.75}, 1e6));
  CHECK_THROWS_WITH_AS(counting_moments<double>(m, 0, {0.25, 0.75}, 1e8),
                       doctest::Contains("squarings"), ctmc::InputError);
  CHECK_THROWS_AS(counting_moments<double>(m, 0, {0.25, 0.75}, std::numeric_limits<double>::infinity()),
                  ctmc::InputError);
  // ... and MPFR refuses a norm beyond double's range instead of planning with UB,
  // naming the model and T when the rates x T get there.
  CHECK_THROWS_AS(expm_plan(std::numeric_limits<double>::infinity(), 128), ctmc::InputError);
  const ctmc::PrecisionScope precision_128_at_430(128);
  const auto fast = two_state_model(constant(Rational(100000000000000000000.0)), constant(Rational(1)));
  CHECK_THROWS_WITH_AS(counting_moments<Mpfr>(fast, 0, {mp(1), mp(0)}, mp(*parse_exact("1e300")), "fast.json"),
                       doctest::Contains("fast.json: at T = "), ctmc::InputError);
}

TEST_CASE("asymptotic counting with rates far from 1: the deviation system is solved on the rates' scale") {
  // Two-state renewal chain (see above): lambda = 1/E X, v = lambda Var X / (E X)^2.
  // 1 theta - Q has entries of size 1 beside the rates; with rates ~1e20 in
  // double (or 1e200 in MPFR) the theta part is lost beside Q and that system
  // is singular. The reference is the renewal closed form in exact rationals.
  const ctmc::PrecisionScope precision_256_at_441(256);
  const std::pair<const char*, const char*> cases[] = {
      {"1e20", "3e20"}, {"1e20", "1"}, {"1", "5e19"}, {"1e-20", "3e-20"}, {"2.5e200", "1e200"}};
  for (const auto& [as, ds] : cases) {
    const std::string rates = std::string(as) + ", " + ds;
    CAPTURE(rates);
    const Rational a = *parse_exact(as), d = *parse_exact(ds);
    const auto m = two_state_model(constant(a), constant(d));
    const Rational mean = 1 / a + 1 / d, var = 1 / (a * a) + 1 / (d * d);
    const Rational rate = 1 / mean, v = var / (mean * mean * mean);
    const auto mm = asymptotic_counting<Mpfr>(m, 0);
    CHECK(relative_error(mm.rate, rate) < 1e-70);
    CHECK(relative_error(mm.variance_rate, v) < 1e-70);
    if (a < Rational(1e300) && d < Rational(1e300)) {
      const auto md = asymptotic_counting<double>(m, 0);
      CHECK(relative_error(md.rate, rate) < 1e-14);
      CHECK(relative_error(md.variance_rate, v) < 1e-13);
    }
  }
}

TEST_CASE("asymptotic counting with rates of very different sizes keeps every rate (pinned Poisson solve)") {
  // The textbook deviation system (alpha 1 theta - Q) y = v, alpha the
  // largest exit rate, loses rates far below alpha beside alpha theta_j (the
  // three-state neuron below at H = 1e10 keeps 7 digits in double, and at
  // H = 1e300 its 256-bit variance rate is 1.525 for an exact 1.131).
  const ctmc::PrecisionScope precision_256_at_467(256);
  const auto sigmoid_like = three_state_model(Affine{Rational(14, 10), Rational(3, 4)}, constant(Rational(115, 100)),
                                              constant(Rational(18, 10)), constant(10));
  for (const char* hs : {"1e10", "1e20", "1e300"}) {
    CAPTURE(hs);
    const Rational H = *parse_exact(hs);
    const auto ex = asymptotic_counting<Rational>(sigmoid_like, H);
    CHECK(relative_error(asymptotic_counting<Mpfr>(sigmoid_like, H).variance_rate, ex.variance_rate) < 1e-70);
    CHECK(relative_error(asymptotic_counting<double>(sigmoid_like, H).variance_rate, ex.variance_rate) < 1e-14);
  }
  // Random irreducible chains of 2-7 states, rates m 10^k with k in
  // [-12, 12], some transitions spiking: double and MPFR against exact.
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> states(2, 7), mant(1, 999), expo(-12, 12), coin(0, 9);
  double worst_double = 0, worst_mpfr = 0;
  for (int trial = 0; trial < 200; ++trial) {
    Model m;
    const auto n = static_cast<std::size_t>(states(rng));
    for (std::size_t i = 0; i < n; ++i) m.states.push_back("S" + std::to_string(i));
    bool spikes = false;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        // Every i -> i+1 (a cycle: irreducible), the others with chance 0.7.
        if (i == j || (j != (i + 1) % n && coin(rng) >= 7)) continue;
        Rational rate(mant(rng), 100);
        const int k = expo(rng);
        for (int e = 0; e < std::abs(k); ++e) rate = k > 0 ? rate * 10 : rate / 10;
        Transition t;
        t.from = i;
        t.to = j;
        t.offset = ExactValue(rate);
        t.spike = coin(rng) < 3;
        spikes = spikes || t.spike;
        m.transitions.push_back(t);
      }
    if (!spikes) m.transitions.front().spike = true;
    const auto ex = asymptotic_counting<Rational>(m, 0);
    worst_double = std::max(worst_double, relative_error(asymptotic_counting<double>(m, 0).variance_rate, ex.variance_rate));
    worst_mpfr = std::max(worst_mpfr, relative_error(asymptotic_counting<Mpfr>(m, 0).variance_rate, ex.variance_rate));
  }
  CHECK(worst_double < 1e-14);
  CHECK(worst_mpfr < 1e-70);
}

TEST_CASE("finite-T counting refuses chains beyond its dense size limits up front") {
  // A 3000-state ring would need more than 7.7 GB in MPFR (GMP aborts): an
  // InputError naming the state count, before any allocation.
  auto ring = [](std::size_t n) {
    Model m;
    for (std::size_t i = 0; i < n; ++i) m.states.push_back("S" + std::to_string(i));
    for (std::size_t i = 0; i < n; ++i) {
      Transition t;
      t.from = i;
      t.to = (i + 1) % n;
      t.offset = ExactValue(Rational(1));
      t.spike = i == 0;
      m.transitions.push_back(t);
    }
    return m;
  };
  const ctmc::PrecisionScope precision_128_at_527(128);
  const auto m301 = ring(301);
  CHECK_THROWS_WITH_AS(counting_moments<Mpfr>(m301, 0, std::vector<Mpfr>(301, mp(Rational(1, 301))), mp(1)),
                       doctest::Contains("301 states; the finite-T counting moments"), ctmc::InputError);
  const auto m1001 = ring(1001);
  CHECK_THROWS_WITH_AS(counting_moments<double>(m1001, 0, std::vector<double>(1001, 1.0 / 1001), 1.0),
                       doctest::Contains("1001 states"), ctmc::InputError);
  // A small ring is fine: E N(1) from the stationary start is 1/n.
  const auto m5 = ring(5);
  CHECK(std::abs(counting_moments<double>(m5, 0, std::vector<double>(5, 0.2), 1.0).mean - 0.2) < 1e-15);
}
