// Certified global optimality of least-squares fits in the small families
// (issue 20): a rigorous lower bound on
//   f(theta) = sum_m w_m (F_theta(H_m) - alpha phi(H_m))^2 / sum_m w_m
// (paper eq. 3 on the fit's points) over the whole parameter box of the fit,
// by interval branch and bound. With the fit's MSE as the incumbent, the gap
// MSE / lower_bound - 1 says how far the fit can be from the global optimum.
//
// Families (fit_flux.hpp's parameter order):
//   two-state    [a.p, a.s, d]            F = a d / (a + d)
//   three-state  [a.p, a.s, b, c.p, c.s, d] F = a c d / (d (a + b + c) + a c)  (eq. 2)
// with a = max(0, a.p + a.s H), c = max(0, c.p + c.s H). Both closed forms
// are monotone in every rate (increasing in a, c, d; decreasing in b), and a
// rectified-affine rate over a box of (p, s) at fixed H takes exactly the
// range of p + s H, so the range of each F_theta(H_m) over a box is exact.
//
// Lower bound of f over a box X (the larger of two):
//   - natural: sum_m w_m dist(y_m, F(H_m; X))^2 / W, each term's exact minimum;
//   - mean-value form: f(c) + sum_k min over X_k of g_k(X) (theta_k - c_k), c
//     the box centre and g(X) an enclosure of the gradient over X (for the
//     rectifier the interval [0, 1] of one-sided slopes where a box straddles
//     its kink, which contains every directional derivative of the Lipschitz
//     objective along a segment). Its error shrinks quadratically with the
//     box, which is what makes 0.1% reachable.
// A coordinate whose partial derivative has one sign over the whole box is
// fixed at the box's face where the minimum must lie (monotonicity test).
// Boxes are processed best-first (smallest lower bound), split at the middle
// of the coordinate with the largest width x |g_k|; a box is discarded once
// its bound is within rel_gap of the incumbent. Arithmetic: double intervals
// with outward rounding; the targets alpha phi(H_m) and the points H_m are
// MPFI enclosures, so the bound is rigorous.
//
// The three-state family is not identifiable (a one-parameter continuum of
// parameter vectors gives the same curve where both a and c depend on H, two
// where c is constant), so its minimizers form a curve or a surface that
// the boxes must cover; the budget (max_boxes, deterministic) bounds the work
// and the result states the bound reached.
#pragma once
#include <cstdint>
#include <vector>

#include "ctmc/activations/activation.hpp"
#include "ctmc/solvers/scalar.hpp"

namespace ctmc::proofs_check {

enum class ClosedFamily { TwoState, ThreeState };

struct OptimalityProblem {
  ClosedFamily family = ClosedFamily::TwoState;
  std::vector<solvers::Rational> h;  // the points H_m
  std::vector<solvers::Rational> w;  // their weights; empty: 1 each
  // The targets y_m = alpha phi(H_m), enclosed from the activation; or, if
  // `y` is not empty, exactly these values (one per point).
  activations::Activation activation;
  solvers::Rational alpha{1};
  std::vector<solvers::Rational> y;
  std::vector<double> lower, upper;  // the parameter box, in family order
};

struct OptimalityOptions {
  double rel_gap = 1e-3;             // discard boxes within 0.1% of the incumbent
  std::int64_t max_boxes = 1000000;  // budget of boxes bounded
  unsigned precision = 128;          // MPFI bits of the targets' enclosures
  // The mean-value bound and the monotonicity test (off: the natural bound
  // alone, the benchmark's baseline).
  bool mean_value = true;
};

struct OptimalityResult {
  double lower_bound = 0;   // proven: f(theta) >= lower_bound on the whole box
  double incumbent = 0;     // min(known MSE, best objective seen at a box centre; an upper bound)
  std::vector<double> best_centre;  // where that centre value was seen (empty: none beat the known MSE)
  double gap = 0;           // known MSE / lower_bound - 1 (inf when lower_bound is 0)
  bool certified = false;   // gap <= rel_gap: the known fit is globally optimal to rel_gap
  std::int64_t boxes = 0;   // boxes bounded
  bool exhausted = false;   // stopped by the budget
};

// known_mse: the fit's MSE (an upper bound of the minimum, the incumbent).
// Throws InputError for a box of the wrong size or with lower > upper, a
// constant rate whose lower bound is not > 0, no points, or weights or
// targets of another count.
OptimalityResult certify_optimality(const OptimalityProblem& p, double known_mse, const OptimalityOptions& opt = {});

// The parameter count of a family (3 or 6).
std::size_t parameter_count(ClosedFamily f);

}  // namespace ctmc::proofs_check
