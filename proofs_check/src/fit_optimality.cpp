#include "ctmc/proofs_check/fit_optimality.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <queue>

#include "ctmc/activations/activation_interval.hpp"
#include "ctmc/core/errors.hpp"
#include "outward.hpp"

namespace ctmc::proofs_check {

namespace {

using outward::I;
constexpr std::size_t kMaxParams = 6;
using Box = std::array<I, kMaxParams>;
// The split heuristic looks at every 4th point: enough to rank the
// coordinates, a quarter of the cost.
constexpr std::size_t kSpreadStride = 4;

// One data point: H_m, the target y_m = alpha phi(H_m) and the weight
// w_m / W, all enclosed.
struct Point {
  I h, y, w;
};

// The rate max(0, p + s H) over the box's (p, s) and its slope with respect
// to p + s H: 1 where the affine part is positive on the whole box, 0 where
// it is <= 0 there (the rate is then 0 on the box), [0, 1] where it
// straddles the kink.
struct Rate {
  I r, chi;
};
Rate rectified(I p, I s, I h) {
  const I v = p + s * h;
  if (v.lo > 0) return {v, {1, 1}};
  if (v.hi <= 0) return {{0, 0}, {0, 0}};
  return {outward::rectify(v), {0, 1}};
}

// The closed forms at points of nonnegative rates, rounded down (lo) or up.
using outward::add_dn;
using outward::add_up;
using outward::div_dn;
using outward::div_up;
using outward::mul_dn;
using outward::mul_up;
// Two-state a d / (a + d), d > 0.
double two_state_dn(double a, double d) { return div_dn(mul_dn(a, d), add_up(a, d)); }
double two_state_up(double a, double d) { return div_up(mul_up(a, d), add_dn(a, d)); }
// Three-state a c d / (d (a + b + c) + a c), b, d > 0.
double three_state_dn(double a, double b, double c, double d) {
  return div_dn(mul_dn(mul_dn(a, c), d), add_up(mul_up(d, add_up(add_up(a, b), c)), mul_up(a, c)));
}
double three_state_up(double a, double b, double c, double d) {
  return div_up(mul_up(mul_up(a, c), d), add_dn(mul_dn(d, add_dn(add_dn(a, b), c)), mul_dn(a, c)));
}

// The ranges of the closed forms over boxes of nonnegative rates (each is
// monotone in every rate).
I two_state_range(I a, I d) { return {two_state_dn(a.lo, d.lo), two_state_up(a.hi, d.hi)}; }
I three_state_range(I a, I b, I c, I d) {
  return {three_state_dn(a.lo, b.hi, c.lo, d.lo), three_state_up(a.hi, b.lo, c.hi, d.hi)};
}

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

  // Lower bound of f over X by the exact per-term ranges (natural bound),
  // and, if grad, an enclosure of the gradient over X. At a point box the
  // returned interval encloses f there.
  I eval(const Box& X, std::array<I, kMaxParams>* grad) const {
    I f{0, 0};
    if (grad) grad->fill(I{0, 0});
    for (const auto& pt : points_) {
      I F, dF[kMaxParams];
      if (family_ == ClosedFamily::TwoState) {
        const Rate a = rectified(X[0], X[1], pt.h);
        const I d = X[2];
        F = two_state_range(a.r, d);
        if (grad) {
          // dF/da = d^2/(a+d)^2 (decreasing in a, increasing in d),
          // dF/dd = a^2/(a+d)^2 (increasing in a, decreasing in d): exact ranges.
          const double s1 = add_up(a.r.hi, d.lo), s2 = add_dn(a.r.lo, d.hi);
          const double s3 = add_up(a.r.lo, d.hi), s4 = add_dn(a.r.hi, d.lo);
          const I dFda = {div_dn(mul_dn(d.lo, d.lo), mul_up(s1, s1)), div_up(mul_up(d.hi, d.hi), mul_dn(s2, s2))};
          const I dFdd = {div_dn(mul_dn(a.r.lo, a.r.lo), mul_up(s3, s3)),
                          div_up(mul_up(a.r.hi, a.r.hi), mul_dn(s4, s4))};
          dF[0] = dFda * a.chi;
          dF[1] = dF[0] * pt.h;
          dF[2] = dFdd;
        }
      } else {
        const Rate a = rectified(X[0], X[1], pt.h), c = rectified(X[3], X[4], pt.h);
        const I b = X[2], d = X[5];
        F = three_state_range(a.r, b, c.r, d);
        if (grad) {
          // With D = d (a + b + c) + a c >= d b > 0:
          // dF/da = c d^2 (b + c) / D^2, dF/db = -a c d^2 / D^2,
          // dF/dc = a d^2 (a + b) / D^2, dF/dd = a^2 c^2 / D^2.
          const I D2 = sqr(d * (a.r + b + c.r) + a.r * c.r), d2 = sqr(d);
          const I dFda = c.r * d2 * (b + c.r) / D2;
          const I dFdc = a.r * d2 * (a.r + b) / D2;
          dF[0] = dFda * a.chi;
          dF[1] = dF[0] * pt.h;
          dF[2] = -(a.r * c.r * d2 / D2);
          dF[3] = dFdc * c.chi;
          dF[4] = dF[3] * pt.h;
          dF[5] = sqr(a.r * c.r) / D2;
        }
      }
      const I r = F - pt.y;
      f = f + pt.w * sqr(r);
      if (grad) {
        const I g = I::point(2) * pt.w * r;
        for (std::size_t k = 0; k < n_; ++k) (*grad)[k] = (*grad)[k] + g * dF[k];
      }
    }
    return f;
  }

  // sum_m w_m |range of F(H_m) over X| on every `stride`-th point: how much
  // the box leaves the curve open (a split heuristic, not a bound).
  double spread(const Box& X, std::size_t stride) const {
    double s = 0;
    for (std::size_t m = 0; m < points_.size(); m += stride) {
      const Point& pt = points_[m];
      const I F = family_ == ClosedFamily::TwoState
                      ? two_state_range(rectified(X[0], X[1], pt.h).r, X[2])
                      : three_state_range(rectified(X[0], X[1], pt.h).r, X[2], rectified(X[3], X[4], pt.h).r, X[5]);
      s += pt.w.hi * (F.hi - F.lo);
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
// the c faces onto the a faces, which then suffice.
std::vector<Box> root_boxes(ClosedFamily family, const Box& root, bool faces) {
  if (family != ClosedFamily::ThreeState || !faces) return {root};
  const bool symmetric = root[0].lo == root[3].lo && root[0].hi == root[3].hi && root[1].lo == root[4].lo &&
                         root[1].hi == root[4].hi;
  std::vector<Box> out;
  for (std::size_t k : {0, 1, 2, 3, 4}) {
    if (symmetric && (k == 3 || k == 4)) continue;
    for (double end : {root[k].lo, root[k].hi}) {
      Box face = root;
      face[k] = I::point(end);
      out.push_back(face);
      if (root[k].lo == root[k].hi) break;
    }
  }
  return out;
}

struct Node {
  Box box;
  double lb;
  std::array<double, kMaxParams> score;  // where a split gains most: the larger, the better
  bool operator<(const Node& o) const { return lb > o.lb; }  // min-heap on the bound
};

}  // namespace

std::size_t parameter_count(ClosedFamily f) { return f == ClosedFamily::TwoState ? 3 : 6; }

OptimalityResult certify_optimality(const OptimalityProblem& p, double known_mse, const OptimalityOptions& opt) {
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

  const Objective obj(p, opt.precision);
  OptimalityResult res;
  res.incumbent = known_mse;
  const double shrink = 1 / (1 + opt.rel_gap);
  double pruned_min = std::numeric_limits<double>::infinity();

  // Bounds a box: its lower bound (after the monotonicity test fixed what it
  // could), or discards it when it cannot hold a point below the threshold.
  std::priority_queue<Node> open;
  std::array<I, kMaxParams> g;
  auto bound = [&](Box X) {
    // The monotonicity test fixes coordinates at a face; the smaller box is
    // then bounded again (at most once per coordinate).
    for (std::size_t pass = 0; pass <= n; ++pass) {
      ++res.boxes;
      const I nat = obj.eval(X, &g);
      Box C = X;
      for (std::size_t k = 0; k < n; ++k) {
        const double c = X[k].lo + 0.5 * (X[k].hi - X[k].lo);
        C[k] = I::point(std::min(std::max(c, X[k].lo), X[k].hi));
      }
      const I fc = obj.eval(C, nullptr);
      if (fc.hi < res.incumbent) {
        res.incumbent = fc.hi;
        res.best_centre.resize(n);
        for (std::size_t k = 0; k < n; ++k) res.best_centre[k] = C[k].lo;
      }
      I mv = fc;
      for (std::size_t k = 0; k < n; ++k) mv = mv + g[k] * (X[k] - C[k]);
      const double lb = opt.mean_value ? std::max(nat.lo, mv.lo) : nat.lo;
      if (lb >= res.incumbent * shrink) {
        pruned_min = std::min(pruned_min, lb);
        return;
      }
      bool fixed = false;
      for (std::size_t k = 0; k < n && opt.mean_value; ++k) {
        if (X[k].lo == X[k].hi) continue;
        if (g[k].lo > 0) X[k] = I::point(X[k].lo);
        else if (g[k].hi < 0) X[k] = I::point(X[k].hi);
        else continue;
        fixed = true;
      }
      if (!fixed) {
        // Split scores. Where the mean-value bound gave lb, the coordinate
        // where it loses most: width x |g_k|. Where the natural bound did
        // (a large box), the coordinate whose range alone, the others at
        // the centre, spreads the curve most: sum_m w_m |F range at H_m|.
        std::array<double, kMaxParams> score{};
        const bool mv_active = opt.mean_value && mv.lo > nat.lo;
        for (std::size_t k = 0; k < n; ++k) {
          if (X[k].lo == X[k].hi) continue;
          const double mag = g[k].mag();
          if (mv_active && std::isfinite(mag)) {
            score[k] = (X[k].hi - X[k].lo) * std::max(mag, 1e-300);
          } else {
            Box Y = C;
            Y[k] = X[k];
            score[k] = obj.spread(Y, kSpreadStride) + 1e-300;
          }
        }
        open.push({X, lb, score});
        return;
      }
    }
  };

  Box root;
  for (std::size_t k = 0; k < n; ++k) root[k] = {p.lower[k], p.upper[k]};
  for (const Box& X : root_boxes(p.family, root, opt.faces)) bound(X);
  while (!open.empty()) {
    const Node top = open.top();
    if (top.lb >= res.incumbent * shrink) break;
    if (res.boxes >= opt.max_boxes) {
      res.exhausted = true;
      break;
    }
    open.pop();
    // Split the coordinate of the highest score among those whose midpoint
    // is a double strictly inside.
    std::size_t split = n;
    double best = -1, mid = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const double lo = top.box[k].lo, hi = top.box[k].hi;
      // A positive range over more than a factor 4 (a constant rate, whose
      // range spans decades) is cut at its geometric mean.
      const double m = lo > 0 && hi > 4 * lo ? std::sqrt(lo) * std::sqrt(hi) : lo + 0.5 * (hi - lo);
      if (!(m > lo && m < hi)) continue;
      if (top.score[k] > best) {
        best = top.score[k];
        split = k;
        mid = m;
      }
    }
    if (split == n) {  // a point, up to double resolution: its bound stays
      pruned_min = std::min(pruned_min, top.lb);
      continue;
    }
    Box left = top.box, right = top.box;
    left[split].hi = mid;
    right[split].lo = mid;
    bound(left);
    bound(right);
  }
  res.lower_bound = std::min(pruned_min, open.empty() ? std::numeric_limits<double>::infinity() : open.top().lb);
  if (!std::isfinite(res.lower_bound)) res.lower_bound = res.incumbent * shrink;
  res.lower_bound = std::max(res.lower_bound, 0.0);
  res.gap = res.lower_bound > 0 ? known_mse / res.lower_bound - 1 : std::numeric_limits<double>::infinity();
  res.certified = res.gap <= opt.rel_gap * (1 + 1e-12);
  if (res.incumbent >= known_mse) res.best_centre.clear();
  return res;
}

}  // namespace ctmc::proofs_check
