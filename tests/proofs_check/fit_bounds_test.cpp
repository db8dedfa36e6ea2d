// The enclosures behind the fit-optimality branch and bound, against
// independent references: the closed-form fluxes' ranges and parameter
// gradients over boxes (closed_flux.hpp) against the flux by GTH in MPFR and
// central differences of the closed form in MPFR at points of the box, and
// the Taylor-model least-squares bound (lsq_relaxation.hpp) against the
// minimum of its objective found by a dense grid, and the reciprocal
// relaxation's bound (reciprocal_relaxation.hpp) against the objective in
// MPFR at random points of the box.
#include <doctest/doctest.h>

#include <array>
#include <random>

#include "closed_flux.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/solvers/stationary.hpp"
#include "lsq_relaxation.hpp"
#include "reciprocal_relaxation.hpp"

using namespace ctmc;
using proofs_check::outward::I;
using solvers::Mpfr;
using solvers::Rational;

namespace {

using Theta = std::array<Mpfr, 6>;

// Eq. 2 (three-state) or a d / (a + d) (two-state) in MPFR, rates rectified.
Mpfr closed_form(bool three, const Theta& th, const Mpfr& H) {
  Mpfr a = th[0] + th[1] * H;
  if (a < 0) a = 0;
  if (!three) return a * th[2] / (a + th[2]);
  Mpfr c = th[3] + th[4] * H;
  if (c < 0) c = 0;
  return a * c * th[5] / (th[5] * (a + th[2] + c) + a * c);
}

bool contains(const I& x, const Mpfr& v, const Mpfr& slack) { return Mpfr(x.lo) - slack <= v && v <= Mpfr(x.hi) + slack; }

}  // namespace

TEST_CASE("closed-form flux and gradient enclosures hold GTH fluxes and MPFR derivatives inside the box") {
  const ctmc::PrecisionScope bits(256);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(0, 1);
  int checked = 0;
  for (bool three : {false, true}) {
    const std::size_t n = three ? 6 : 3;
    for (int trial = 0; trial < 60; ++trial) {
      // A box of width up to 1 per parameter; constant rates positive.
      std::array<I, 6> X;
      for (std::size_t k = 0; k < n; ++k) {
        const bool constant = three ? (k == 2 || k == 5) : k == 2;
        const double lo = constant ? 0.05 + 3 * unit(rng) : -2 + 4 * unit(rng), w = unit(rng);
        X[k] = {lo, lo + w};
      }
      const double h = -3 + 6 * unit(rng);
      const auto enc = three ? proofs_check::closed_flux::three_state(X, I::point(h), true)
                             : proofs_check::closed_flux::two_state(X, I::point(h), true);
      for (int s = 0; s < 20; ++s) {
        Theta th;
        std::vector<Rational> q(n);
        for (std::size_t k = 0; k < n; ++k) {
          q[k] = Rational(X[k].lo + (X[k].hi - X[k].lo) * unit(rng));
          th[k] = Mpfr(q[k]);
        }
        const Rational H(h);
        const solvers::Affine a{q[0], q[1]};
        const solvers::Model m = three ? solvers::three_state_model(a, {q[2], 0}, {q[3], q[4]}, {q[5], 0})
                                       : solvers::two_state_model(a, {q[2], 0});
        const Mpfr F = solvers::solve_stationary<Mpfr>(m, H).flux;
        CAPTURE(three);
        CAPTURE(trial);
        CHECK(contains(enc.F, F, 0));
        // Central differences (step 1e-25, error ~1e-50 where the flux is
        // smooth; a point within 1e-20 of a rate's kink is skipped).
        const Mpfr step("1e-25");
        const Mpfr va = th[0] + th[1] * Mpfr(H), vc = three ? th[3] + th[4] * Mpfr(H) : Mpfr(1);
        if (abs(va) < Mpfr("1e-20") || abs(vc) < Mpfr("1e-20")) continue;
        for (std::size_t k = 0; k < n; ++k) {
          Theta up = th, dn = th;
          up[k] += step;
          dn[k] -= step;
          const Mpfr dF = (closed_form(three, up, Mpfr(H)) - closed_form(three, dn, Mpfr(H))) / (2 * step);
          CAPTURE(k);
          CHECK(contains(enc.dF[k], dF, Mpfr("1e-40")));
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 5000);
}

TEST_CASE("Taylor-model least-squares bound: below and close to the minimum of its objective") {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    // Two variables, 30 terms: Phi(delta) = sum_m w_m dist(L_m + g_m . delta, [zlo_m, zhi_m])^2.
    proofs_check::LsqRelaxation q;
    q.n = 2;
    q.lo = {-0.5 - unit(rng), -0.5 - unit(rng)};
    q.hi = {0.5 + unit(rng), 0.5 + unit(rng)};
    for (int m = 0; m < 30; ++m) {
      q.L.push_back(-1 + 2 * unit(rng));
      q.g.push_back(-2 + 4 * unit(rng));
      q.g.push_back(-2 + 4 * unit(rng));
      const double y = -1 + 2 * unit(rng), R = 0.2 * unit(rng);
      q.zlo.push_back(y - R);
      q.zhi.push_back(y + R);
      q.w.push_back(unit(rng) / 30);
    }
    // The minimum over a 801 x 801 grid: an upper bound of the minimum, and
    // within the grid's resolution of it.
    double grid_min = INFINITY;
    for (int i = 0; i <= 800; ++i)
      for (int j = 0; j <= 800; ++j) {
        const double d[2] = {q.lo[0] + (q.hi[0] - q.lo[0]) * i / 800, q.lo[1] + (q.hi[1] - q.lo[1]) * j / 800};
        grid_min = std::min(grid_min, q.phi(d));
      }
    std::vector<double> at;
    const double b = q.bound(&at);
    CHECK(b <= grid_min);
    CHECK(b >= grid_min - 1e-4 * (1 + grid_min));
    REQUIRE(at.size() == 2);
    CHECK(q.phi(at.data()) <= grid_min * (1 + 1e-9) + 1e-300);
  }
}

TEST_CASE("reciprocal relaxation: below the least-squares objective in MPFR at every sampled point of the box") {
  // Random three-state boxes: b a point (the faces b = end) or a range,
  // rates that stay positive or whose zero crosses the data (the natural
  // terms), d over decades; random targets in [0, 1] on 30 points. The
  // bound must lie below f (paper eq. 2 in MPFR, not the closed_flux
  // enclosures the bound uses) at 400 random points and the corners.
  const ctmc::PrecisionScope bits(256);
  std::mt19937_64 rng(23), rng_start(29);
  std::uniform_real_distribution<double> unit(0, 1);
  int positive = 0, tight = 0;
  for (int trial = 0; trial < 120; ++trial) {
    CAPTURE(trial);
    std::array<I, 6> X;
    const double scale = std::pow(10.0, -1 + 3 * unit(rng));  // boxes from 0.1 to 100 times the rates' scale
    const bool small = trial % 3 == 0;                     // a third of the boxes near a point
    for (std::size_t k = 0; k < 6; ++k) {
      const bool constant = k == 2 || k == 5;
      double lo = constant ? scale * (0.01 + 2 * unit(rng)) : scale * (-1 + 3 * unit(rng));
      if (k == 1 || k == 4) lo = scale * (-0.3 + 0.6 * unit(rng));
      const double w = (small ? 0.02 : 0.5) * std::fabs(lo) * unit(rng) + (constant ? 0 : 1e-3 * scale);
      X[k] = {lo, lo + w};
    }
    if (trial % 2 == 0) X[2] = I::point(X[2].lo);  // b on a face
    std::vector<proofs_check::FitPoint> pts;
    std::vector<Mpfr> hs, ys;
    for (int m = 0; m < 30; ++m) {
      const Rational h = Rational(-3) + Rational(6 * m, 29), y = Rational(static_cast<long>(1000 * unit(rng)), 1000);
      pts.push_back({proofs_check::outward::enclose(h), proofs_check::outward::enclose(y),
                     proofs_check::outward::enclose(Rational(1, 30))});
      hs.emplace_back(h);
      ys.emplace_back(y);
    }
    // The natural terms as the branch and bound passes them (from the
    // closed_flux enclosures).
    std::vector<double> nat;
    for (const auto& p : pts) nat.push_back((p.w * sqr(proofs_check::closed_flux::three_state(X, p.h, false).F - p.y)).lo);
    const double b = proofs_check::reciprocal_bound(X, pts, nat);
    REQUIRE(b >= 0);
    // The solve started elsewhere (as the branch and bound starts a box at
    // its parent's solution): a point of the box, one outside it (clamped
    // into it), or NaN (the centre), in the relaxation's variables (e =
    // 1/d). The bound stays below f from any start. A floor below the bound
    // changes nothing.
    std::array<double, 6> start, lo, hi;
    for (std::size_t k = 0; k < 6; ++k) {
      lo[k] = k == 5 ? 1 / X[5].hi : X[k].lo;
      hi[k] = k == 5 ? 1 / X[5].lo : X[k].hi;
      start[k] = trial % 4 == 1 ? NAN : lo[k] + (hi[k] - lo[k]) * (-0.5 + 2 * unit(rng_start));
    }
    const double b_start = proofs_check::reciprocal_bound(X, pts, nat, true, 0, &start);
    REQUIRE(b_start >= 0);
    // Where it ended: in the box (e's ends enclose 1/d's, so they reach
    // past the rounded quotients by an ulp at most).
    for (std::size_t k = 0; k < 6; ++k) {
      CHECK(start[k] >= lo[k] - 1e-15 * std::fabs(lo[k]));
      CHECK(start[k] <= hi[k] + 1e-15 * std::fabs(hi[k]));
    }
    CHECK(proofs_check::reciprocal_bound(X, pts, nat, true, 0.5 * b) == b);
    auto f = [&](const Theta& th) {
      Mpfr s = 0;
      for (std::size_t m = 0; m < hs.size(); ++m) {
        const Mpfr r = closed_form(true, th, hs[m]) - ys[m];
        s += r * r / 30;
      }
      return s;
    };
    Mpfr fmin = 1e300;
    for (int s = 0; s < 464; ++s) {
      Theta th;
      for (std::size_t k = 0; k < 6; ++k) {
        // The 64 corners first, then random points.
        const double t = s < 64 ? ((s >> k) & 1) : unit(rng);
        th[k] = Mpfr(X[k].lo) + (Mpfr(X[k].hi) - Mpfr(X[k].lo)) * t;
      }
      const Mpfr v = f(th);
      if (v < fmin) fmin = v;
      CHECK(Mpfr(b) <= v);
      CHECK(Mpfr(b_start) <= v);
    }
    positive += b > 0;
    // On the small boxes (2% wide) the relaxation's loss, second order in
    // the width, leaves the bound within 2% of the sampled minimum.
    if (small && fmin > 0) {
      CHECK(Mpfr(b) >= fmin * Mpfr(0.98));
      ++tight;
    }
  }
  MESSAGE("reciprocal bound positive on ", positive, " of 120 boxes");
  CHECK(positive >= 100);
  CHECK(tight >= 30);
}

namespace {

// f(theta) = sum_m (F(H_m) - y_m)^2 / M in MPFR, and its least value over
// the 64 corners of X and `extra` random points of it.
Mpfr sampled_min(const std::array<I, 6>& X, const std::vector<Mpfr>& hs, const std::vector<Mpfr>& ys, int extra,
                 std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0, 1);
  Mpfr fmin = 1e300;
  for (int s = 0; s < 64 + extra; ++s) {
    Theta th;
    for (std::size_t k = 0; k < 6; ++k) {
      const double t = s < 64 ? ((s >> k) & 1) : unit(rng);
      th[k] = Mpfr(X[k].lo) + (Mpfr(X[k].hi) - Mpfr(X[k].lo)) * t;
    }
    Mpfr v = 0;
    for (std::size_t m = 0; m < hs.size(); ++m) {
      const Mpfr r = closed_form(true, th, hs[m]) - ys[m];
      v += r * r / static_cast<long>(hs.size());
    }
    if (v < fmin) fmin = v;
  }
  return fmin;
}

// The reciprocal bound over X for targets ys at points hs (weights 1/M),
// with the natural terms from the closed_flux enclosures, as the branch and
// bound passes them.
double reciprocal_on(const std::array<I, 6>& X, const std::vector<Rational>& h, const std::vector<Rational>& y) {
  std::vector<proofs_check::FitPoint> pts;
  std::vector<double> nat;
  for (std::size_t m = 0; m < h.size(); ++m) {
    pts.push_back({proofs_check::outward::enclose(h[m]), proofs_check::outward::enclose(y[m]),
                   proofs_check::outward::enclose(Rational(1, static_cast<long>(h.size())))});
    nat.push_back((pts.back().w * sqr(proofs_check::closed_flux::three_state(X, pts.back().h, false).F - pts.back().y)).lo);
  }
  return proofs_check::reciprocal_bound(X, pts, nat);
}

}  // namespace

TEST_CASE("reciprocal relaxation: a rate that vanishes at H = 0 on the box's edge, the clipped ReLUs' boxes") {
  // Where c.p's upper end is 0 and H = 0 is a data point, c's range there is
  // [c.p.lo, 0] up to rounding (the enclosure's upper end a denormal): the
  // point's target is 0, so the point is its natural term. The bound over
  // the rest must still hold and be informative. Targets clip(H, 0, 4) on
  // 41 points of [-2, 6], H = 0 among them.
  const ctmc::PrecisionScope bits(256);
  std::mt19937_64 rng(47);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<Rational> h, y;
  std::vector<Mpfr> hs, ys;
  for (int m = 0; m <= 40; ++m) {
    h.push_back(Rational(-2) + Rational(m, 5));
    y.push_back(std::clamp(h.back(), Rational(0), Rational(4)));
    hs.emplace_back(h.back());
    ys.emplace_back(y.back());
  }
  // A box of the cliprelu_4 search's last open ones (b on its lower face):
  // its minimum is about 8e-3; every bound but this one was below 2e-5.
  const std::array<I, 6> diagnosed{I{37.05, 44.19}, I{-5.371, -4.517}, I::point(1e-6), I{-0.2441, 0}, I{1.322, 1.953},
                                   I{20.54, 74.99}};
  const double b0 = reciprocal_on(diagnosed, h, y);
  const Mpfr f0 = sampled_min(diagnosed, hs, ys, 4000, rng);
  MESSAGE("diagnosed box: bound ", b0, ", sampled minimum ", f0.convert_to<double>());
  CHECK(Mpfr(b0) <= f0);
  CHECK(Mpfr(b0) >= f0 / 4);
  // Random boxes with a.p's or c.p's upper end at 0 (the rate's kink on
  // the box's edge at H = 0), b a point or a range.
  int informative = 0;
  for (int trial = 0; trial < 60; ++trial) {
    CAPTURE(trial);
    std::array<I, 6> X;
    const bool on_c = trial % 2 == 0;
    const double big = 20 + 200 * unit(rng), slope = -0.3 * big * unit(rng);
    X[on_c ? 0 : 3] = {big, big * (1 + 0.1 * unit(rng))};
    X[on_c ? 1 : 4] = {slope, slope + 0.1 * big * unit(rng)};
    const double cs = 0.8 + unit(rng);
    X[on_c ? 3 : 0] = {-0.5 * unit(rng) - 1e-3, 0};
    X[on_c ? 4 : 1] = {cs, cs * (1 + 0.5 * unit(rng))};
    const double b = std::pow(10.0, -6 + 9 * unit(rng));
    X[2] = trial % 3 == 0 ? I{b, 2 * b} : I::point(b);
    const double d = 5 + 200 * unit(rng);
    X[5] = {d, d * (1 + 3 * unit(rng))};
    const double bound = reciprocal_on(X, h, y);
    const Mpfr fmin = sampled_min(X, hs, ys, 400, rng);
    CHECK(bound >= 0);
    CHECK(Mpfr(bound) <= fmin);
    informative += Mpfr(bound) >= fmin / 10;
  }
  MESSAGE("bound within 10x of the sampled minimum on ", informative, " of 60 boxes");
  CHECK(informative >= 30);
}

TEST_CASE("reciprocal relaxation: a planted three-state target whose rate c vanishes at H = 0 exactly") {
  // y_m = F(theta*, H_m) exactly (rationals), theta* with c.p = 0: f has
  // the minimum 0 at theta*, which lies on the edge c.p = 0 of the boxes
  // around it, so every bound over those must be 0; boxes beside it (c.p
  // below theta*'s) must stay below the sampled objective.
  const ctmc::PrecisionScope bits(256);
  std::mt19937_64 rng(48);
  const Rational ap(30), as(-3), bb(1, 2), cp(0), cs(3, 2), dd(50);
  std::vector<Rational> h, y;
  std::vector<Mpfr> hs, ys;
  for (int m = 0; m <= 40; ++m) {
    const Rational H = Rational(-2) + Rational(m, 5);
    Rational a = ap + as * H, c = cp + cs * H;
    if (a < 0) a = 0;
    if (c < 0) c = 0;
    h.push_back(H);
    y.push_back(a * c == 0 ? Rational(0) : a * c * dd / (dd * (a + bb + c) + a * c));
    hs.emplace_back(H);
    ys.emplace_back(y.back());
  }
  for (double w : {0.01, 0.1, 1.0}) {
    CAPTURE(w);
    // theta* on the box's edge c.p = 0, b a point (a face) or a range.
    for (bool b_point : {true, false}) {
      const std::array<I, 6> X{I{30 * (1 - w), 30 * (1 + w)}, I{-3 * (1 + w), -3 * (1 - w)},
                               b_point ? I::point(0.5) : I{0.5 * (1 - w), 0.5 * (1 + w)}, I{-w, 0},
                               I{1.5 * (1 - w), 1.5 * (1 + w)}, I{50 * (1 - w), 50 * (1 + w)}};
      CHECK(reciprocal_on(X, h, y) == 0);
    }
    // Beside theta*: c.p in [-2w, -w] (c's kink at H in [w/1.5, 2w/1.5]).
    std::array<I, 6> Y{I{30 * (1 - w), 30 * (1 + w)}, I{-3 * (1 + w), -3 * (1 - w)}, I::point(0.5), I{-2 * w, -w},
                       I{1.5 * (1 - w), 1.5 * (1 + w)}, I{50 * (1 - w), 50 * (1 + w)}};
    const double bound = reciprocal_on(Y, h, y);
    const Mpfr fmin = sampled_min(Y, hs, ys, 2000, rng);
    MESSAGE("w = ", w, ": bound ", bound, ", sampled minimum ", fmin.convert_to<double>());
    CHECK(Mpfr(bound) <= fmin);
  }
}

TEST_CASE("reciprocal relaxation: rates whose kink lies inside the data, the clipped ReLUs' open boxes") {
  // Nearly all open boxes of the cliprelu_1 and cliprelu_2 searches at
  // 60000 boxes have a rate p + s H that changes sign at some data point
  // (its kink -p/s inside the data over the box). There each point's rate
  // is relaxed by the secant of max(0, l) over l's range [lo, hi], which at
  // the box's centre is the concave envelope of max(0, p + s H) over the
  // box (no concave overestimator is lower there), and which lets a rate
  // that is 0 count as hi |lo| / (hi - lo): sound, but the bound stays far
  // below the minimum. The bound must still lie below f (paper eq. 2 in
  // MPFR) at the corners and random points: on two diagnosed boxes with
  // the data of cliprelu_1 (401 points of [-2, 3], targets clip(H, 0, 1)),
  // and on planted targets.
  const ctmc::PrecisionScope bits(256);
  std::mt19937_64 rng(49);
  std::uniform_real_distribution<double> unit(0, 1);
  auto grid = [](int points, std::vector<Rational>& h, std::vector<Rational>& y, std::vector<Mpfr>& hs,
                 std::vector<Mpfr>& ys) {
    for (int m = 0; m < points; ++m) {
      h.push_back(Rational(-2) + Rational(5 * m, points - 1));
      y.push_back(std::clamp(h.back(), Rational(0), Rational(1)));
      hs.emplace_back(h.back());
      ys.emplace_back(y.back());
    }
  };
  {
    std::vector<Rational> h, y;
    std::vector<Mpfr> hs, ys;
    grid(401, h, y, hs, ys);
    // Two of the lowest open boxes (b on its upper face): c's kink in
    // [0.065, 0.56] and in [0, 0.18].
    const std::array<std::array<I, 6>, 2> diagnosed{
        {{I{125, 153.57}, I{-49.805, -42.969}, I::point(1000), I{-70.312, -15.625}, I{125, 239.28}, I{1.2604, 1.5399}},
         {I{22.767, 26.338}, I{-7.0801, -5.3711}, I::point(1000), I{-15.625, 0}, I{84.597, 104.8},
          I{2.0504, 2.5608}}}};
    for (const auto& X : diagnosed) {
      const double b = reciprocal_on(X, h, y);
      const Mpfr fmin = sampled_min(X, hs, ys, 600, rng);
      MESSAGE("diagnosed box: bound ", b, ", sampled minimum ", fmin.convert_to<double>());
      CHECK(b > 0);
      CHECK(Mpfr(b) <= fmin);
    }
  }
  // Planted: y_m = F(theta*, H_m) exactly (rationals) on 81 points, theta*
  // with a's kink (and on every other trial c's) inside the data, so that
  // f(theta*) = 0 and every bound over a box around theta* must be 0: a
  // relaxation that lets a rate fall below max(0, p + s H) rises above it
  // (as a secant slope halved does).
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    // Dyadic rationals, so that theta* is a point of doubles.
    auto q = [&](double lo, double hi) {
      return Rational(static_cast<long>(1024 * (lo + (hi - lo) * unit(rng))), 1024);
    };
    std::array<Rational, 6> th;
    // A rate s (H - k), k in (-1.8, 2.7), s of either sign.
    auto kinked = [&](std::size_t ip, std::size_t is) {
      th[is] = q(1, 50) * (trial % 4 < 2 ? 1 : -1);
      th[ip] = -th[is] * q(-1.8, 2.7);
    };
    kinked(0, 1);
    if (trial % 2 == 0) {
      kinked(3, 4);
    } else {
      th[3] = q(5, 50);  // c > 0 on [-2, 3]
      th[4] = -th[3] * q(0, 0.3);
    }
    th[2] = q(0.001, 10);
    th[5] = q(0.1, 20);
    std::vector<Rational> h, y;
    std::vector<Mpfr> hs, ys;
    for (int m = 0; m <= 80; ++m) {
      const Rational H = Rational(-2) + Rational(m, 16);
      Rational a = th[0] + th[1] * H, c = th[3] + th[4] * H;
      if (a < 0) a = 0;
      if (c < 0) c = 0;
      h.push_back(H);
      y.push_back(a * c == 0 ? Rational(0) : a * c * th[5] / (th[5] * (a + th[2] + c) + a * c));
      hs.emplace_back(H);
      ys.emplace_back(y.back());
    }
    // Boxes around theta* from 0.1% to 20% wide (b a point on every third).
    const double w = std::pow(10.0, -3 + 2.3 * unit(rng));
    std::array<I, 6> X;
    for (std::size_t k = 0; k < 6; ++k) {
      const double t = solvers::to_double(th[k]), r = w * std::fabs(t) * (0.2 + unit(rng));
      X[k] = {t - r * (0.1 + unit(rng)), t + r * (0.1 + unit(rng))};
    }
    if (trial % 3 == 0) X[2] = I::point(solvers::to_double(th[2]));
    REQUIRE(Mpfr(X[2].lo) > 0);
    REQUIRE(Mpfr(X[5].lo) > 0);
    const double bound = reciprocal_on(X, h, y);
    const Mpfr fmin = sampled_min(X, hs, ys, 300, rng);
    CHECK(bound == 0);  // f(theta*) = 0 with theta* in X
    CHECK(Mpfr(bound) <= fmin);
  }
}
