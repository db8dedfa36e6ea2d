#include "reciprocal_relaxation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "closed_flux.hpp"
#include "lsq_relaxation.hpp"

namespace ctmc::proofs_check {

namespace {

using outward::I;
using Box = std::array<I, 6>;
// The relaxation's variables: the parameters with d replaced by e = 1/d,
// in which G is linear.
enum Param { kAp, kAs, kB, kCp, kCs, kE };
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kNewtonIterations = 30;
constexpr int kHalvings = 30;
// The least offset delta of a rate's overestimator (add()): any delta > 0
// keeps a' >= max(0, l), and this one keeps 1/a' and 1/(a' c') finite where
// the rate's range on the box is [0, 0] up to rounding (p + s H at H = 0
// with p's upper end 0 is enclosed as [.., 4.9e-324]).
constexpr double kMinDelta = 1e-12;

// One point where a and c are not 0 on the whole box: the data of Gc_m,
// A_m and the two penalties (reciprocal_relaxation.hpp), as doubles that
// define the functions exactly; the rigorous evaluation encloses them.
struct Term {
  I h;
  double hm = 0, w = 0, ylo = 0, yhi = 0;
  double iylo = kInf;  // 1 / y_lo where y_lo > 0: divisions are most of the Newton solve's time
  // The point's natural term w dist(F(box), Y)^2, rounded down: the term
  // is max(nat, w (psi_up + psi_dn)), convex as the larger of two convex
  // functions, and never below the natural bound.
  double nat = 0;
  // Gc = 1/a + 1/c + e + beta W + omega b - beta omega, W = 1/(a c).
  double beta = 0, omega = 0;
  // psi_up is the tangent line at T beyond T (T = inf: nowhere).
  double T = kInf;
  // A_j = Su(a) + Sv(c) + e + lam_j P_j(a, c) + kb_j b - k0_j (j = 0, 1),
  // S the secants of 1/x over [lo, hi], P_j(a, c) = K_j + al_j a + ga_j c
  // a plane above 1/(a c) on the rectangle of (a, c), and lam_j P_j + kb_j b
  // - k0_j above b P_j (b itself where b is a point, else McCormick).
  double alo = 0, ahi = 0, clo = 0, chi = 0;
  double isa = 0, isc = 0;  // 1 / (alo ahi), 1 / (clo chi): the secants' slopes, negated
  std::array<double, 2> K{}, al{}, ga{}, lam{}, kb{}, k0{};
  int j = 0;  // the plane used: the one smaller at the centre of the box
  // The rates the relaxation sees: a' = ka (l_a - la) + da with l_a = a.p +
  // a.s H (ka = 1, la = da = 0 where a > 0 on the box), likewise c'.
  double ka = 1, la = 0, da = 0, kc = 1, lc = 0, dc = 0;
  bool lower = true;  // the A side (off where a rate may vanish: F may be 0)
};

bool finite(I x) { return std::isfinite(x.lo) && std::isfinite(x.hi); }

// Value, first and second derivative of a scalar penalty.
struct D2 {
  double v = 0, d1 = 0, d2 = 0;
};

// (y_lo - 1/G)_+^2 and its convex continuation beyond T (exact in reals,
// evaluated in double for the Newton solve).
D2 psi_up(double ylo, double iylo, double T, double G) {
  if (!(ylo > 0) || G <= iylo) return {};
  const double x = std::min(G, T), ix = 1 / x, ix2 = ix * ix, q = ylo - ix;
  D2 r{q * q, 2 * q * ix2, 2 * ix2 * ix2 * (3 - 2 * ylo * x)};
  if (G > T) r = {r.v + r.d1 * (G - T), r.d1, 0};
  return r;
}
D2 psi_up(const Term& t, double G) { return psi_up(t.ylo, t.iylo, t.T, G); }
// (1/A - y_hi)_+^2.
D2 psi_dn(const Term& t, double A) {
  const double iA = 1 / A, r = iA - t.yhi;
  if (!(r > 0)) return {};
  const double iA2 = iA * iA;
  return {r * r, -2 * r * iA2, 2 * iA2 * iA2 * (3 - 2 * t.yhi * A)};
}

// The same in interval arithmetic at a point G (an enclosure of a double
// argument's image): value and derivative enclosed.
struct I2 {
  I v, d1;
};
I2 phi_up_i(const Term& t, I x) {
  const I q = outward::rectify(I::point(t.ylo) - I::point(1) / x);
  return {sqr(q), I::point(2) * q / (x * x)};
}
I2 psi_up_i(const Term& t, double G) {
  if (!(t.ylo > 0)) return {{0, 0}, {0, 0}};
  if (G <= t.T) return phi_up_i(t, I::point(G));
  const I2 at = phi_up_i(t, I::point(t.T));
  return {at.v + at.d1 * (I::point(G) - I::point(t.T)), at.d1};
}
// psi_up is nondecreasing and convex: over an interval of G its value and
// derivative lie between those at the ends.
I2 psi_up_i(const Term& t, I G) {
  const I2 lo = psi_up_i(t, G.lo), hi = psi_up_i(t, G.hi);
  return {{lo.v.lo, hi.v.hi}, {lo.d1.lo, hi.d1.hi}};
}
// psi_dn is nonincreasing and convex on A > 0.
I2 psi_dn_i(const Term& t, I A) {
  auto at = [&](double x) -> I2 {
    const I r = outward::rectify(I::point(1) / I::point(x) - I::point(t.yhi));
    return {sqr(r), -(I::point(2) * r / (I::point(x) * I::point(x)))};
  };
  const I2 lo = at(A.lo), hi = at(A.hi);
  return {{hi.v.lo, lo.v.hi}, {lo.d1.lo, hi.d1.hi}};
}

// The tangent point T of psi_up's convex continuation: the largest T in
// [1/y_lo, 3/(2 y_lo)] (psi_up is convex up to the latter) whose tangent
// stays below psi_up at Gmax; psi_up minus that line is then >= 0 at both
// ends of [3/(2 y_lo), Gmax] and concave between, so the line is a minorant
// on the range of Gc. The check at Gmax is made in interval arithmetic.
double tangent_point(const Term& t, double Gmax) {
  if (!(t.ylo > 0)) return kInf;
  const double g0 = 1 / t.ylo, infl = 1.5 / t.ylo;
  if (Gmax <= outward::down(infl)) return kInf;
  auto gap = [&](double T) {  // line(Gmax) - phi(Gmax), enclosed
    const I2 at = phi_up_i(t, I::point(T));
    return at.v + at.d1 * (I::point(Gmax) - I::point(T)) - phi_up_i(t, I::point(Gmax)).v;
  };
  // Bisection in double to 2^-24 of the bracket: any T below the exact
  // tangent point is valid (the check below decides), and the line's loss
  // from a T that much lower is far below the bound's tolerance.
  double lo = g0, hi = std::min(infl, Gmax);
  const double at_max = psi_up(t.ylo, t.iylo, kInf, Gmax).v;
  for (int i = 0; i < 24; ++i) {
    const double mid = 0.5 * (lo + hi);
    const D2 a = psi_up(t.ylo, t.iylo, kInf, mid);
    if (a.v + a.d1 * (Gmax - mid) <= at_max) lo = mid;
    else hi = mid;
  }
  for (int k = 0; k < 8; ++k, lo = g0 + 0.5 * (lo - g0))
    if (gap(lo).hi <= 0) return lo;
  return g0;  // the flat line 0: trivially a minorant
}

// The rates at a point theta and their derivatives' directions.
struct Rates {
  double a, c, e, b;  // e = 1/d
};
Rates rates(const Term& t, const double* x) {
  return {t.ka * (x[kAp] + x[kAs] * t.hm - t.la) + t.da, t.kc * (x[kCp] + x[kCs] * t.hm - t.lc) + t.dc, x[kE], x[kB]};
}

// The gradient of a function of (a, c, d, b) with respect to theta.
void chain(double ga, double gc, double gd, double gb, double h, double* g) {
  g[kAp] = ga;
  g[kAs] = ga * h;
  g[kCp] = gc;
  g[kCs] = gc * h;
  g[kE] = gd;
  g[kB] = gb;
}

class Relaxation {
 public:
  // X: the parameter box; E: the same with e = 1/d in place of d.
  Relaxation(const Box& X, const Box& E, const std::vector<FitPoint>& points, const std::vector<double>& natural,
             bool edge_terms)
      : X_(X), E_(E), edge_terms_(edge_terms) {
    terms_.reserve(points.size());
    for (std::size_t m = 0; m < points.size(); ++m) add(points[m], natural[m]);
  }

  // Psi in double, and (if g, H are given) its gradient and Hessian in theta.
  double value(const double* x, double* g = nullptr, SmallMatrix* H = nullptr) const {
    double f = 0;
    if (g) std::fill(g, g + 6, 0.0);
    if (H) *H = SmallMatrix{};
    for (const Term& t : terms_) {
      const Rates r = rates(t, x);
      const double ia = 1 / r.a, ic = 1 / r.c, W = ia * ic;
      const double G = ia + ic + r.e + t.beta * W + t.omega * r.b - t.beta * t.omega;
      const int j = t.j;
      const double A = t.lower ? secants(t, r, j) : kInf;
      const D2 pu = psi_up(t, G), pd = t.lower ? psi_dn(t, A) : D2{};
      const double v = t.w * (pu.v + pd.v);
      if (v <= t.nat) {
        f += t.nat;
        continue;
      }
      f += v;
      if (!g) continue;
      double gG[6], gA[6];
      const double Ga = -ia * ia - t.beta * W * ia, Gc = -ic * ic - t.beta * W * ic;
      chain(Ga * t.ka, Gc * t.kc, 1, t.omega, t.hm, gG);
      chain(t.lam[j] * t.al[j] - t.isa, t.lam[j] * t.ga[j] - t.isc, 1, t.kb[j], t.hm, gA);
      for (int k = 0; k < 6; ++k) g[k] += t.w * (pu.d1 * gG[k] + pd.d1 * gA[k]);
      if (!H) continue;
      // psi'' grad grad^T for both, plus psi_up' times Gc's Hessian in (a, c, d).
      const double Gaa = 2 * ia * ia * ia + 2 * t.beta * W * ia * ia, Gcc = 2 * ic * ic * ic + 2 * t.beta * W * ic * ic;
      const double Gac = t.beta * W * W;
      const double ja[6] = {t.ka, t.ka * t.hm, 0, 0, 0, 0}, jc[6] = {0, 0, 0, t.kc, t.kc * t.hm, 0};
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j <= i; ++j) {
          const double curv = Gaa * ja[i] * ja[j] + Gcc * jc[i] * jc[j] + Gac * (ja[i] * jc[j] + jc[i] * ja[j]);
          (*H)[i][j] += t.w * (pu.d2 * gG[i] * gG[j] + pu.d1 * curv + pd.d2 * gA[i] * gA[j]);
        }
    }
    return f + constant_lo_;
  }

  // A rigorous lower bound of Psi over the box by convexity at x (a point
  // of the box), plus the points' constant terms. A term whose enclosures
  // at x are not finite and positive (rounding at a rate's edge) is
  // replaced by its natural term, a constant below it: the sum is then
  // another convex minorant of f on the box, bounded at x the same way.
  double certify(const double* x) const {
    I f = I::point(constant_lo_);
    std::array<I, 6> g;
    g.fill(I{0, 0});
    for (const Term& t : terms_) {
      const std::optional<Tangent> tn = tangent(t, x);
      if (!tn && !edge_terms_) return 0;
      if (!tn || tn->constant) {
        f = f + I::point(t.nat);
        continue;
      }
      const auto& [ga, gc, ge, gb] = tn->d;
      f = f + tn->v;
      g[kAp] = g[kAp] + ga;
      g[kAs] = g[kAs] + ga * t.h;
      g[kCp] = g[kCp] + gc;
      g[kCs] = g[kCs] + gc * t.h;
      g[kE] = g[kE] + ge;
      g[kB] = g[kB] + gb;
    }
    I lb = f;
    for (int k = 0; k < 6; ++k)
      lb = lb + g[k] * I{outward::down(E_[k].lo - x[k]), outward::up(E_[k].hi - x[k])};

    return std::max(0.0, lb.lo);
  }

  bool empty() const { return terms_.empty(); }
  double constant() const { return constant_lo_; }

 private:
  // One term at x: its value and its derivatives with respect to a.p, c.p,
  // e and b (those to a.s and c.s are H times the first two), enclosed; or
  // `constant`, the natural term being the larger piece of the max there
  // (either piece is a valid minorant with its own tangent).
  struct Tangent {
    I v;
    std::array<I, 4> d;
    bool constant = false;
  };
  // Nothing where the term cannot be enclosed at x: a rate's or A's
  // enclosure not finite and positive, or a value or slope not finite.
  std::optional<Tangent> tangent(const Term& t, const double* x) const {
    const I a = I::point(t.ka) * (I::point(x[kAp]) + I::point(x[kAs]) * t.h - I::point(t.la)) + I::point(t.da);
    const I c = I::point(t.kc) * (I::point(x[kCp]) + I::point(x[kCs]) * t.h - I::point(t.lc)) + I::point(t.dc);
    const I e = I::point(x[kE]), b = I::point(x[kB]);
    if (!(a.lo > 0) || !(c.lo > 0) || !std::isfinite(a.hi) || !std::isfinite(c.hi)) return std::nullopt;
    const I one = I::point(1), ia = one / a, ic = one / c, W = ia * ic;
    const I beta = I::point(t.beta), omega = I::point(t.omega);
    const I G = ia + ic + e + beta * W + omega * b - beta * omega;
    const int j = t.j;
    const I A = t.lower ? secants_i(t, a, c, e, b, j) : I{1, 1};
    if (!(A.lo > 0)) return std::nullopt;
    const I2 pu = psi_up_i(t, G);
    const I2 pd = t.lower ? psi_dn_i(t, A) : I2{{0, 0}, {0, 0}};
    const I w = I::point(t.w);
    const I v = w * (pu.v + pd.v);
    if (v.hi <= t.nat) return Tangent{I::point(t.nat), {}, true};
    const I Ga = -(ia * ia + beta * W * ia), Gc = -(ic * ic + beta * W * ic);
    // The A side's slopes only where it is on (planes() set them).
    const auto [Aa, Ac, Ae, Ab] = t.lower ? secants_grad_i(t, j) : std::array<I, 4>{};
    // d a'/d a.p = ka (1 where the A side is on).
    const I ga = w * (pu.d1 * Ga * I::point(t.ka) + pd.d1 * Aa), gc = w * (pu.d1 * Gc * I::point(t.kc) + pd.d1 * Ac);
    const I ge = w * (pu.d1 + pd.d1), gb = w * (pu.d1 * omega + pd.d1 * Ab);
    if (!finite(v) || !finite(ga) || !finite(gc) || !finite(ge) || !finite(gb)) return std::nullopt;
    return Tangent{v, {ga, gc, ge, gb}, false};
  }

  static double secant(double x, double lo, double hi, double ilohi) { return (lo + hi - x) * ilohi; }
  static I secant_i(I x, double lo, double hi) {
    return (I::point(lo) + I::point(hi) - x) / (I::point(lo) * I::point(hi));
  }
  // A_j at the rates r, in double.
  static double secants(const Term& t, const Rates& r, int j) {
    return secant(r.a, t.alo, t.ahi, t.isa) + secant(r.c, t.clo, t.chi, t.isc) + r.e +
           t.lam[j] * (t.K[j] + t.al[j] * r.a + t.ga[j] * r.c) + t.kb[j] * r.b - t.k0[j];
  }
  static I secants_i(const Term& t, I a, I c, I e, I b, int j) {
    const I P = I::point(t.K[j]) + I::point(t.al[j]) * a + I::point(t.ga[j]) * c;
    return secant_i(a, t.alo, t.ahi) + secant_i(c, t.clo, t.chi) + e +
           I::point(t.lam[j]) * P + I::point(t.kb[j]) * b - I::point(t.k0[j]);
  }
  // The derivatives of A_j with respect to a, c, d, b.
  static std::array<I, 4> secants_grad_i(const Term& t, int j) {
    const I one = I::point(1);
    return {I::point(t.lam[j]) * I::point(t.al[j]) - one / (I::point(t.alo) * I::point(t.ahi)),
            I::point(t.lam[j]) * I::point(t.ga[j]) - one / (I::point(t.clo) * I::point(t.chi)),
            one, I::point(t.kb[j])};
  }

  // The planes above 1/(a c) on [alo, ahi] x [clo, chi]: through the
  // corners (alo, clo), (ahi, chi) and one of the other two (the concave
  // envelope of the convex 1/(a c) on the rectangle is the smaller of the
  // two, as q11 + q22 >= q12 + q21 when q11 q22 = q12 q21). The slopes are
  // doubles; the constant is the largest corner excess rounded up, so each
  // plane is >= 1/(a c) at the corners, hence on the rectangle (convexity).
  // Then b P_j: b P_j itself where b is a point, else McCormick with P_j's
  // range [Plo, Phi] over the rectangle, the piece smaller at the centre.
  void planes(Term& t) const {
    const double as[2] = {t.alo, t.ahi}, cs[2] = {t.clo, t.chi};
    auto q = [](double a, double c) { return I::point(1) / (I::point(a) * I::point(c)); };
    const double q11 = 1 / (t.alo * t.clo), q22 = 1 / (t.ahi * t.chi), q12 = 1 / (t.alo * t.chi),
                 q21 = 1 / (t.ahi * t.clo);
    const double da = t.ahi - t.alo, dc = t.chi - t.clo;
    t.al = {da > 0 ? (q22 - q12) / da : 0.0, da > 0 ? (q21 - q11) / da : 0.0};
    t.ga = {dc > 0 ? (q12 - q11) / dc : 0.0, dc > 0 ? (q22 - q21) / dc : 0.0};
    const double blo = X_[kB].lo, bhi = X_[kB].hi, bm = 0.5 * (blo + bhi);
    for (int j = 0; j < 2; ++j) {
      double K = -kInf, Plo = kInf, Phi = -kInf;
      for (double a : as)
        for (double c : cs)
          K = std::max(K, (q(a, c) - I::point(t.al[j]) * I::point(a) - I::point(t.ga[j]) * I::point(c)).hi);
      t.K[j] = K;
      for (double a : as)
        for (double c : cs) {
          const I P = I::point(K) + I::point(t.al[j]) * I::point(a) + I::point(t.ga[j]) * I::point(c);
          Plo = std::min(Plo, P.lo);
          Phi = std::max(Phi, P.hi);
        }
      if (blo == bhi) {
        t.lam[j] = blo, t.kb[j] = 0, t.k0[j] = 0;
        continue;
      }
      // b P <= bhi P + Plo b - bhi Plo and <= blo P + Phi b - blo Phi; the
      // constants rounded down keep them above.
      const double Pm = 0.5 * (Plo + Phi);
      if (bhi * Pm + Plo * bm - bhi * Plo <= blo * Pm + Phi * bm - blo * Phi)
        t.lam[j] = bhi, t.kb[j] = Plo, t.k0[j] = (I::point(bhi) * I::point(Plo)).lo;
      else
        t.lam[j] = blo, t.kb[j] = Phi, t.k0[j] = (I::point(blo) * I::point(Phi)).lo;
    }
  }

  void add(const FitPoint& p, double nat) {
    const I la = X_[kAp] + X_[kAs] * p.h, lc = X_[kCp] + X_[kCs] * p.h;  // p + s H over the box
    if (!(la.hi > 0) || !(lc.hi > 0)) {
      // F = 0 on the whole box: the natural term is exact.
      constant_lo_ = (I::point(constant_lo_) + I::point(nat)).lo;
      return;
    }
    // Built in place (a Term is some 270 bytes) and dropped again if it
    // turns out to be a constant.
    Term& t = terms_.emplace_back();
    t.h = p.h;
    t.hm = 0.5 * (p.h.lo + p.h.hi);
    t.w = p.w.lo;
    t.ylo = p.y.lo;
    t.yhi = p.y.hi;
    if (t.ylo > 0) t.iylo = 1 / t.ylo;
    // A rate that may vanish on the box is replaced by a concave (affine)
    // overestimator of max(0, l) on [l.lo, l.hi]: the secant k (l - l.lo)
    // plus delta > 0, k >= l.hi / (l.hi - l.lo) rounded up, so a' >= a+ on
    // the box and a' >= delta keeps Gc bounded (a larger delta weakens a'
    // but tightens psi_up's continuation; y/4 keeps F <= a' informative:
    // F needs a >= y). F itself may then be 0, so the A side is off.
    auto overestimate = [&](const I& l, double& k, double& off, double& delta, double& lo, double& hi) {
      if (l.lo > 0) {
        lo = l.lo, hi = l.hi;
        return;
      }
      k = (l.hi > l.lo) ? (I::point(l.hi) / (I::point(l.hi) - I::point(l.lo))).hi : 1.0;
      off = l.lo;
      delta = std::max({0.25 * p.y.lo, 1e-3 * l.hi, edge_terms_ ? kMinDelta : 0.0});
      lo = delta;
      hi = (I::point(k) * (I::point(l.hi) - I::point(l.lo)) + I::point(delta)).hi;
      t.lower = false;
    };
    overestimate(la, t.ka, t.la, t.da, t.alo, t.ahi);
    overestimate(lc, t.kc, t.lc, t.dc, t.clo, t.chi);
    // With the A side off and y_lo <= 0, psi_up = psi_dn = 0: the term is
    // its natural term, a constant.
    if (edge_terms_ && !t.lower && !(t.ylo > 0)) {
      terms_.pop_back();
      constant_lo_ = (I::point(constant_lo_) + I::point(nat)).lo;
      return;
    }
    const I ar{t.alo, t.ahi}, cr{t.clo, t.chi};
    const I one = I::point(1);
    // Gc: the McCormick piece of b W at b's lower end (exact when b is a
    // point), or at its upper end where that is larger at the centre.
    const I Wr = one / (ar * cr);
    const double bm = 0.5 * (X_[kB].lo + X_[kB].hi), Wm = 1 / ((0.5 * (t.alo + t.ahi)) * (0.5 * (t.clo + t.chi)));
    t.beta = X_[kB].lo, t.omega = Wr.lo;
    if (X_[kB].hi * Wm + Wr.hi * bm - X_[kB].hi * Wr.hi > t.beta * Wm + t.omega * bm - t.beta * t.omega)
      t.beta = X_[kB].hi, t.omega = Wr.hi;
    const I Gbox = one / ar + one / cr + E_[kE] + I::point(t.beta) * Wr + I::point(t.omega) * X_[kB] -
                   I::point(t.beta) * I::point(t.omega);
    t.T = tangent_point(t, Gbox.hi);
    t.isa = 1 / (t.alo * t.ahi);
    t.isc = 1 / (t.clo * t.chi);
    if (t.lower) planes(t);
    const Rates mid{0.5 * (t.alo + t.ahi), 0.5 * (t.clo + t.chi), 0.5 * (E_[kE].lo + E_[kE].hi),
                    0.5 * (X_[kB].lo + X_[kB].hi)};
    if (t.lower) t.j = secants(t, mid, 0) <= secants(t, mid, 1) ? 0 : 1;
    t.nat = nat;
  }

  Box X_, E_;
  bool edge_terms_;
  std::vector<Term> terms_;
  double constant_lo_ = 0;
};

}  // namespace

double reciprocal_bound(const Box& X, const std::vector<FitPoint>& points, const std::vector<double>& natural,
                        bool edge_terms, double floor, RelaxationPoint* point) {
  Box E = X;
  E[kE] = I::point(1) / X[kE];  // e = 1/d over the box
  // Projected Newton over the free coordinates, scaled by their half-widths.
  std::array<std::size_t, 6> free{};
  std::size_t nf = 0;
  double x[6], scale[6], trial[6];
  for (std::size_t k = 0; k < 6; ++k) {
    x[k] = E[k].lo + 0.5 * (E[k].hi - E[k].lo);
    if (point && std::isfinite((*point)[k])) x[k] = std::clamp((*point)[k], E[k].lo, E[k].hi);
    scale[k] = 0.5 * (E[k].hi - E[k].lo);
    if (E[k].lo < E[k].hi) free[nf++] = k;
  }
  auto ended = [&] {
    if (point) std::copy(x, x + 6, point->begin());
  };
  const Relaxation rel(X, E, points, natural, edge_terms);
  if (rel.empty()) {
    ended();
    return rel.constant();
  }
  double g[6];
  SmallMatrix H;
  double f = rel.value(x, g, &H);
  for (int it = 0; it < kNewtonIterations && nf > 0; ++it) {
    std::array<std::size_t, 6> act{};
    std::size_t na = 0;
    for (std::size_t i = 0; i < nf; ++i) {
      const std::size_t k = free[i];
      const double tol = 1e-12 * scale[k];
      if ((x[k] <= E[k].lo + tol && g[k] > 0) || (x[k] >= E[k].hi - tol && g[k] < 0)) continue;
      act[na++] = k;
    }
    if (na == 0) break;
    SmallMatrix A{};
    SmallVector rhs{}, p{};
    for (std::size_t i = 0; i < na; ++i) {
      rhs[i] = -g[act[i]] * scale[act[i]];
      for (std::size_t j = 0; j < na; ++j) {
        const std::size_t a = std::max(act[i], act[j]), c = std::min(act[i], act[j]);
        A[i][j] = H[a][c] * scale[act[i]] * scale[act[j]];
      }
    }
    if (!solve_spd(A, rhs, na, p)) break;
    double step = 1, fn = f;
    bool accepted = false;
    for (int h = 0; h < kHalvings; ++h, step *= 0.5) {
      std::copy(x, x + 6, trial);
      for (std::size_t i = 0; i < na; ++i) {
        const std::size_t k = act[i];
        trial[k] = std::clamp(x[k] + step * p[i] * scale[k], E[k].lo, E[k].hi);
      }
      fn = rel.value(trial);
      if (fn < f) {
        accepted = true;
        break;
      }
    }
    if (!accepted) break;
    const bool converged = f - fn <= 1e-12 * f;
    std::copy(trial, trial + 6, x);
    f = rel.value(x, g, &H);
    // The bound is at most min Psi <= Psi(x): once Psi(x) is below the
    // caller's bound (with room for the rounding of the double sum), the
    // relaxation cannot raise it.
    if (f < floor * (1 - 1e-9)) {
      ended();
      return 0;
    }
    if (converged) break;
  }
  ended();
  return std::max(rel.certify(x), 0.0);
}

}  // namespace ctmc::proofs_check
