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
  std::mt19937_64 rng(23);
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
