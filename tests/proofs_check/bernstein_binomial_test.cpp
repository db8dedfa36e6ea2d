// m_N = max_u E|K/N - u| against brute-force exact binomial sums (rationals),
// de Moivre's formula against the direct sum, published values of m_N sqrt N
// (REFERENCES.md), and the closed-form bounds against the exact value.
#include <doctest/doctest.h>

#include <cmath>

#include "bernstein_binomial.hpp"  // proofs_check/src (internal)

using namespace ctmc;
using solvers::Integer;
using solvers::Rational;

namespace {

Rational power(const Rational& x, int e) {
  Rational r(1);
  for (int k = 0; k < e; ++k) r *= x;
  return r;
}

Integer choose(int n, int k) {
  Integer r(1);
  for (int j = 1; j <= k; ++j) r = r * Integer(n - k + j) / Integer(j);
  return r;
}

// E|K/N - u| by the direct sum over k (no de Moivre).
Rational mad_direct(int n, const Rational& u) {
  Rational s(0);
  for (int k = 0; k <= n; ++k) {
    Rational d = Rational(k, n) - u;
    if (d < 0) d = -d;
    s += d * Rational(choose(n, k)) * power(u, k) * power(Rational(1) - u, n - k);
  }
  return s;
}

}  // namespace

TEST_CASE("de Moivre's formula equals the direct sum") {
  for (int n : {1, 2, 3, 7, 12, 25}) {
    for (int a = 0; a <= 13; ++a) {
      const Rational u(a, 13);
      INFO("N = " << n << ", u = " << a << "/13");
      CHECK(proofs_check::binomial_mad_de_moivre(n, u) == Rational(n) * mad_direct(n, u));
    }
  }
}

TEST_CASE("m_N is the maximum of the exact mean absolute deviation") {
  for (int n = 1; n <= 24; ++n) {
    const auto m = proofs_check::max_mean_abs_deviation(n);
    // Attained at u = k/(N+1): the direct sum there equals the claimed value.
    CHECK(mad_direct(n, Rational(m.k, n + 1)) == m.value);
    // No grid point does better (brute force on a fine rational grid).
    for (int a = 0; a <= 240; ++a) {
      INFO("N = " << n << ", u = " << a << "/240");
      CHECK(mad_direct(n, Rational(a, 240)) <= m.value);
    }
  }
}

TEST_CASE("m_N sqrt N: published values, below 1/2, approaching 1/sqrt(2 pi)") {
  // REFERENCES.md: 0.4147 at N = 4, 0.4005 at N = 64, 0.3990 at N = 1024.
  auto scaled = [](int n) {
    return solvers::to_double(proofs_check::max_mean_abs_deviation(n).value) * std::sqrt(double(n));
  };
  CHECK(scaled(4) == doctest::Approx(0.4147).epsilon(1e-4 / 0.4147));
  CHECK(scaled(64) == doctest::Approx(0.4005).epsilon(1e-4 / 0.4005));
  CHECK(scaled(1024) == doctest::Approx(0.3990).epsilon(1e-4 / 0.3990));
  // N = 1: E|K - u| = 2u(1-u), maximal 1/2 at u = 1/2: the bound 1/(2 sqrt N) is attained.
  CHECK(proofs_check::max_mean_abs_deviation(1).value == Rational(1, 2));
  for (int n : {2, 3, 10, 100, 1000}) CHECK(scaled(n) < 0.5);
  CHECK(scaled(4096) > 1 / std::sqrt(2 * M_PI));
}

TEST_CASE("closed-form bounds bracket the exact m_N") {
  for (int n : {2, 3, 5, 10, 33, 100, 257, 1000, 4096, 5000}) {
    const double exact = solvers::to_double(proofs_check::max_mean_abs_deviation(n).value);
    INFO("N = " << n);
    CHECK(proofs_check::max_mean_abs_deviation_asymptotic_upper(n) >= exact);
    CHECK(proofs_check::max_mean_abs_deviation_upper(n, 0) >= exact);
    CHECK(proofs_check::max_mean_abs_deviation_lower(n, 0) <= exact);
    CHECK(proofs_check::max_mean_abs_deviation_lower(n, 0) >= exact * (1 - 1e-6));
    CHECK(proofs_check::max_mean_abs_deviation_upper(n) >= exact);
    CHECK(proofs_check::max_mean_abs_deviation_lower(n) <= exact);
  }
  // The closed form is sharp asymptotically: within 1e-4 relative at N = 1e5.
  const double a = proofs_check::max_mean_abs_deviation_asymptotic_upper(100000);
  CHECK(a * std::sqrt(1e5) == doctest::Approx(1 / std::sqrt(2 * M_PI)).epsilon(1e-4));
}
