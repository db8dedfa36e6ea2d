#include "ctmc/proofs_check/fit_optimality.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <queue>
#include <utility>

#include "closed_flux.hpp"
#include "ctmc/activations/activation_interval.hpp"
#include "ctmc/core/errors.hpp"
#include "lsq_relaxation.hpp"
#include "reciprocal_relaxation.hpp"
#include "outward.hpp"

namespace ctmc::proofs_check {

namespace {

using closed_flux::FluxJacobian;
using closed_flux::kMaxParams;
using outward::I;
using Box = std::array<I, kMaxParams>;
// The split heuristic looks at every 4th point: enough to rank the
// coordinates, a quarter of the cost.
constexpr std::size_t kSpreadStride = 4;
// The Taylor-model bound is computed only where its objective at the centre,
// an upper bound of its minimum, reaches this fraction of the discard
// threshold: on larger boxes its remainders swamp it, and solving it there
// cost 1.6x the time per box for no change of the bound (bench_certificates).
constexpr double kTaylorFloor = 0.05;
// The split follows the Taylor bound's remainders only where that bound is
// this close to the threshold (a box near an optimum); elsewhere the
// range-spread rule, which ranks the coordinates of a large box better.
constexpr double kTaylorSplit = 0.5;
// Three-state cuts towards 0 (certify_optimality): ranges [0, x] wider than
// kZeroCutWidth are cut at x / kZeroCutRatio (8 gave a higher sigmoid bound
// than 32 at the same budget).
constexpr double kZeroCutWidth = 1;
constexpr double kZeroCutRatio = 8;

using Point = FitPoint;
constexpr RelaxationPoint kNoStart = {NAN, NAN, NAN, NAN, NAN, NAN};

// The bounds of f over one box, and what the split heuristic needs.
struct BoxBounds {
  double lower = 0;                    // the best of the bounds below
  double natural = 0, mean_value = 0, taylor = 0, reciprocal = 0;
  I centre_value;                      // f at the box centre
  std::array<I, kMaxParams> gradient;  // enclosure of grad f over the box
  // Per coordinate, how much of the Taylor bound's loss its width causes
  // (sum over the points of the loss times the coordinate's share of R_m).
  std::array<double, kMaxParams> taylor_loss{};
  std::vector<double> taylor_point;    // the centre plus delta*, in the box (empty: no Taylor bound)
  // In: where the reciprocal relaxation's solve starts (NaN: the centre);
  // out: where it ended (reciprocal_relaxation.hpp).
  RelaxationPoint reciprocal_point;
};

class Objective {
 public:
  Objective(const OptimalityProblem& p, unsigned precision) : family_(p.family) {
    solvers::Rational total = 0;
    for (std::size_t m = 0; m < p.h.size(); ++m) total += p.w.empty() ? solvers::Rational(1) : p.w[m];
    activations::Ivl x(precision), y(precision), alpha(precision);
    activations::set_rational(alpha, p.alpha);
    for (std::size_t m = 0; m < p.h.size(); ++m) {
      activations::set_rational(x, p.h[m]);
      if (p.y.empty()) {
        activations::eval_interval(p.activation, y, x);
        mpfi_mul(y, y, alpha);
      } else {
        activations::set_rational(y, p.y[m]);
      }
      points_.push_back({outward::enclose(x), outward::enclose(y),
                         outward::enclose(solvers::Rational((p.w.empty() ? solvers::Rational(1) : p.w[m]) / total))});
    }
    n_ = parameter_count(family_);
  }

  std::size_t size() const { return n_; }

  FluxJacobian flux(const Box& X, std::size_t m, bool gradient, bool closed = false) const {
    return family_ == ClosedFamily::TwoState ? closed_flux::two_state(X, points_[m].h, gradient, closed)
                                             : closed_flux::three_state(X, points_[m].h, gradient, closed);
  }

  // An enclosure of every one-sided partial derivative of f at every point
  // of the closed box X, in every direction, also those leaving X
  // (closed_flux.hpp's `closed` slopes): what the monotonicity discard needs.
  std::array<I, kMaxParams> closed_gradient(const Box& X) const {
    std::array<I, kMaxParams> g;
    g.fill(I{0, 0});
    for (std::size_t m = 0; m < points_.size(); ++m) {
      const FluxJacobian jx = flux(X, m, true, true);
      const I t = I::point(2) * points_[m].w * (jx.F - points_[m].y);
      for (std::size_t k = 0; k < n_; ++k) g[k] = g[k] + t * jx.dF[k];
    }
    return g;
  }

  // f at a point (a box of zero width), enclosed.
  I value(const Box& C) const {
    I f{0, 0};
    for (std::size_t m = 0; m < points_.size(); ++m) f = f + points_[m].w * sqr(flux(C, m, false).F - points_[m].y);
    return f;
  }

  // The bounds of f over X with centre C (a point of X); `taylor`: also the
  // first-order Taylor-model bound (lsq_relaxation.hpp) where it can matter
  // (see kTaylorFloor); `reciprocal`: also the three-state relaxation in
  // 1/F (reciprocal_relaxation.hpp) where the others leave the box open,
  // with its points at a rate's edge kept as natural terms (`edge_terms`),
  // its solve starting at `start` (the parent box's solution, or NaN),
  // `threshold` being the bound that discards a box.
  BoxBounds bound(const Box& X, const Box& C, bool mean_value, bool taylor, bool reciprocal, bool edge_terms,
                  double threshold, const RelaxationPoint& start) const {
    BoxBounds out;
    out.reciprocal_point = start;
    out.gradient.fill(I{0, 0});
    I nat{0, 0}, fc{0, 0};
    // The Taylor model of each point: L_m, g_m from the enclosures at C, the
    // remainder from the gradient enclosure over X.
    std::array<std::size_t, kMaxParams> free{};
    std::size_t nf = 0;
    std::array<I, kMaxParams> delta;  // X - C, outwards
    for (std::size_t k = 0; k < n_; ++k) {
      delta[k] = {outward::down(X[k].lo - C[k].lo), outward::up(X[k].hi - C[k].lo)};
      if (X[k].lo < X[k].hi) free[nf++] = k;
    }
    // Per call, not members: boxes are bounded on several threads at once.
    std::vector<double> remainder, natural(points_.size());
    LsqRelaxation lsq;
    if (taylor) {
      lsq.n = nf;
      for (std::size_t i = 0; i < nf; ++i) {
        lsq.lo.push_back(delta[free[i]].lo);
        lsq.hi.push_back(delta[free[i]].hi);
      }
      lsq.L.reserve(points_.size());
      lsq.g.reserve(points_.size() * nf);
      remainder.assign(points_.size() * nf, 0.0);
    }
    for (std::size_t m = 0; m < points_.size(); ++m) {
      const Point& pt = points_[m];
      const FluxJacobian jx = flux(X, m, true), jc = flux(C, m, false);
      const I r = jx.F - pt.y;
      const I term = pt.w * sqr(r);
      nat = nat + term;
      natural[m] = term.lo;
      const I g = I::point(2) * pt.w * r;
      for (std::size_t k = 0; k < n_; ++k) out.gradient[k] = out.gradient[k] + g * jx.dF[k];
      fc = fc + pt.w * sqr(jc.F - pt.y);
      if (!taylor) continue;
      const double L = 0.5 * (jc.F.lo + jc.F.hi);
      double R = (jc.F - I::point(L)).mag();
      lsq.L.push_back(L);
      for (std::size_t i = 0; i < nf; ++i) {
        const std::size_t k = free[i];
        // The slope of the model: any g_mk is valid; the midpoint of the
        // enclosure over X gives the smallest remainder |J_mk(X) - g_mk|.
        const double gk = 0.5 * (jx.dF[k].lo + jx.dF[k].hi);
        lsq.g.push_back(gk);
        const double Rk = ((jx.dF[k] - I::point(gk)) * delta[k]).mag();
        remainder[m * nf + i] = Rk;
        R = outward::add_up(R, Rk);
      }
      lsq.zlo.push_back(outward::down(pt.y.lo - R));
      lsq.zhi.push_back(outward::up(pt.y.hi + R));
      lsq.w.push_back(pt.w.lo);
    }
    out.centre_value = fc;
    out.natural = nat.lo;
    out.lower = out.natural;
    if (mean_value) {
      I mv = fc;
      for (std::size_t k = 0; k < n_; ++k) mv = mv + out.gradient[k] * delta[k];
      out.mean_value = mv.lo;
      out.lower = std::max(out.lower, out.mean_value);
    }
    // Phi(0) is above the minimum of Phi: where it does not beat the other
    // bounds, or stays below kTaylorFloor x the threshold (a box too large
    // for the Taylor model, whose bound would not change the search), the
    // bound is not computed.
    const std::vector<double> zero(nf, 0.0);
    const double phi0 = taylor && nf > 0 ? lsq.phi(zero.data()) : 0.0;
    if (phi0 > out.lower && phi0 > kTaylorFloor * threshold) {
      std::vector<double> dstar;
      out.taylor = lsq.bound(&dstar);
      out.lower = std::max(out.lower, out.taylor);
      // The loss of each point, w (r^2 - max(0, |r| - R)^2) at delta*, shared
      // among the coordinates by their parts of R_m.
      for (std::size_t m = 0; m < points_.size(); ++m) {
        double z = lsq.L[m];
        for (std::size_t i = 0; i < nf; ++i) z += lsq.g[m * nf + i] * dstar[i];
        const double y = 0.5 * (points_[m].y.lo + points_[m].y.hi);
        const double R = 0.5 * ((lsq.zhi[m] - y) + (y - lsq.zlo[m]));
        const double rr = std::fabs(z - y), shrunk = std::max(0.0, rr - R);
        const double loss = lsq.w[m] * (rr * rr - shrunk * shrunk);
        if (!(loss > 0) || !(R > 0)) continue;
        for (std::size_t i = 0; i < nf; ++i) out.taylor_loss[free[i]] += loss * remainder[m * nf + i] / R;
      }
      out.taylor_point.resize(n_);
      for (std::size_t k = 0; k < n_; ++k) out.taylor_point[k] = C[k].lo;
      for (std::size_t i = 0; i < nf; ++i)
        out.taylor_point[free[i]] = std::clamp(C[free[i]].lo + dstar[i], X[free[i]].lo, X[free[i]].hi);
    }
    if (reciprocal && family_ == ClosedFamily::ThreeState && out.lower < threshold) {
      out.reciprocal = reciprocal_bound(X, points_, natural, edge_terms, out.lower, &out.reciprocal_point);
      out.lower = std::max(out.lower, out.reciprocal);
    }
    return out;
  }

  // sum_m w_m |range of F(H_m) over X| on every `stride`-th point: how much
  // the box leaves the curve open (a split heuristic, not a bound).
  double spread(const Box& X, std::size_t stride) const {
    double s = 0;
    for (std::size_t m = 0; m < points_.size(); m += stride) {
      const I F = flux(X, m, false).F;
      s += points_[m].w.hi * (F.hi - F.lo);
    }
    return s;
  }

 private:
  ClosedFamily family_;
  std::size_t n_ = 0;
  std::vector<Point> points_;
};

// The boxes whose union holds a minimizer of f over the box `root`. For the
// three-state family, every curve that the box realizes is realized on one
// of the faces where a.p, a.s, b, c.p or c.s is at an end of its range
// (see the header), so the faces replace the box: the continuum of equal
// curves is cut down to the points where it meets the boundary. Where the
// box treats a and c alike, the swap a <-> c (F is symmetric in them) maps
// the c faces onto the a faces, which then suffice, and maps each b face
// onto itself: there the half a.s <= c.s holds a mirror image of every
// point (second: whether the root is such a face).
std::vector<std::pair<Box, bool>> root_boxes(ClosedFamily family, const Box& root, bool faces) {
  if (family != ClosedFamily::ThreeState || !faces) return {{root, false}};
  const bool symmetric = root[0].lo == root[3].lo && root[0].hi == root[3].hi && root[1].lo == root[4].lo &&
                         root[1].hi == root[4].hi;
  std::vector<std::pair<Box, bool>> out;
  for (std::size_t k : {0, 1, 2, 3, 4}) {
    if (symmetric && (k == 3 || k == 4)) continue;
    for (double end : {root[k].lo, root[k].hi}) {
      Box face = root;
      face[k] = I::point(end);
      out.push_back({face, symmetric && k == 2});
      if (root[k].lo == root[k].hi) break;
    }
  }
  return out;
}

struct Node {
  Box box;
  double lb;
  std::array<double, kMaxParams> score;  // where a split gains most: the larger, the better
  bool mirror;                           // in a face symmetric in a <-> c (root_boxes)
  RelaxationPoint start;                 // where its relaxation's solve ended: its halves start there
  std::size_t domain;                    // the index of its root box (the domain its search covers)
  bool operator<(const Node& o) const { return lb > o.lb; }  // min-heap on the bound
};

}  // namespace

std::size_t parameter_count(ClosedFamily f) { return f == ClosedFamily::TwoState ? 3 : 6; }

namespace {

// The problem's box, data and known MSE: InputError for what cannot be certified.
void check_problem(const OptimalityProblem& p, double known_mse) {
  const std::size_t n = parameter_count(p.family);
  if (p.lower.size() != n || p.upper.size() != n)
    throw InputError(fmt::format("optimality certificate: the box has {} and {} ends for {} parameters",
                                 p.lower.size(), p.upper.size(), n));
  for (std::size_t k = 0; k < n; ++k)
    if (!(p.lower[k] <= p.upper[k]) || !std::isfinite(p.lower[k]) || !std::isfinite(p.upper[k]))
      throw InputError(fmt::format("optimality certificate: parameter {}: bad range [{}, {}]", k, p.lower[k], p.upper[k]));
  const std::vector<std::size_t> constants =
      p.family == ClosedFamily::TwoState ? std::vector<std::size_t>{2} : std::vector<std::size_t>{2, 5};
  for (auto k : constants)
    if (!(p.lower[k] > 0))
      throw InputError(fmt::format("optimality certificate: constant rate {} needs a lower bound > 0", k));
  if (p.h.empty()) throw InputError("optimality certificate: no data points");
  if (!p.w.empty() && p.w.size() != p.h.size())
    throw InputError(fmt::format("optimality certificate: {} weights for {} points", p.w.size(), p.h.size()));
  if (!p.y.empty() && p.y.size() != p.h.size())
    throw InputError(fmt::format("optimality certificate: {} targets for {} points", p.y.size(), p.h.size()));
  if (!(known_mse >= 0)) throw InputError("optimality certificate: the known MSE must be >= 0");
}

// The coordinate of the node's highest score among those whose cut point is
// a double strictly inside its range, and the cut point; n if none is.
std::pair<std::size_t, double> choose_split(const Node& top, std::size_t n, bool toward_zero) {
  std::size_t split = n;
  double best = -1, mid = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const double lo = top.box[k].lo, hi = top.box[k].hi;
    // A positive range over more than a factor 4 (a constant rate, whose
    // range spans decades) is cut at its geometric mean.
    double m = lo > 0 && hi > 4 * lo ? std::sqrt(lo) * std::sqrt(hi) : lo + 0.5 * (hi - lo);
    // Three-state: a range that reaches 0 is cut towards it (at 0 if it
    // straddles 0, else at 1/8 of its far end, while wider than 1), so
    // offsets and slopes reach the scale of the fits (0.1 to 10 where the
    // bounds are +-1000) in as many cuts as the geometric cut takes for a
    // positive range; halving leaves the bound near 0 for longer.
    if (toward_zero) {
      if (lo < 0 && hi > 0) m = 0;
      else if (lo == 0 && hi > kZeroCutWidth) m = hi / kZeroCutRatio;
      else if (hi == 0 && -lo > kZeroCutWidth) m = lo / kZeroCutRatio;
    }
    if (!(m > lo && m < hi)) continue;
    if (top.score[k] > best) {
      best = top.score[k];
      split = k;
      mid = m;
    }
  }
  return {split, mid};
}

// The split scores of a box that stays open (choose_split cuts the
// coordinate of the largest): where the Taylor bound gave its bound, the
// coordinate whose width causes most of its remainders' loss; where the
// mean-value bound did, width x |g_k|; where the natural bound did (a large
// box, whose gradient enclosure says little), the coordinate whose range
// alone, the others at the centre C, spreads the curve most.
std::array<double, kMaxParams> split_scores(const Objective& obj, const Box& X, const Box& C, const BoxBounds& b,
                                            const OptimalityOptions& opt, double threshold, std::size_t n) {
  std::array<double, kMaxParams> score{};
  const bool taylor_active = !b.taylor_point.empty() && b.taylor >= b.mean_value && b.taylor > b.natural &&
                             b.taylor >= kTaylorSplit * threshold;
  const bool mv_active = !taylor_active && opt.mean_value && b.mean_value > b.natural;
  for (std::size_t k = 0; k < n; ++k) {
    if (X[k].lo == X[k].hi) continue;
    const double mag = b.gradient[k].mag();
    if (taylor_active) {
      score[k] = b.taylor_loss[k] + 1e-300;
    } else if (mv_active && std::isfinite(mag)) {
      score[k] = (X[k].hi - X[k].lo) * std::max(mag, 1e-300);
    } else {
      Box Y = C;
      Y[k] = X[k];
      score[k] = obj.spread(Y, kSpreadStride) + 1e-300;
      // Three-state: a rate's offset or slope also with the other one at
      // its end nearest 0 (the rate as small as the box lets it be). From
      // the centre, a wide range [0, 1000] of c.p and c.s does not move a
      // curve whose c is large there, though the box's corner c = 0 zeroes
      // the flux at every point and keeps each point's range over its
      // target (the natural bound at 0: the clipped ReLUs).
      const std::size_t partner = k == 0 ? 1 : k == 1 ? 0 : k == 3 ? 4 : k == 4 ? 3 : n;
      if (opt.corner_split && n == 6 && partner < n && X[partner].lo < X[partner].hi) {
        const double lo = X[partner].lo, hi = X[partner].hi;
        Y[partner] = I::point(lo <= 0 && hi >= 0 ? 0.0 : std::fabs(lo) < std::fabs(hi) ? lo : hi);
        score[k] = std::max(score[k], obj.spread(Y, kSpreadStride) + 1e-300);
      }
    }
  }
  // Where no coordinate alone moves the curve at the centre (a rate
  // vanishes at every point there, e.g. a.s = 0 with a.p < 0), the
  // spreads rank nothing and the tie goes to the first coordinate; but
  // once that coordinate is of one sign, its halving never lifts the
  // bound (the rate stays 0 at H = 0 however narrow a.p gets): then a
  // coordinate that straddles 0 is cut there, which separates the rate
  // vanishing on the left of H = 0 from it vanishing on the right.
  if (opt.straddle_split && !taylor_active && !mv_active &&
      *std::max_element(score.begin(), score.begin() + n) <= 1e-300)
    for (std::size_t k = 0; k < n; ++k)
      if (X[k].lo < 0 && X[k].hi > 0) score[k] = 2e-300;
  return score;
}

// The monotonicity discard (Hansen's monotonicity test on a face inside the
// domain): where a partial derivative of f has one sign over the closed box
// X, e.g. > 0 in theta_k, and X[k].lo is above the domain's lower end, X
// holds no minimizer of f over the domain D: at a point x of X, the
// one-sided derivative of f in the direction -e_k is -g_k for some g in the
// closed enclosure (every rectifier at its kink taking either slope), so
// f(x - t e_k) < f(x) for small t > 0, and x - t e_k is in D. (Fixing the
// coordinate at the face instead, as the shrinking step does, keeps the
// face's points, which lie in the neighbouring box as well.) The cheap
// enclosure over the open box (`g`) selects the candidates; the closed one
// decides.
bool monotone_discard(const Objective& obj, const Box& X, const std::array<I, kMaxParams>& g, const Box& D,
                      std::size_t n) {
  auto points_inside = [&](const std::array<I, kMaxParams>& grad, std::size_t k) {
    return (grad[k].lo > 0 && X[k].lo > D[k].lo) || (grad[k].hi < 0 && X[k].hi < D[k].hi);
  };
  bool candidate = false;
  for (std::size_t k = 0; k < n && !candidate; ++k) candidate = points_inside(g, k);
  if (!candidate) return false;
  const std::array<I, kMaxParams> closed = obj.closed_gradient(X);
  for (std::size_t k = 0; k < n; ++k)
    if (points_inside(closed, k)) return true;
  return false;
}

// What bounding one box found: the boxes bounded (the box, and again after
// each monotonicity step), its fate, and the points whose objective beat the
// incumbent, in the order seen. A pure function of the box and the incumbent
// it started from, so that boxes can be bounded on several threads and the
// results applied in a fixed order.
struct Bounded {
  enum class Fate { Pruned, Mirrored, Discarded, Open };
  Fate fate = Fate::Pruned;
  std::int64_t boxes = 0, shrunk = 0;
  double lb = std::numeric_limits<double>::infinity();  // Pruned: its bound (Open: node.lb)
  std::vector<std::pair<I, std::vector<double>>> better;
  Node node;
};

// A box to bound: a half of a split box, or a root box.
struct Task {
  Box box;
  bool mirror;
  std::size_t domain;
  RelaxationPoint start;
};

// Bounds a box: its lower bound (after the monotonicity test fixed what it
// could), or discards it when it cannot hold a point below the threshold
// incumbent x shrink.
Bounded bound_box(const Objective& obj, const OptimalityOptions& opt, Task task, double incumbent, double shrink,
                  const Box& domain) {
  const std::size_t n = obj.size();
  Bounded out;
  Box& X = task.box;
  auto improve = [&](const I& value, const std::vector<double>& at) {
    if (value.hi < incumbent) {
      incumbent = value.hi;
      out.better.push_back({value, at});
    }
  };
  // In a face symmetric in a <-> c, a box inside a.s > c.s is the mirror
  // image of boxes of the search (each of which meets a.s <= c.s): the
  // minimum over the face is attained in one of those. Checked before
  // the monotonicity test, which keeps a box's minimum but may move the
  // box across the diagonal.
  if (task.mirror && X[1].lo > X[4].hi) {
    out.fate = Bounded::Fate::Mirrored;
    return out;
  }
  // The monotonicity test fixes coordinates at a face; the smaller box is
  // then bounded again (at most once per coordinate).
  for (std::size_t pass = 0; pass <= n; ++pass) {
    ++out.boxes;
    Box C = X;
    std::vector<double> centre(n);
    for (std::size_t k = 0; k < n; ++k) {
      const double c = X[k].lo + 0.5 * (X[k].hi - X[k].lo);
      centre[k] = std::min(std::max(c, X[k].lo), X[k].hi);
      C[k] = I::point(centre[k]);
    }
    const BoxBounds b = obj.bound(X, C, opt.mean_value, opt.taylor, opt.reciprocal, opt.reciprocal_edge_terms,
                                  incumbent * shrink, task.start);
    improve(b.centre_value, centre);
    const double lb = b.lower;
    if (lb >= incumbent * shrink) {
      out.fate = Bounded::Fate::Pruned;
      out.lb = lb;
      return out;
    }
    if (!b.taylor_point.empty()) {
      Box T;
      for (std::size_t k = 0; k < n; ++k) T[k] = I::point(b.taylor_point[k]);
      improve(obj.value(T), b.taylor_point);
    }
    if (opt.mean_value && opt.monotone_discard && monotone_discard(obj, X, b.gradient, domain, n)) {
      out.fate = Bounded::Fate::Discarded;
      return out;
    }
    bool fixed = false;
    for (std::size_t k = 0; k < n && opt.mean_value; ++k) {
      if (X[k].lo == X[k].hi) continue;
      if (b.gradient[k].lo > 0) X[k] = I::point(X[k].lo);
      else if (b.gradient[k].hi < 0) X[k] = I::point(X[k].hi);
      else continue;
      fixed = true;
    }
    if (fixed) {
      ++out.shrunk;
      continue;
    }
    out.fate = Bounded::Fate::Open;
    out.node = {X, lb, split_scores(obj, X, C, b, opt, incumbent * shrink, n), task.mirror, b.reciprocal_point,
                task.domain};
    return out;
  }
  return out;  // not reached: each pass fixes a coordinate, and there are n
}

}  // namespace

OptimalityResult certify_optimality(const OptimalityProblem& p, double known_mse, const OptimalityOptions& opt) {
  check_problem(p, known_mse);
  if (opt.batch < 1) throw InputError("optimality certificate: the batch must hold at least one box");
  const std::size_t n = parameter_count(p.family);

  const auto t0 = std::chrono::steady_clock::now();
  const Objective obj(p, opt.precision);
  OptimalityResult res;
  res.incumbent = known_mse;
  res.rel_gap = opt.rel_gap;
  const double shrink = 1 / (1 + opt.rel_gap);
  double pruned_min = std::numeric_limits<double>::infinity();

  std::priority_queue<Node> open;
  const bool toward_zero = opt.zero_cuts && p.family == ClosedFamily::ThreeState;
  std::vector<Box> domains;
  // Whether the lowest open box can still hold a point below the threshold.
  auto lowest_open = [&] { return !open.empty() && open.top().lb < res.incumbent * shrink; };
  // Applies what bounding a box found, in the order of the tasks.
  auto apply = [&](Bounded&& b) {
    res.boxes += b.boxes;
    res.shrunk += b.shrunk;
    for (auto& [value, at] : b.better)
      if (value.hi < res.incumbent) {
        res.incumbent = value.hi;
        res.best_centre = std::move(at);
      }
    switch (b.fate) {
      case Bounded::Fate::Mirrored: ++res.mirrored; ++res.pruned; break;
      case Bounded::Fate::Discarded: ++res.discarded; ++res.pruned; break;
      case Bounded::Fate::Pruned: pruned_min = std::min(pruned_min, b.lb); ++res.pruned; break;
      case Bounded::Fate::Open: open.push(std::move(b.node)); break;
    }
  };
  // Bounds the tasks on opt.threads threads, each from the incumbent as it
  // stood before them; the results go in in the tasks' order, so nothing
  // depends on the thread count.
  std::vector<Task> tasks;
  std::vector<Bounded> results;
  auto run = [&] {
    results.assign(tasks.size(), Bounded{});
    const double incumbent = res.incumbent;
    const int threads = std::max(1, std::min<int>(opt.threads > 0 ? opt.threads : omp_get_max_threads(),
                                                  static_cast<int>(tasks.size())));
    std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      try {
        results[i] = bound_box(obj, opt, tasks[i], incumbent, shrink, domains[tasks[i].domain]);
      } catch (...) {
#pragma omp critical
        if (!error) error = std::current_exception();
      }
    }
    if (error) std::rethrow_exception(error);
    for (auto& r : results) apply(std::move(r));
    tasks.clear();
  };

  Box root;
  for (std::size_t k = 0; k < n; ++k) root[k] = {p.lower[k], p.upper[k]};
  const auto roots = root_boxes(p.family, root, opt.faces);
  for (std::size_t i = 0; i < roots.size(); ++i) {
    domains.push_back(roots[i].first);
    tasks.push_back({roots[i].first, roots[i].second && opt.mirror, i, kNoStart});
  }
  res.roots = static_cast<std::int64_t>(roots.size());
  run();
  // Best-first, opt.batch boxes at a time: the boxes split in a batch are
  // the ones a box-at-a-time search would split next, unless the incumbent
  // improves within it; a search that ends below the threshold splits every
  // box whose bound is below it either way.
  while (lowest_open()) {
    if (res.boxes >= opt.max_boxes) {
      res.exhausted = true;
      break;
    }
    for (int popped = 0; popped < opt.batch && lowest_open(); ++popped) {
      const Node top = open.top();
      open.pop();
      const auto [split, mid] = choose_split(top, n, toward_zero);
      if (split == n) {  // a point, up to double resolution: its bound stays
        pruned_min = std::min(pruned_min, top.lb);
        ++res.unsplittable;
        continue;
      }
      ++res.split;
      Task left{top.box, top.mirror, top.domain, top.start}, right = left;
      left.box[split].hi = mid;
      right.box[split].lo = mid;
      tasks.push_back(left);
      tasks.push_back(right);
    }
    run();
  }
  res.open = static_cast<std::int64_t>(open.size());
  // Pruned boxes whose bound passed the threshold only after the incumbent
  // improved still count with their own bound.
  res.lower_bound = std::min(pruned_min, open.empty() ? std::numeric_limits<double>::infinity() : open.top().lb);
  if (!std::isfinite(res.lower_bound)) res.lower_bound = res.incumbent * shrink;
  res.lower_bound = std::max(res.lower_bound, 0.0);
  res.gap = res.lower_bound > 0 ? known_mse / res.lower_bound - 1 : std::numeric_limits<double>::infinity();
  res.certified = res.gap <= opt.rel_gap * (1 + 1e-12);
  if (res.incumbent >= known_mse) res.best_centre.clear();
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace ctmc::proofs_check
