// Interval arithmetic in double with outward rounding, for the branch-and-
// bound certificates of fits (fit_optimality.cpp, chain_sup.cpp).
//
// Each operation is carried out in round-to-nearest and its ends are then
// moved one ulp outwards (the next double towards -inf / +inf, by its bit
// pattern): the exact result of an operation on doubles is within half an ulp
// of the rounded one, so the widened interval contains it. This is as rigorous as switching the rounding mode
// (Boost.Interval, MPFI) and needs no change of the floating-point
// environment, so it is safe in threads and under any compiler flags; the
// price is one ulp of extra width per operation, far below the tolerances
// the certificates work to (1e-3 relative). Infinite or NaN ends are never
// produced from finite inputs here except by division by an interval that
// contains 0, which callers avoid (denominators are bounded away from 0).
#pragma once
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ctmc/activations/activation_interval.hpp"
#include "ctmc/solvers/scalar.hpp"

namespace ctmc::proofs_check::outward {

// The next double below / above x (std::nextafter without its errno and
// generality; x is never NaN here). down(+inf) is the largest double, which
// is right for a rounded-up overflow.
inline double down(double x) {
  if (x == 0) return -std::numeric_limits<double>::denorm_min();
  if (x == -INFINITY) return x;
  const auto b = std::bit_cast<std::uint64_t>(x);
  return std::bit_cast<double>(x > 0 ? b - 1 : b + 1);
}
inline double up(double x) { return -down(-x); }

// Directed operations on nonnegative doubles (the rates and tree sums).
inline double mul_dn(double a, double b) { return std::max(0.0, down(a * b)); }
inline double mul_up(double a, double b) { return up(a * b); }
inline double add_dn(double a, double b) { return std::max(0.0, down(a + b)); }
inline double add_up(double a, double b) { return up(a + b); }
inline double div_dn(double a, double b) { return std::max(0.0, down(a / b)); }  // b > 0
inline double div_up(double a, double b) { return up(a / b); }                  // b > 0

struct I {
  double lo = 0, hi = 0;
  static I point(double x) { return {x, x}; }
  double mag() const { return std::max(std::fabs(lo), std::fabs(hi)); }  // max |x|
  // min |x| over the interval (0 when it contains 0).
  double mig() const { return lo > 0 ? lo : (hi < 0 ? -hi : 0.0); }
};

inline I operator+(I a, I b) { return {down(a.lo + b.lo), up(a.hi + b.hi)}; }
inline I operator-(I a, I b) { return {down(a.lo - b.hi), up(a.hi - b.lo)}; }
inline I operator-(I a) { return {-a.hi, -a.lo}; }
inline I operator*(I a, I b) {
  const double p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  return {down(std::min(std::min(p[0], p[1]), std::min(p[2], p[3]))),
          up(std::max(std::max(p[0], p[1]), std::max(p[2], p[3])))};
}
// b must not contain 0.
inline I operator/(I a, I b) {
  const double q[4] = {a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi};
  return {down(std::min(std::min(q[0], q[1]), std::min(q[2], q[3]))),
          up(std::max(std::max(q[0], q[1]), std::max(q[2], q[3])))};
}
// x^2 (tighter than x * x when x contains 0).
inline I sqr(I a) {
  const double m = a.mig(), M = a.mag();
  return {m == 0 ? 0.0 : down(m * m), up(M * M)};
}
// max(0, x).
inline I rectify(I a) { return {std::max(0.0, a.lo), std::max(0.0, a.hi)}; }
inline I hull(I a, I b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

// An enclosure of an exact rational.
inline I enclose(const solvers::Rational& q) {
  activations::Ivl x(64);
  activations::set_rational(x, q);
  return {x.lo(), x.hi()};
}
// An MPFI interval's ends, outwards.
inline I enclose(const activations::Ivl& x) { return {x.lo(), x.hi()}; }

}  // namespace ctmc::proofs_check::outward
