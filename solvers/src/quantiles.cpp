#include "ctmc/solvers/quantiles.hpp"

#include <boost/multiprecision/mpfr.hpp>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ctmc::solvers {
namespace {

namespace bmp = boost::multiprecision;
using Mp = bmp::number<bmp::mpfr_float_backend<100>, bmp::et_off>;

// Bisection steps after bracketing: each halves the bracket, which starts
// within a factor 2 of the quantile (or at [-1, 1]); 400 take it far below
// the 100 digits' resolution.
constexpr int kBisections = 400;

void check_tail(double upper_tail, const char* what) {
  if (!(upper_tail > 0 && upper_tail < 1))
    throw std::domain_error(std::string(what) + ": upper tail probability " + std::to_string(upper_tail) +
                            " is not in (0, 1)");
}

// The x with tail(x) = p, tail decreasing from 1 to 0: a bracket doubled
// outwards from [-1, 1], then bisection, all in MPFR.
// p = 1/2 gives 0 by symmetry; the bisection would stop near 1e-100 (the tail
// there is 1/2 to 100 digits). Any other double p is at least 2^-54 from 1/2,
// so its quantile is at least about 1e-16 in size and found to 50 digits.
template <class Tail>
double solve_upper_tail(const Tail& tail, double p) {
  if (p == 0.5) return 0.0;
  const Mp target(p);
  Mp lo(-1), hi(1);
  while (tail(lo) < target) lo *= 2;
  while (tail(hi) > target) hi *= 2;
  for (int i = 0; i < kBisections; ++i) {
    const Mp mid = (lo + hi) / 2;
    if (mid == lo || mid == hi) break;
    (tail(mid) > target ? lo : hi) = mid;
  }
  return Mp((lo + hi) / 2).convert_to<double>();
}

Mp normal_tail(const Mp& x) { return bmp::erfc(x / bmp::sqrt(Mp(2))) / 2; }

// A(x|nu) = P(|T| < x) signed (odd in x), Abramowitz & Stegun 26.7.3-4 with
// theta = atan(x / sqrt nu), s = sin theta, c = cos theta:
//   nu odd:  A = (2/pi) (theta + s c (1 + (2/3) c^2 + (2 4)/(3 5) c^4 + ...
//                                      + (2 4 ... (nu-3))/(3 5 ... (nu-2)) c^(nu-3)))
//            (nu = 1: A = 2 theta / pi)
//   nu even: A = s (1 + (1/2) c^2 + (1 3)/(2 4) c^4 + ... + (1 3 ... (nu-3))/(2 4 ... (nu-2)) c^(nu-2))
Mp students_t_tail(const Mp& x, long nu) {
  const Mp theta = bmp::atan(x / bmp::sqrt(Mp(nu)));
  const Mp s = bmp::sin(theta), c = bmp::cos(theta), c2 = c * c;
  Mp sum = 1, term = 1;
  Mp a;
  if (nu % 2 == 1) {
    for (long k = 2; k <= nu - 3; k += 2) {
      term *= c2 * k / (k + 1);
      sum += term;
    }
    const Mp pi = 4 * bmp::atan(Mp(1));
    a = 2 * (nu == 1 ? theta : Mp(theta + s * c * sum)) / pi;
  } else {
    for (long k = 1; k <= nu - 3; k += 2) {
      term *= c2 * k / (k + 1);
      sum += term;
    }
    a = s * sum;
  }
  return (1 - a) / 2;
}

}  // namespace

double normal_upper_quantile(double upper_tail) {
  check_tail(upper_tail, "normal_upper_quantile");
  return solve_upper_tail(normal_tail, upper_tail);
}

double students_t_upper_quantile(double dof, double upper_tail) {
  check_tail(upper_tail, "students_t_upper_quantile");
  if (!(dof >= 1 && dof <= 1e6 && dof == std::floor(dof)))
    throw std::domain_error("students_t_upper_quantile: degrees of freedom " + std::to_string(dof) +
                            " is not a whole number from 1 to 10^6");
  const long nu = static_cast<long>(dof);
  return solve_upper_tail([nu](const Mp& x) { return students_t_tail(x, nu); }, upper_tail);
}

}  // namespace ctmc::solvers
