// Certified global optimality of least-squares fits in the small families
// a rigorous lower bound on
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
// Lower bound of f over a box X (the largest of these):
//   - natural: sum_m w_m dist(y_m, F(H_m; X))^2 / W, each term's exact minimum;
//   - mean-value form: f(c) + sum_k min over X_k of g_k(X) (theta_k - c_k), c
//     the box centre and g(X) an enclosure of the gradient over X (for the
//     rectifier the interval [0, 1] of one-sided slopes where a box straddles
//     its kink, which contains every directional derivative of the Lipschitz
//     objective along a segment). Its error shrinks quadratically with the
//     box, which is what makes 0.1% reachable;
//   - first-order Taylor models of each point's flux (Berz and Makino),
//     their least-squares problem bounded by convexity (lsq_relaxation.hpp),
//     on boxes near an optimum;
//   - three-state: a convex relaxation in the reciprocal of the flux, where
//     1/F = 1/a + 1/c + 1/d + b/(a c) is convex in the parameters with d
//     replaced by 1/d (reciprocal_relaxation.hpp), which keeps how every
//     point depends on all parameters on the larger boxes where the natural
//     bound and the Taylor models lose it.
// A coordinate whose partial derivative has one sign over the whole box is
// fixed at the box's face where the minimum must lie (monotonicity test);
// where that face is inside the domain searched (not on its boundary), the
// box holds no minimizer at all and is discarded (Hansen's monotonicity
// test; the derivative enclosure then holds every one-sided slope of the
// rectifiers at the box's edges, closed_flux.hpp).
// Boxes are processed best-first (smallest lower bound), a batch of the
// lowest at a time whose halves are bounded in parallel (the results go in
// in a fixed order: the same result on any number of threads; a search that
// closes splits every box whose bound is below the threshold, in whatever
// order, so the batch matters only where a budget stops the search or the
// incumbent improves inside a batch); a box is discarded once its bound is
// within rel_gap of the incumbent. The coordinate split is the one with the
// largest width x |g_k| where the mean-value bound gave the box's bound;
// where the natural bound did (a large box, whose gradient
// enclosure says little), the one whose range alone, the others at the
// centre, spreads the curve most (sum_m w_m |range of F(H_m)|). Where no
// coordinate spreads it (a rate vanishes at every point at the centre, e.g.
// a.s = 0 with a.p < 0), a coordinate that straddles 0 is cut there: halving
// a one-signed a.p never lifts such a box's bound, which stays at the forced
// term of the rate vanishing at H = 0 (for sigmoid 0.25 / 401 = 6.23e-4,
// below its optimum 9.7e-4). A range is
// cut at its middle, or at its geometric mean where it is positive and
// spans more than a factor 4 (the constant rates span decades). Arithmetic: double intervals
// with outward rounding; the targets alpha phi(H_m) and the points H_m are
// MPFI enclosures, so the bound is rigorous.
//
// The method is interval branch and bound for rigorous global optimization
// as in GlobSol (Kearfott, Rigorous Global Search, 1996) and IbexOpt
// (Trombettoni, Araya, Neveu and Chabert, 2011): best-first boxes, the
// incumbent's threshold, the monotonicity test and the mean-value form;
// first-order Taylor models (Berz and Makino, 1998) for the per-point
// fluxes; a convex relaxation as in spatial branch and bound (Tawarmalani
// and Sahinidis). It has no interval Newton or contraction step on the
// first-order conditions: the objective's optima sit on rate bounds and on
// the kinks of the rectifiers, where those conditions are not equations.
//
// The three-state family is not identifiable: a continuum of parameter
// vectors gives the same curve. It is quotiented out by searching only the
// faces of the box, which is exact: every curve that the box realizes is
// realized on a face where a.p, a.s, b, c.p or c.s is at an end of its range.
// Proof. Where a = 0 or c = 0, F = 0 whatever b (b > 0); elsewhere
// 1/F = 1/d + 1/a + 1/c + b/(a c). Rescaling a -> lam a, c -> mu c (lam,
// mu > 0; rectification commutes with it) and b -> nu b keeps F(H) for every
// H iff (1/lam - 1) c + (1/mu - 1) a + (nu/(lam mu) - 1) b = 0 as affine
// functions of H. Cases, for a point theta of the box:
//  - a or c is the zero function, or c = kappa a with kappa < 0: then
//    a c = 0 at every H, F = 0 everywhere, and b may take its lower end.
//  - a, c linearly independent: 1 = xi a + zeta c for unique xi, zeta, and
//    lam = 1/(1 - t b zeta), mu = 1/(1 - t b xi), nu = (1 + t) lam mu keeps
//    the curve for t > -1 with t b zeta < 1 and t b xi < 1.
//  - c = kappa a, kappa > 0: lam = 1/u, mu = 1/(kappa + 1 - kappa u),
//    nu = lam mu keeps the curve for 0 < u < 1 + 1/kappa.
// Running t (or u) down from 0 (from 1), the path is continuous and ends
// outside the box: either nu b -> 0, below b's lower end (> 0), or lam or mu
// -> infinity, beyond the ends of a's or c's (nonzero) coefficients. So it
// meets the boundary of the box, at a point where one of a.p, a.s, b, c.p,
// c.s (d is fixed along the path) is at an end: a point of the same curve,
// hence of the same objective. Where the box treats a and c alike, the swap
// a <-> c (F is symmetric in them) maps the c faces onto the a faces.
// The faces are 5-dimensional boxes; the budget (max_boxes, deterministic)
// bounds the work and the result states the bound reached.
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
  // Boxes are split `batch` at a time, best first, and their halves bounded
  // on `threads` threads (0: OpenMP's default); the results go in in a
  // fixed order, so the result depends on `batch`, never on `threads`.
  int threads = 1;
  int batch = 32;
  // The mean-value bound and the monotonicity test (off: the natural bound
  // alone, the benchmark's baseline).
  bool mean_value = true;
  // The first-order Taylor-model least-squares bound (off: the search as
  // it was before it, the benchmark's baseline for the three-state family).
  bool taylor = true;
  // Three-state: cut a range that reaches 0 towards it (off: at its middle,
  // the search as it was before; fit_optimality.cpp says why).
  bool zero_cuts = true;
  // Three-state: bound f on the faces of the box that hold a representative
  // of every curve (off: the whole box).
  bool faces = true;
  // Three-state: the convex relaxation in the reciprocal of the flux
  // (reciprocal_relaxation.hpp) where the other bounds leave a box open.
  bool reciprocal = true;
  // Three-state: in that relaxation, a point whose term cannot be enclosed
  // (a rate whose range on the box is 0 up to rounding, e.g. p + s H at a
  // data point H = 0 with p's upper end 0, the clipped ReLUs' boxes) keeps
  // its natural term (off: such a point makes the relaxation's bound 0 for
  // the whole box, bench_certificates' baseline).
  bool reciprocal_edge_terms = true;
  // Three-state: on a face that the swap a <-> c maps onto itself (b at an
  // end, when a and c have the same ranges), search only the half a.s <=
  // c.s, which holds a mirror image of every point.
  bool mirror = true;
  // Where no coordinate alone moves the curve at a large box's centre (a
  // rate vanishes at every point there), split a coordinate that straddles
  // 0 rather than the first one (off: the first one, the benchmark's
  // baseline, whose sigmoid bound stays at 0.25 / 401, the forced term of
  // H = 0, from 1.5e5 to at least 9e5 boxes).
  bool straddle_split = true;
  // Discard a box where a partial derivative of f has one sign over it and
  // points at a face of the box inside the search's domain (the face is not
  // on the domain's boundary): the box then holds no minimizer
  // (fit_optimality.cpp, monotone_discard). Off: that face is kept (the
  // box shrinks to it; bench_certificates' baseline).
  bool monotone_discard = true;
  // Three-state: a large box's split score of a rate's offset or slope is
  // also its spread with the other one at its end nearest 0 (the corner
  // where the rate is smallest), not only with the others at the centre
  // (off: the centre alone; bench_certificates' baseline).
  bool corner_split = true;
};

struct OptimalityResult {
  double lower_bound = 0;   // proven: f(theta) >= lower_bound on the whole box
  double incumbent = 0;     // min(known MSE, best objective seen at a box centre; an upper bound)
  std::vector<double> best_centre;  // where that centre value was seen (empty: none beat the known MSE)
  double gap = 0;           // known MSE / lower_bound - 1 (inf when lower_bound is 0)
  bool certified = false;   // gap <= rel_gap: the known fit is globally optimal to rel_gap
  double rel_gap = 0;       // the options' rel_gap, the gap the search worked to
  double seconds = 0;       // wall time of the search
  std::int64_t boxes = 0;   // boxes bounded
  bool exhausted = false;   // stopped by the budget
  // Every box accounted for: the root boxes (the box, or its faces) and the
  // two halves of every split box are each either pruned (bound above the
  // threshold, or a mirror image), or split, or left unsplittable (a point up to double
  // resolution; its bound counts), or still open at the end (its bound
  // counts): roots + 2 split = pruned + split + unsplittable + open.
  // A box the monotonicity test shrinks to a face is bounded again as the
  // same box (shrunk counts those steps; boxes counts every bounding).
  std::int64_t roots = 0, pruned = 0, split = 0, unsplittable = 0, open = 0, shrunk = 0;
  // Of the pruned boxes, those discarded as mirror images (a.s > c.s on a
  // face symmetric in a <-> c), whose minimum is attained in boxes kept.
  std::int64_t mirrored = 0;
  // Of the pruned boxes, those discarded by the monotonicity test: a
  // partial derivative of one sign pointing inside the domain, so that
  // the box holds no minimizer (OptimalityOptions::monotone_discard).
  std::int64_t discarded = 0;
};

// known_mse: the fit's MSE (an upper bound of the minimum, the incumbent).
// Throws InputError for a box of the wrong size or with lower > upper, a
// constant rate whose lower bound is not > 0, no points, or weights or
// targets of another count.
OptimalityResult certify_optimality(const OptimalityProblem& p, double known_mse, const OptimalityOptions& opt = {});

// The parameter count of a family (3 or 6).
std::size_t parameter_count(ClosedFamily f);

}  // namespace ctmc::proofs_check
