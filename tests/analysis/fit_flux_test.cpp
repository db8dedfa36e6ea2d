// Fluxes and derivatives of the fitted families: GTH on ceres::Jet against the
// closed forms (tree theorem), hand-derived derivatives and finite differences.
#include <ceres/jet.h>
#include <doctest/doctest.h>

#include <array>
#include <cmath>

#include "ctmc/analysis/fit_flux.hpp"
#include "ctmc/analysis/fit.hpp"
#include "ctmc/analysis/fit_tables.hpp"
#include "ctmc/solvers/stationary.hpp"

using namespace ctmc::analysis;
using Jet12 = ceres::Jet<double, 12>;
using Jet4 = ceres::Jet<double, 4>;

namespace {
// Relative agreement of derivatives computed by different formulas in double.
constexpr double kDerivTol = 1e-11;
// Central differences with step 1e-6 have O(h^2) truncation plus O(eps/h) rounding.
constexpr double kFiniteDiffTol = 1e-6;

const std::array<double, 12> kFull = {0.7, 0.4, 0.3, 0.1, 1.2, -0.2, 0.9, 0.5, 2.0, 0.05, 0.6, 0.3};

template <int N>
std::array<ceres::Jet<double, N>, N> seeded(const double* x) {
  std::array<ceres::Jet<double, N>, N> j;
  for (int i = 0; i < N; ++i) j[i] = ceres::Jet<double, N>(x[i], i);
  return j;
}
}  // namespace

TEST_CASE("general-3 (GTH) equals full-three-state (tree theorem): values and Jet gradients") {
  const FamilySpec full{FitFamily::FullThreeState, 3}, gen{FitFamily::General, 3};
  for (double h : {-1.5, -0.3, 0.0, 0.8, 2.5}) {
    const auto x = seeded<12>(kFull.data());
    const Jet12 H(h);
    const Jet12 f_closed = family_flux<Jet12>(full, x.data(), H);
    const Jet12 f_gth = family_flux<Jet12>(gen, x.data(), H);
    CHECK(f_gth.a == doctest::Approx(f_closed.a).epsilon(kDerivTol));
    for (int i = 0; i < 12; ++i) {
      INFO("H = " << h << ", parameter " << i);
      CHECK(f_gth.v[i] == doctest::Approx(f_closed.v[i]).epsilon(kDerivTol).scale(1e-12));
    }
  }
}

TEST_CASE("GTH Jet gradient matches central finite differences") {
  const FamilySpec gen{FitFamily::General, 4};
  std::array<double, 24> theta;
  for (int i = 0; i < 24; ++i) theta[i] = (i % 2 == 0) ? 0.5 + 0.1 * i : 0.3 - 0.05 * i;  // offsets, slopes
  using Jet24 = ceres::Jet<double, 24>;
  for (double h : {-0.5, 0.25, 1.0}) {
    const auto x = seeded<24>(theta.data());
    const Jet24 f = family_flux<Jet24>(gen, x.data(), Jet24(h));
    for (int i = 0; i < 24; ++i) {
      auto tp = theta, tm = theta;
      const double step = 1e-6;
      tp[i] += step;
      tm[i] -= step;
      const double fd = (family_flux<double>(gen, tp.data(), h) - family_flux<double>(gen, tm.data(), h)) / (2 * step);
      INFO("H = " << h << ", parameter " << i);
      CHECK(f.v[i] == doctest::Approx(fd).epsilon(kFiniteDiffTol).scale(1e-8));
    }
  }
}

TEST_CASE("two-state: general-2 by GTH equals a d / (a + d); gradient by hand") {
  // Renewal process: flux B->R equals flux R->B, so spikes "into state 0"
  // (general family) give the same rate as spikes on B -> R (two-state).
  const double ap = 0.4, as = 1.5, d = 2.0;
  for (double h : {0.1, 1.0, 3.0}) {
    const double a = ap + as * h;
    const std::array<double, 4> g = {ap, as, d, 0.0};
    const auto x = seeded<4>(g.data());
    const Jet4 f = family_flux<Jet4>({FitFamily::General, 2}, x.data(), Jet4(h));
    CHECK(f.a == doctest::Approx(a * d / (a + d)).epsilon(1e-14));
    // dF/da = d^2/(a+d)^2, dF/dd = a^2/(a+d)^2; a = p + s H.
    const double dfa = d * d / ((a + d) * (a + d)), dfd = a * a / ((a + d) * (a + d));
    CHECK(f.v[0] == doctest::Approx(dfa).epsilon(kDerivTol));
    CHECK(f.v[1] == doctest::Approx(dfa * h).epsilon(kDerivTol));
    CHECK(f.v[2] == doctest::Approx(dfd).epsilon(kDerivTol));
    CHECK(f.v[3] == doctest::Approx(dfd * h).epsilon(kDerivTol));  // slope of the R -> B rate
  }
}

TEST_CASE("three-state closed form: value of the paper's example and hand gradient") {
  // a=2, b=1, c=3, d=1/2 at H = 0: F = acd / (d(a+b+c) + ac) = 3 / (3 + 6) = 1/3.
  const std::array<double, 6> theta = {2, 0, 1, 3, 0, 0.5};
  const auto x = seeded<6>(theta.data());
  using Jet6 = ceres::Jet<double, 6>;
  const Jet6 f = family_flux<Jet6>({FitFamily::ThreeState, 3}, x.data(), Jet6(0.0));
  CHECK(f.a == doctest::Approx(1.0 / 3.0).epsilon(1e-15));
  // dF/db = -a c d^2 / den^2 with den = 9: -3 * 0.5 / 81.
  CHECK(f.v[2] == doctest::Approx(-1.5 / 81.0).epsilon(kDerivTol));
  // dF/dd = a^2 c^2 / den^2 = 36/81.
  CHECK(f.v[5] == doctest::Approx(36.0 / 81.0).epsilon(kDerivTol));
}

TEST_CASE("rectified rate: inactive branch has zero derivative") {
  const std::array<double, 2> ps = {-1.0, 1.0};
  const auto x = seeded<2>(ps.data());
  using Jet2 = ceres::Jet<double, 2>;
  const Jet2 below = rectified_affine(x[0], x[1], Jet2(0.5));
  CHECK(below.a == 0.0);
  CHECK(below.v[0] == 0.0);
  CHECK(below.v[1] == 0.0);
  const Jet2 above = rectified_affine(x[0], x[1], Jet2(3.0));
  CHECK(above.a == doctest::Approx(2.0));
  CHECK(above.v[0] == doctest::Approx(1.0));
  CHECK(above.v[1] == doctest::Approx(3.0));
}

TEST_CASE("adjoint gradient of the general family equals the Jet-through-GTH gradient") {
  using Jet40 = ceres::Jet<double, 40>;
  std::array<double, 40> theta;
  for (int i = 0; i < 40; ++i) theta[i] = (i % 2 == 0) ? 0.2 + 0.07 * (i % 9) : 0.4 - 0.03 * (i % 13);
  theta[6] = -5.0;  // one rate rectified to 0 on part of the inputs (inactive branch)
  const FamilySpec gen{FitFamily::General, 5};
  for (double h : {-1.0, 0.3, 2.0}) {
    const auto x = seeded<40>(theta.data());
    const Jet40 f = family_flux<Jet40>(gen, x.data(), Jet40(h));
    double flux = 0;
    std::array<double, 40> grad;
    REQUIRE(general_flux_adjoint(5, theta.data(), h, flux, grad.data()));
    CHECK(flux == doctest::Approx(f.a).epsilon(1e-14));
    for (int i = 0; i < 40; ++i) {
      INFO("H = " << h << ", parameter " << i);
      CHECK(grad[i] == doctest::Approx(f.v[i]).epsilon(1e-10).scale(1e-12));
    }
  }
}

TEST_CASE("embedding general-n parameters into n+1 states keeps the flux") {
  std::vector<double> theta(24);
  for (int i = 0; i < 24; ++i) theta[i] = (i % 2 == 0) ? 0.3 + 0.11 * (i % 7) : 0.2 - 0.04 * (i % 5);
  const auto up = embed_general(theta, 4);
  REQUIRE(up.size() == 40);
  for (double h : {-0.7, 0.0, 1.3}) {
    const double f4 = family_flux<double>({FitFamily::General, 4}, theta.data(), h);
    const double f5 = family_flux<double>({FitFamily::General, 5}, up.data(), h);
    CHECK(f5 == doctest::Approx(f4).epsilon(1e-13));
  }
}

TEST_CASE("general family with a rate rectified to 0: closed class, matches the exact solver") {
  // general-3 where every rate into state 0 vanishes for H < 0 (0 -> transient
  // there, flux 0) and 1 -> 2 vanishes for H > 1/2 (state 2 transient).
  // Parameters in pair order 0->1, 0->2, 1->0, 1->2, 2->0, 2->1.
  const std::array<double, 12> theta = {1, 0, 0.5, 0, 0, 2, 1, -2, 0, 1, 0.7, 0};
  const auto m = ctmc::analysis::model_of({FitFamily::General, 3}, std::vector<double>(theta.begin(), theta.end()));
  for (double h : {-1.0, -0.25, 0.25, 0.75, 2.0}) {
    const double exact = ctmc::solvers::solve_stationary<double>(m, ctmc::solvers::Rational(h)).flux;
    INFO("H = " << h);
    CHECK(family_flux<double>({FitFamily::General, 3}, theta.data(), h) == doctest::Approx(exact).epsilon(1e-13));
    double f = -1;
    std::array<double, 12> grad;
    REQUIRE(general_flux_adjoint(3, theta.data(), h, f, grad.data()));
    CHECK(f == doctest::Approx(exact).epsilon(1e-13));
    const auto x = seeded<12>(theta.data());
    const Jet12 fj = family_flux<Jet12>({FitFamily::General, 3}, x.data(), Jet12(h));
    for (int i = 0; i < 12; ++i) CHECK(grad[i] == doctest::Approx(fj.v[i]).epsilon(1e-10).scale(1e-12));
  }
}

TEST_CASE("analytic gradients of the closed forms equal the Jet gradients and finite differences") {
  // Inputs on both sides of every kink (some rates rectified to 0 at some H).
  const std::array<double, 3> two = {0.4, 0.9, 1.7};
  const std::array<double, 6> three = {0.4, 0.9, 0.8, -0.5, 1.3, 2.1};
  struct Case {
    FamilySpec f;
    const double* theta;
    int np;
  };
  for (const Case& c : {Case{{FitFamily::TwoState, 2}, two.data(), 3}, Case{{FitFamily::ThreeState, 3}, three.data(), 6},
                        Case{{FitFamily::FullThreeState, 3}, kFull.data(), 12}}) {
    // No H within 0.05 of a kink (-3, -2, -1.8, -1.75, -0.44, 0.38, 6, -40):
    // the central difference below straddles none.
    for (double h : {-1.9, -0.6, 0.3, 1.1, 3.0}) {
      INFO(family_name(c.f) << ", H = " << h);
      std::array<double, 12> grad{};
      double flux = -1;
      REQUIRE(family_flux_gradient(c.f, c.theta, h, flux, grad.data()));
      std::array<Jet12, 12> xj;
      for (int i = 0; i < 12; ++i) xj[i] = Jet12(i < c.np ? c.theta[i] : 0.0, i);
      const Jet12 fj = family_flux<Jet12>(c.f, xj.data(), Jet12(h));
      CHECK(flux == doctest::Approx(fj.a).epsilon(1e-14));
      for (int i = 0; i < c.np; ++i) {
        INFO("parameter " << i);
        CHECK(grad[i] == doctest::Approx(fj.v[i]).epsilon(kDerivTol).scale(1e-14));
        // Central difference (the kinks are away from these H by more than the step).
        std::array<double, 12> up{}, dn{};
        for (int k = 0; k < c.np; ++k) up[k] = dn[k] = c.theta[k];
        up[i] += 1e-6;
        dn[i] -= 1e-6;
        const double fd = (family_flux<double>(c.f, up.data(), h) - family_flux<double>(c.f, dn.data(), h)) / 2e-6;
        // Rounding error of the difference quotient: ~1e-16 / 1e-6 = 1e-10.
        CHECK(std::abs(grad[i] - fd) <= kFiniteDiffTol * std::abs(fd) + 1e-9);
      }
    }
  }
}
