// Enclosures of the closed-form fluxes of the two- and three-state families
// and of their parameter gradients over a box, at one input H, for the
// branch and bound of fit_optimality.cpp.
//
//   two-state    F = a d / (a + d)                          (DESIGN.md section 4)
//   three-state  F = a c d / D,  D = d (a + b + c) + a c     (paper eq. 2)
//
// with a = max(0, a.p + a.s H), c = max(0, c.p + c.s H) and b, d > 0.
// Every factor below is monotone in each rate separately (the direction of
// one may depend on the others), so its range over a box of rates is taken
// at corners of the box and is exact up to rounding; the gradient is a
// product of such factors (an enclosure, no longer exact):
//   three-state, with F_a = c d / D, F_c = a d / D, F_d = a c / D,
//   P_a = d (b + c) / D, P_c = d (a + b) / D:
//     dF/da = F_a P_a,  dF/dc = F_c P_c,  dF/db = -F_a F_c,  dF/dd = F_d^2;
//   two-state: dF/da = (d / (a + d))^2, dF/dd = (a / (a + d))^2.
// Monotonicity (signs of the partial derivatives):
//   F_a: up in c, d; down in a, b.      F_c: up in a, d; down in b, c.
//   F_d: up in a, c; down in b, d.
//   P_a: down in a, up in b, d; in c its sign is that of d - b
//        (D - (b + c)(a + d) = a (d - b)).  P_c: the same with a <-> c.
// A rectified rate enters the parameter gradient through its slope chi =
// d rate / d(p + s H): 1 where p + s H > 0 on the whole box, 0 where <= 0,
// [0, 1] where the box straddles the kink (the Clarke gradient there).
// `closed`: also [0, 1] where p + s H reaches 0 only at the box's edge
// (hi = 0), so that the enclosure holds the one-sided slopes of every
// direction at every point of the closed box, also those leaving it (the
// monotonicity discard of fit_optimality.cpp needs them; the mean-value
// form, along segments inside the box, does not).
#pragma once
#include <algorithm>
#include <array>

#include "outward.hpp"

namespace ctmc::proofs_check::closed_flux {

using outward::I;
inline constexpr std::size_t kMaxParams = 6;

// Enclosures at one H: the flux's range and its gradient with respect to the
// family's parameters (fit_flux.hpp order).
struct FluxJacobian {
  I F;
  std::array<I, kMaxParams> dF;
};

struct Rate {
  I r, chi;
};
inline Rate rectified(I p, I s, I h, bool closed = false) {
  const I v = p + s * h;
  if (v.lo > 0) return {v, {1, 1}};
  if (v.hi < 0 || (v.hi == 0 && !closed)) return {{0, 0}, {0, 0}};
  return {outward::rectify(v), {0, 1}};
}

namespace detail {
using namespace outward;
// D = d (a + b + c) + a c at a point of nonnegative rates, rounded down / up.
inline double D_dn(double a, double b, double c, double d) {
  return add_dn(mul_dn(d, add_dn(add_dn(a, b), c)), mul_dn(a, c));
}
inline double D_up(double a, double b, double c, double d) {
  return add_up(mul_up(d, add_up(add_up(a, b), c)), mul_up(a, c));
}
// x y / D at a point, rounded down / up (D >= d b > 0).
inline double ratio_dn(double x, double y, double a, double b, double c, double d) {
  return div_dn(mul_dn(x, y), D_up(a, b, c, d));
}
inline double ratio_up(double x, double y, double a, double b, double c, double d) {
  return div_up(mul_up(x, y), D_dn(a, b, c, d));
}
// P = d (b + u) / D(a, b, c, d) where u is c (P_a) or a (P_c) and v the
// other rate; down in v, up in b and d, in u by the sign of d - b.
inline double P_dn(double u, double v, double b, double d) { return div_dn(mul_dn(d, add_dn(b, u)), D_up(v, b, u, d)); }
inline double P_up(double u, double v, double b, double d) { return div_up(mul_up(d, add_up(b, u)), D_dn(v, b, u, d)); }
inline I P_range(I u, I v, I b, I d) {
  return {std::min(P_dn(u.lo, v.hi, b.lo, d.lo), P_dn(u.hi, v.hi, b.lo, d.lo)),
          std::max(P_up(u.lo, v.lo, b.hi, d.hi), P_up(u.hi, v.lo, b.hi, d.hi))};
}
// Product of nonnegative intervals.
inline I mul_pos(I x, I y) { return {mul_dn(x.lo, y.lo), mul_up(x.hi, y.hi)}; }
}  // namespace detail

// Three-state, parameters [a.p, a.s, b, c.p, c.s, d].
inline FluxJacobian three_state(const std::array<I, kMaxParams>& X, I h, bool gradient, bool closed = false) {
  using namespace detail;
  const Rate ra = rectified(X[0], X[1], h, closed), rc = rectified(X[3], X[4], h, closed);
  const I a = ra.r, c = rc.r, b = X[2], d = X[5];
  FluxJacobian out;
  // F = a c d / D: up in a, c, d, down in b.
  out.F = {div_dn(mul_dn(mul_dn(a.lo, c.lo), d.lo), D_up(a.lo, b.hi, c.lo, d.lo)),
           div_up(mul_up(mul_up(a.hi, c.hi), d.hi), D_dn(a.hi, b.lo, c.hi, d.hi))};
  if (!gradient) return out;
  const I Fa = {ratio_dn(c.lo, d.lo, a.hi, b.hi, c.lo, d.lo), ratio_up(c.hi, d.hi, a.lo, b.lo, c.hi, d.hi)};
  const I Fc = {ratio_dn(a.lo, d.lo, a.lo, b.hi, c.hi, d.lo), ratio_up(a.hi, d.hi, a.hi, b.lo, c.lo, d.hi)};
  const I Fd = {ratio_dn(a.lo, c.lo, a.lo, b.hi, c.lo, d.hi), ratio_up(a.hi, c.hi, a.hi, b.lo, c.hi, d.lo)};
  const I dFda = mul_pos(Fa, P_range(c, a, b, d));
  const I dFdc = mul_pos(Fc, P_range(a, c, b, d));
  out.dF[0] = dFda * ra.chi;
  out.dF[1] = out.dF[0] * h;
  out.dF[2] = -mul_pos(Fa, Fc);
  out.dF[3] = dFdc * rc.chi;
  out.dF[4] = out.dF[3] * h;
  out.dF[5] = mul_pos(Fd, Fd);
  return out;
}

// Two-state, parameters [a.p, a.s, d].
inline FluxJacobian two_state(const std::array<I, kMaxParams>& X, I h, bool gradient, bool closed = false) {
  using namespace outward;
  const Rate ra = rectified(X[0], X[1], h, closed);
  const I a = ra.r, d = X[2];
  FluxJacobian out;
  // F = a d / (a + d): up in a and d.
  out.F = {div_dn(mul_dn(a.lo, d.lo), add_up(a.lo, d.lo)), div_up(mul_up(a.hi, d.hi), add_dn(a.hi, d.hi))};
  if (!gradient) return out;
  // d / (a + d): down in a, up in d; a / (a + d): up in a, down in d.
  const I Fa = {div_dn(d.lo, add_up(a.hi, d.lo)), div_up(d.hi, add_dn(a.lo, d.hi))};
  const I Fd = {div_dn(a.lo, add_up(a.lo, d.hi)), div_up(a.hi, add_dn(a.hi, d.lo))};
  out.dF[0] = detail::mul_pos(Fa, Fa) * ra.chi;
  out.dF[1] = out.dF[0] * h;
  out.dF[2] = detail::mul_pos(Fd, Fd);
  return out;
}

}  // namespace ctmc::proofs_check::closed_flux
