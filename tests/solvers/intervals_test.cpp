// Confidence intervals (ctmc/solvers/intervals.hpp) against other formulas:
// Clopper-Pearson limits as Beta quantiles (Boost.Math's ibeta_inv in 60-digit
// MPFR, not the binomial sums the code bisects), the closed forms of the
// k = 0 and k = n limits, published values, and the t and Welch intervals
// from Boost.Math's Student-t quantile in MPFR. Each returned interval must
// contain the reference and be tight: within a few ulps of it.
#include <doctest/doctest.h>

#include <boost/math/distributions/students_t.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <boost/multiprecision/mpfr.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "ctmc/solvers/intervals.hpp"

namespace {

namespace bmp = boost::multiprecision;
using M = bmp::number<bmp::mpfr_float_backend<60>, bmp::et_off>;
using ctmc::solvers::ConfidenceInterval;
using ctmc::solvers::Sides;

// lo is at most the reference and within `ulps` of it; hi likewise above.
// An interval centre -/+ t se carries the one-ulp widening of t at the
// scale of its terms, not of a smaller end (cancellation): `scale` then
// names that size.
void check_encloses(const ConfidenceInterval& got, const M& ref_lo, const M& ref_hi, int ulps = 4, double scale = 0) {
  CHECK(M(got.lo) <= ref_lo);
  CHECK(M(got.hi) >= ref_hi);
  const double lo = ref_lo.convert_to<double>(), hi = ref_hi.convert_to<double>();
  const double eps = std::numeric_limits<double>::epsilon();
  CHECK(got.lo >= lo - ulps * eps * std::max(std::abs(lo), scale) - 1e-300);
  CHECK(got.hi <= hi + ulps * eps * std::max(std::abs(hi), scale) + 1e-300);
}

// Clopper-Pearson as Beta quantiles: lo = B^-1(a; k, n - k + 1),
// hi = B^-1(1 - a; k + 1, n - k).
M cp_lower(unsigned k, unsigned n, const M& a) { return k == 0 ? M(0) : boost::math::ibeta_inv(M(k), M(n - k + 1), a); }
M cp_upper(unsigned k, unsigned n, const M& a) {
  return k == n ? M(1) : boost::math::ibeta_inv(M(k + 1), M(n - k), 1 - a);
}

M t_quantile(double dof, const M& upper_tail) {
  return boost::math::quantile(boost::math::complement(boost::math::students_t_distribution<M>(M(dof)), upper_tail));
}

}  // namespace

TEST_CASE("binomial_interval: Clopper-Pearson against Beta quantiles, closed forms and published values") {
  using ctmc::solvers::binomial_interval;
  // Published: 5 of 10 at 95% gives [0.1871, 0.8129] (e.g. Agresti & Coull
  // 1998, Table 1's exact interval).
  const ConfidenceInterval half = binomial_interval(5, 10, 0.95);
  CHECK(half.lo == doctest::Approx(0.187086).epsilon(1e-5));
  CHECK(half.hi == doctest::Approx(0.812914).epsilon(1e-5));
  // k = 0: hi = 1 - (a/2)^(1/n); k = n: lo = (a/2)^(1/n).
  for (unsigned n : {1u, 7u, 100u, 5000u}) {
    const M a = (1 - M(0.95)) / 2;  // the tails of the double 0.95, as the code takes them
    const M closed = 1 - bmp::pow(a, M(1) / M(n));
    check_encloses(binomial_interval(0, n, 0.95), M(0), closed);
    check_encloses(binomial_interval(n, n, 0.95), 1 - closed, M(1));
  }
  for (unsigned n : {2u, 13u, 100u, 1000u, 10000u})
    for (unsigned k : {1u, n / 3, n / 2, n - 1}) {
      CAPTURE(n);
      CAPTURE(k);
      for (double c : {0.9, 0.95, 0.999}) {
        CAPTURE(c);
        const M a = (1 - M(c)) / 2;
        check_encloses(binomial_interval(k, n, c), cp_lower(k, n, a), cp_upper(k, n, a));
        // One-sided: all of 1 - c in the one tail.
        const ConfidenceInterval up = binomial_interval(k, n, c, Sides::Upper);
        CHECK(up.lo == 0);
        check_encloses({0, up.hi}, M(0), cp_upper(k, n, 1 - M(c)));
        const ConfidenceInterval low = binomial_interval(k, n, c, Sides::Lower);
        CHECK(low.hi == 1);
        check_encloses({low.lo, 1}, cp_lower(k, n, 1 - M(c)), M(1));
      }
    }
  CHECK_THROWS_AS(binomial_interval(3, 2, 0.95), std::domain_error);
  CHECK_THROWS_AS(binomial_interval(0, 0, 0.95), std::domain_error);
  CHECK_THROWS_AS(binomial_interval(1, 2, 1.0), std::domain_error);
  CHECK_THROWS_AS(binomial_interval(1, 2, std::nan("")), std::domain_error);
}

TEST_CASE("paired_difference_interval: conditional on the discordant items, m (2 pi - 1) / n") {
  using ctmc::solvers::paired_difference_interval;
  using ctmc::solvers::PairedCounts;
  // 30 items only A got right, 10 only B, of 1000: difference 2 pp.
  const PairedCounts c{30, 10, 1000};
  CHECK(c.difference() == doctest::Approx(0.02));
  const M a = (1 - M(0.95)) / 2, scale = M(40) / M(1000);
  const ConfidenceInterval d = paired_difference_interval(c, 0.95);
  check_encloses(d, scale * (2 * cp_lower(30, 40, a) - 1), scale * (2 * cp_upper(30, 40, a) - 1));
  CHECK(d.contains(0.02));
  CHECK(d.lo > 0);  // 30 against 10 decides that A is better at 95%
  // 6 against 4 of 100 does not.
  CHECK(paired_difference_interval({6, 4, 100}, 0.95).contains(0));
  // No discordant item: the two agree everywhere.
  const ConfidenceInterval same = paired_difference_interval({0, 0, 50}, 0.95);
  CHECK(same.lo == 0);
  CHECK(same.hi == 0);
  // One-sided upper bound: 1 - c in the upper tail.
  const ConfidenceInterval up = paired_difference_interval(c, 0.95, Sides::Upper);
  CHECK(up.lo == doctest::Approx(-0.04));
  check_encloses({-0.04, up.hi}, M(-0.04), scale * (2 * cp_upper(30, 40, 1 - M(0.95)) - 1));
  CHECK_THROWS_AS(paired_difference_interval({60, 50, 100}, 0.95), std::domain_error);
  CHECK_THROWS_AS(paired_difference_interval({0, 0, 0}, 0.95), std::domain_error);
}

TEST_CASE("mean_interval: Student's t against Boost.Math's quantile; one value bounds nothing") {
  using ctmc::solvers::mean_interval;
  const std::vector<double> v{1, 2, 3, 4, 5};
  // mean 3, s^2 = 2.5, se = sqrt(0.5); t(4, 0.025) = 2.7764451051977943.
  const M se = bmp::sqrt(M(0.5)), t = t_quantile(4, (1 - M(0.95)) / 2);
  CHECK(t_quantile(4, M(0.025)).convert_to<double>() == doctest::Approx(2.7764451051977943).epsilon(1e-15));
  check_encloses(mean_interval(v, 0.95), 3 - t * se, 3 + t * se);
  const ConfidenceInterval up = mean_interval(v, 0.95, Sides::Upper);
  CHECK(std::isinf(up.lo));
  check_encloses({-1e300, up.hi}, M(-1e300), 3 + t_quantile(4, 1 - M(0.95)) * se);
  const std::vector<double> one{0.5};
  CHECK(std::isinf(mean_interval(one, 0.95).lo));
  CHECK(std::isinf(mean_interval(one, 0.95).hi));
  const std::vector<double> bad{1, std::nan("")};
  CHECK_THROWS_AS(mean_interval(bad, 0.95), std::domain_error);
}

TEST_CASE("standard_error_interval: estimate -/+ t(dof) se against Boost.Math; dof rounded down; edge cases") {
  using ctmc::solvers::standard_error_interval;
  // 1.5 -/+ t(399) 0.4 at 95%, and dof 399.7 reads as 399.
  const M t = t_quantile(399, (1 - M(0.95)) / 2);
  check_encloses(standard_error_interval(1.5, 0.4, 399, 0.95), 1.5 - t * M(0.4), 1.5 + t * M(0.4), 4, 1.5);
  check_encloses(standard_error_interval(1.5, 0.4, 399.7, 0.95), 1.5 - t * M(0.4), 1.5 + t * M(0.4), 4, 1.5);
  const ConfidenceInterval up = standard_error_interval(-2, 1, 9, 0.9, Sides::Upper);
  CHECK(std::isinf(up.lo));
  check_encloses({-1e300, up.hi}, M(-1e300), -2 + t_quantile(9, 1 - M(0.9)), 4, 2);
  CHECK(standard_error_interval(0.25, 0, 10, 0.95).lo == 0.25);
  CHECK(standard_error_interval(0.25, 0, 10, 0.95).hi == 0.25);
  CHECK(std::isinf(standard_error_interval(0.25, std::numeric_limits<double>::infinity(), 10, 0.95).hi));
  CHECK_THROWS_AS(standard_error_interval(0.25, -1, 10, 0.95), std::domain_error);
  CHECK_THROWS_AS(standard_error_interval(0.25, 1, 0.5, 0.95), std::domain_error);
}

TEST_CASE("welch_interval: unequal variances, Welch-Satterthwaite degrees of freedom rounded down") {
  using ctmc::solvers::welch_interval;
  const std::vector<double> a{27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4};
  const std::vector<double> b{27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4};
  // The reference from the moments in MPFR by the textbook formula.
  auto moments = [](const std::vector<double>& v) {
    M s = 0;
    for (double x : v) s += M(x);
    const M mean = s / M(v.size());
    M ss = 0;
    for (double x : v) ss += (M(x) - mean) * (M(x) - mean);
    return std::pair<M, M>{mean, ss / M(v.size() - 1) / M(v.size())};
  };
  const auto [ma, va] = moments(a);
  const auto [mb, vb] = moments(b);
  const M nu = (va + vb) * (va + vb) / (va * va / 14 + vb * vb / 14);
  CHECK(nu.convert_to<double>() == doctest::Approx(24.9885).epsilon(1e-4));  // Welch's example: 24.99
  const M t = t_quantile(std::floor(nu.convert_to<double>()), (1 - M(0.95)) / 2);
  const ConfidenceInterval d = welch_interval(a, b, 0.95);
  check_encloses(d, ma - mb - t * bmp::sqrt(va + vb), ma - mb + t * bmp::sqrt(va + vb), 4,
                 (bmp::abs(ma - mb) + t * bmp::sqrt(va + vb)).convert_to<double>());
  CHECK(d.hi < 0);  // the example's difference is significant at 5%
  // No spread on either side: the point difference.
  const std::vector<double> c1{2, 2, 2}, c2{1.5, 1.5};
  CHECK(welch_interval(c1, c2, 0.95).lo == 0.5);
  CHECK(welch_interval(c1, c2, 0.95).hi == 0.5);
  const std::vector<double> one{1};
  CHECK(std::isinf(welch_interval(one, b, 0.95).hi));
}
