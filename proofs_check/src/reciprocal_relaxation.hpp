// A convex relaxation of the three-state least-squares objective built on
// the reciprocal of the flux, for the branch and bound of fit_optimality.cpp.
//
// Where both rectified rates are positive (paper eq. 2; the tree theorem,
// REFERENCES.md),
//   G = 1/F = 1/a + 1/c + e + b/(a c),   e = 1/d,
// with a = a.p + a.s H and c = c.p + c.s H affine in the parameters. In the
// variables (a.p, a.s, b, c.p, c.s, e) and for a fixed b >= 0 every term is
// convex: 1/x for x > 0, 1/(x y) for x, y > 0 (Hessian determinant
// 3/(x y)^4), e linear, each of an affine map. So each point's flux
// F_m = 1/G_m is bounded
//   above by 1/Gc_m(theta), Gc_m convex and <= G_m on the box;
//   below by 1/A_m(theta),  A_m affine and >= G_m on the box,
// where Gc_m = G_m when b is a point, else b W (W = 1/(a c)) is replaced by
// a McCormick underestimator in (b, W) (McCormick, "Computability of global
// solutions to factorable nonconvex programs", Math. Programming 10, 1976),
// which stays convex; and A_m takes the secants of 1/a and 1/c over their
// ranges on the box (the concave envelope of a convex function of one
// variable), a plane through three corners above 1/(a c) on the rectangle
// of (a, c) (the concave envelope is the smaller of two such planes), and
// for a free b McCormick's overestimator of b times that plane. With the
// target's enclosure Y_m = [y_lo, y_hi],
//   dist(F_m, Y_m)^2 >= psi_up(Gc_m(theta)) + psi_dn(A_m(theta)),
//   psi_up(G) = (y_lo - 1/G)_+^2  (F <= 1/Gc: F too low),
//   psi_dn(A) = (1/A - y_hi)_+^2  (F >= 1/A: F too high),
// at most one of them positive. psi_dn is convex and nonincreasing on A > 0;
// psi_up is nondecreasing, convex up to G = 3/(2 y_lo) and concave beyond,
// so beyond a point T it is replaced by its tangent at T, T chosen so that
// the line stays below psi_up at the largest value of Gc on the box (a
// convex minorant on the range of Gc). A nondecreasing convex function of a
// convex one, and a convex function of an affine one, are convex. Each
// point's term is the larger of w_m (psi_up + psi_dn) and its natural term
// w_m dist(F_m(box), Y_m)^2 (a constant), convex as the larger of two convex
// functions, so the relaxation is never weaker than the natural bound:
//   Psi(theta) = sum_m max(nat_m, w_m (psi_up(Gc_m) + psi_dn(A_m))).
// It keeps how every point's flux depends on all the parameters, which the
// per-point ranges of the natural bound lose, on boxes too large for the
// remainders of the Taylor models (lsq_relaxation.hpp).
//
// A rate that may vanish on the box (p + s H straddles 0): max(0, l) is
// replaced by a concave overestimator, the secant of max(0, l) over the
// range of l plus delta > 0 (delta keeps Gc bounded on the box, so that
// psi_up's tangent continuation stays informative), which keeps Gc a convex
// underestimator of 1/F; the lower side is dropped (F may be 0). Where a or
// c is 0 on the whole box, F = 0 and the point's natural term is exact; a
// point whose rate may vanish and whose target is 0 (psi_up = 0 there, the
// lower side off) is its natural term too. A term that cannot be enclosed
// at the solver's point (not finite or not positive: a rate's range of
// [.., 0] up to rounding) is replaced by its natural term, a constant below
// it, which keeps the sum a convex minorant of f on the box.
//
// Psi is minimized by projected Newton in double; its minimum is bounded
// rigorously by convexity: Psi(theta) >= Psi(t*) + g . (theta - t*) for a
// subgradient g at the computed point t*, with Psi(t*) and g enclosed in
// interval arithmetic with outward rounding (as in lsq_relaxation.hpp). An
// inexact t* only lowers the bound. This is the convex lower-bounding step
// of spatial branch and bound for factorable problems (Tawarmalani and
// Sahinidis, "Convexification and Global Optimization in Continuous and
// Mixed-Integer Nonlinear Programming", Kluwer 2002), here in the
// coordinates where the flux's reciprocal is convex.
#pragma once
#include <array>
#include <vector>

#include "outward.hpp"

namespace ctmc::proofs_check {

// One data point: H_m, the target y_m = alpha phi(H_m) and the weight
// w_m / W, all enclosed.
struct FitPoint {
  outward::I h, y, w;
};

// A rigorous lower bound (>= 0) of sum_m w_m (F_m(theta) - y_m)^2 over the
// box X of three-state parameters [a.p, a.s, b, c.p, c.s, d] (b, d > 0);
// natural[m]: a lower bound of point m's term over X (its natural term,
// w_m dist(F_m(X), y_m)^2 rounded down, which the caller has at hand).
// edge_terms: a point whose relaxed term cannot be enclosed at the solver's
// point (a rate whose range on the box is 0 up to rounding, e.g. p + s H at
// H = 0 with p's upper end 0) keeps its natural term; off: such a point
// makes the bound 0 for the whole box (bench_certificates' baseline).
// floor: a bound of f over X the caller has already; where the relaxation's
// minimum is seen to lie below it, the solve stops and returns 0.
// point (if given): where the solve starts, clamped into the box (entries
// that are NaN: the box's centre), and on return where it ended (a point of
// the box), in the relaxation's variables (d replaced by e = 1/d): a box
// split from this one starts at its parent's solution, which saves Newton
// steps; the bound is rigorous from any start.
using RelaxationPoint = std::array<double, 6>;
double reciprocal_bound(const std::array<outward::I, 6>& X, const std::vector<FitPoint>& points,
                        const std::vector<double>& natural, bool edge_terms = true, double floor = 0,
                        RelaxationPoint* point = nullptr);

}  // namespace ctmc::proofs_check
