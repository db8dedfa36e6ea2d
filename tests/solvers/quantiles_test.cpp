// The normal and Student-t upper quantiles (ctmc/solvers/quantiles.hpp)
// against tail probabilities from other code, in 60-digit MPFR: the normal
// tail from MPFR's erfc through Boost.Multiprecision, the Student-t tail from
// Boost.Math's incomplete beta function (not the finite sums the quantile
// solves with). Each returned double q must be the correctly rounded
// quantile: the true quantile lies between q - ulp/2 and q + ulp/2, so the
// tail at q - ulp/2 is above the requested probability and the tail at
// q + ulp/2 below it.
#include <doctest/doctest.h>

#include <boost/math/distributions/students_t.hpp>
#include <boost/multiprecision/mpfr.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include "ctmc/solvers/quantiles.hpp"

namespace {

namespace bmp = boost::multiprecision;
using M = bmp::number<bmp::mpfr_float_backend<60>, bmp::et_off>;
using Tail = std::function<M(const M&)>;

M normal_tail(const M& x) { return bmp::erfc(x / bmp::sqrt(M(2))) / 2; }

Tail students_t_tail(double nu) {
  return [nu](const M& x) {
    return boost::math::cdf(boost::math::complement(boost::math::students_t_distribution<M>(M(nu)), x));
  };
}

void check_correctly_rounded(double q, double p, const Tail& tail) {
  CAPTURE(q);
  CAPTURE(p);
  const double ulp = std::nextafter(std::fabs(q), std::numeric_limits<double>::infinity()) - std::fabs(q);
  CHECK(tail(M(q) - M(ulp) / 2) > M(p));
  CHECK(tail(M(q) + M(ulp) / 2) < M(p));
}

constexpr double kTails[] = {0.9, 0.5 + 0x1p-53, 0.5 - 0x1p-54, 0.4, 0.1, 0.025, 1e-3, 2.5e-4, 1e-6, 1e-12};

}  // namespace

TEST_CASE("normal_upper_quantile is the correctly rounded quantile") {
  for (double p : kTails) check_correctly_rounded(ctmc::solvers::normal_upper_quantile(p), p, normal_tail);
  // The textbook value 1.959963984540054235524594430520551527955550..., rounded to double.
  CHECK(ctmc::solvers::normal_upper_quantile(0.025) == 1.9599639845400543);
  CHECK(ctmc::solvers::normal_upper_quantile(0.5) == 0.0);
  CHECK(ctmc::solvers::students_t_upper_quantile(3, 0.5) == 0.0);
}

TEST_CASE("students_t_upper_quantile is the correctly rounded quantile") {
  for (double nu : {1.0, 2.0, 3.0, 4.0, 9.0, 10.0, 31.0, 100.0})
    for (double p : kTails) {
      CAPTURE(nu);
      check_correctly_rounded(ctmc::solvers::students_t_upper_quantile(nu, p), p, students_t_tail(nu));
    }
}

TEST_CASE("students_t_upper_quantile tends to the normal one as the degrees of freedom grow") {
  // t_nu = z + (z^3 + z) / (4 nu) + O(nu^-2).
  for (double p : {0.025, 1e-3}) {
    const double z = ctmc::solvers::normal_upper_quantile(p);
    const double t = ctmc::solvers::students_t_upper_quantile(1e4, p);
    CHECK(t - z == doctest::Approx((z * z * z + z) / 4e4).epsilon(2e-3));
  }
}

TEST_CASE("the quantiles refuse probabilities outside (0, 1) and bad degrees of freedom") {
  CHECK_THROWS_AS(ctmc::solvers::normal_upper_quantile(0), std::domain_error);
  CHECK_THROWS_AS(ctmc::solvers::normal_upper_quantile(1), std::domain_error);
  CHECK_THROWS_AS(ctmc::solvers::normal_upper_quantile(std::nan("")), std::domain_error);
  CHECK_THROWS_AS(ctmc::solvers::students_t_upper_quantile(0, 0.1), std::domain_error);
  CHECK_THROWS_AS(ctmc::solvers::students_t_upper_quantile(2.5, 0.1), std::domain_error);
  CHECK_THROWS_AS(ctmc::solvers::students_t_upper_quantile(2e6, 0.1), std::domain_error);
  CHECK_THROWS_AS(ctmc::solvers::students_t_upper_quantile(std::nan(""), 0.1), std::domain_error);
}
