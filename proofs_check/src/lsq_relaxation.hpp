// The first-order Taylor-model bound of a least-squares objective over a box,
// for the branch and bound of fit_optimality.cpp.
//
// On a box X with centre c, each model value is enclosed by a first-order
// Taylor model (Berz and Makino, "Verified integration of ODEs and flows
// using differential algebraic methods on high-order Taylor models",
// Reliable Computing 4, 1998; here of order one): for theta = c + delta in X,
//   F_m(theta) = L_m + g_m . delta + e_m,   |e_m| <= R_m,
// with L_m ~ F_m(c), any slopes g_m (doubles; the midpoints of J_m(X) give
// the smallest remainder) and, by the mean-value theorem with an enclosure
// J_m(X) of the (Clarke) gradient over X,
//   R_m = |F_m(c) - L_m| + sum_k |J_mk(X) - g_mk| |delta_k|max.
// Then for every theta in X
//   f(theta) = sum_m w_m (F_m(theta) - y_m)^2
//           >= Phi(delta) = sum_m w_m dist(L_m + g_m . delta, [y_m - R_m, y_m + R_m])^2,
// and Phi is convex (a convex function of affine ones), so its minimum over
// the box of delta is a lower bound of f over X. Unlike the mean-value form
// f(c) + grad f(X) . delta, whose error is first order in the box width
// times the spread of the gradient, this keeps the Gauss-Newton part
// sum_m w_m (g_m . delta)^2 of the objective exactly and loses only the
// remainders R_m (second order), so the bound stays tight on boxes that are
// long in the sloppy directions of the fit -- the reason the mean-value
// bound needed so many boxes for the three-state family.
//
// The minimum is found by a projected Newton method (Bertsekas, "Projected
// Newton methods for optimization problems with simple constraints", SIAM J.
// Control Optim. 20, 1982) in double, and then bounded rigorously: for the
// convex Phi and any point delta*, Phi(delta) >= Phi(delta*) + grad
// Phi(delta*) . (delta - delta*), whose minimum over the box is evaluated in
// interval arithmetic with outward rounding. An inexact delta* only makes
// the bound smaller, never wrong.
#pragma once
#include <array>
#include <cstddef>
#include <vector>

#include "outward.hpp"

namespace ctmc::proofs_check {

inline constexpr std::size_t kMaxRelaxationVars = 6;
using SmallMatrix = std::array<std::array<double, kMaxRelaxationVars>, kMaxRelaxationVars>;
using SmallVector = std::array<double, kMaxRelaxationVars>;

// Solves (A + mu I) x = b for the symmetric positive semidefinite m x m
// block A by Cholesky, raising the jitter mu until the factorization goes
// through (a Newton direction only needs to be a descent direction); false
// when A is zero or not finite.
bool solve_spd(SmallMatrix A, SmallVector b, std::size_t m, SmallVector& x);

// Phi over the box delta_k in [lo_k, hi_k] (lo_k <= 0 <= hi_k), n <= 6
// variables, M terms. Fill the members, then call bound().
struct LsqRelaxation {
  std::size_t n = 0;
  std::vector<double> lo, hi;           // the box of delta (n)
  std::vector<double> L, g;             // L_m (M), g_m (M x n, row-major)
  std::vector<double> zlo, zhi;         // the dead zone of term m: [y_m.lo - R_m, y_m.hi + R_m], rounded outwards
  std::vector<double> w;                // w_m >= 0 (the lower end of its enclosure)

  // A rigorous lower bound of min over the box of Phi; *argmin (if not null)
  // receives the point delta* the bound was taken at.
  double bound(std::vector<double>* argmin = nullptr) const;
  // Phi(delta) in double (not rounded outwards: for deciding whether to
  // bound at all, Phi(0) being an upper bound of the minimum).
  double phi(const double* delta) const;
};

}  // namespace ctmc::proofs_check
