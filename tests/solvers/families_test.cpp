// Closed-form fluxes of the families (paper eq. 2, tree theorem, Bernstein
// construction) against the general stationary solvers on the models the
// family builders produce: exactly in rationals, and in double/MPFR on long
// Bernstein chains.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <random>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/solvers/stationary.hpp"
#include "scalar_accuracy.hpp"

using namespace ctmc;
using namespace ctmc::solvers;

namespace {

Rational random_rational(std::mt19937_64& rng, int lo, int hi) {
  std::uniform_int_distribution<int> num(lo, hi), den(1, 19);
  return Rational(num(rng), den(rng));
}

// A rectified affine rate; a constant one is kept nonnegative (validation rejects negative constants).
Affine random_affine(std::mt19937_64& rng) {
  Affine r{random_rational(rng, -10, 40), random_rational(rng, -5, 5)};
  if (r.slope == 0 && r.offset < 0) r.offset = -r.offset;
  return r;
}

}  // namespace

TEST_CASE("two-state and three-state closed forms equal GTH exactly at random rational rates and inputs") {
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 60; ++trial) {
    const Affine a = random_affine(rng), b{random_rational(rng, 1, 30), 0}, c = random_affine(rng),
                 d{random_rational(rng, 1, 30), 0};
    const Rational h = random_rational(rng, -20, 20);
    const auto m2 = two_state_model(a, d);
    const auto m3 = three_state_model(a, b, c, d);
    CHECK(solve_stationary<Rational>(m2, h).flux == two_state_flux<Rational>(a.at(h), d.at(h)).value());
    CHECK(solve_stationary<Rational>(m3, h).flux ==
          three_state_flux<Rational>(a.at(h), b.at(h), c.at(h), d.at(h)).value());
  }
}

TEST_CASE("full three-state: tree-theorem closed form equals GTH exactly") {
  std::mt19937_64 rng(2);
  int checked = 0;
  for (int trial = 0; trial < 80; ++trial) {
    std::array<Affine, 6> r;
    for (auto& x : r) x = random_affine(rng);
    const auto m = full_three_state_model(r);
    const Rational h = random_rational(rng, -20, 20);
    std::array<Rational, 6> rates;
    for (std::size_t k = 0; k < 6; ++k) rates[k] = r[k].at(h);
    Rational flux;
    try {
      flux = solve_stationary<Rational>(m, h).flux;
    } catch (const ctmc::InputError&) {
      continue;  // several closed classes at this H: no unique stationary distribution
    }
    const auto f = full_three_state_flux<Rational>(rates);
    REQUIRE(f.den != 0);
    CHECK(flux == f.value());
    ++checked;
  }
  CHECK(checked > 40);
}

TEST_CASE("full three-state reduces to the paper's chain: flux into B = flux out of B") {
  // With BR = RG = 0 the chain is eq. 1; flux into B = pi_G b + pi_R d = pi_B a.
  const Rational a(2), b(1), c(3), d(1, 2);
  const auto f = full_three_state_flux<Rational>({a, 0, b, c, d, 0}).value();
  const Rational pi_b(2, 9);  // hand-derived (see gth_test.cpp)
  CHECK(f == pi_b * a);
}

TEST_CASE("model metadata names the family and its parameters as exact strings") {
  const auto m = three_state_model(Affine{Rational(5, 48), 2}, Affine{1, 0}, Affine{Rational(-1, 3), 1}, Affine{7, 0});
  CHECK(m.meta["family"] == "three-state");
  CHECK(m.meta["a"]["offset"] == "5/48");
  CHECK(m.meta["c"]["slope"] == "1");
  const auto bm = bernstein_model({0, Rational(1, 2), 1}, 3, 1, -2, 6);
  CHECK(bm.meta["family"] == "bernstein");
  CHECK(bm.meta["N"] == 2);
  CHECK(bm.meta["kappa"][1] == "0.5");
  CHECK(bm.size() == 6);
  CHECK_THROWS_AS(bernstein_model({1, -1}, 1, 1, 0, 1), ctmc::InputError);
  CHECK_THROWS_AS(bernstein_model({1, 1}, 1, 1, 1, 1), ctmc::InputError);
  CHECK_THROWS_AS(two_state_model(Affine{-1, 0}, Affine{1, 0}), ctmc::InputError);
}

TEST_CASE("Bernstein chain: sparse and dense GTH flux equal rho M / (rho + M) exactly for small N") {
  std::mt19937_64 rng(3);
  for (std::size_t n = 1; n <= 8; ++n) {
    std::vector<Rational> kappa;
    for (std::size_t i = 0; i <= n; ++i) kappa.push_back(random_rational(rng, 0, 20));
    const Rational rho = random_rational(rng, 1, 30), gamma = random_rational(rng, 1, 9);
    const Rational imin(-2), imax(6);
    const auto m = bernstein_model(kappa, rho, gamma, imin, imax);
    for (const Rational& input : {Rational(-3), Rational(-2), Rational(1, 3), Rational(5, 2), Rational(6), Rational(9)}) {
      Rational u = (input - imin) / (imax - imin);
      u = u < 0 ? Rational(0) : (u > 1 ? Rational(1) : u);  // the rectified rates clamp u
      const auto expected = bernstein_flux<Rational>(kappa, rho, u).value();
      CHECK(solve_stationary<Rational>(m, input, Method::Sparse).flux == expected);
      CHECK(solve_stationary<Rational>(m, input, Method::Dense).flux == expected);
    }
  }
}

TEST_CASE("Bernstein polynomial by de Casteljau equals the power-basis sum exactly") {
  const std::vector<Rational> kappa{3, Rational(1, 2), 0, 7, Rational(5, 3)};
  const Rational u(2, 7);
  Rational sum(0), binom(1);
  const int n = 4;
  for (int i = 0; i <= n; ++i) {
    Rational term = kappa[static_cast<std::size_t>(i)] * binom;
    for (int k = 0; k < i; ++k) term *= u;
    for (int k = 0; k < n - i; ++k) term *= 1 - u;
    sum += term;
    binom = binom * (n - i) / (i + 1);
  }
  CHECK(bernstein_polynomial(kappa, u) == sum);
}

TEST_CASE("long Bernstein chain N = 2000: sparse GTH in double (rescaled) agrees with MPFR") {
  // Unnormalized back-substitution values reach C(N, N/2) ~ 1e600 here, beyond
  // double's range: this exercises the rescaling path of gth_sparse<double>.
  const ctmc::PrecisionScope precision_256_at_133(256);
  const std::size_t n = 2000;
  std::vector<Rational> kappa;
  for (std::size_t i = 0; i <= n; ++i) kappa.push_back(Rational(static_cast<long>(i * i + 1), static_cast<long>(n * n)));
  const auto m = bernstein_model(kappa, 3, 1, 0, 1);
  for (const Rational& input : {Rational(1, 2), Rational(1, 10), Rational(97, 100)}) {
    const auto d = solve_stationary<double>(m, input, Method::Sparse);
    const auto p = solve_stationary<Mpfr>(m, input, Method::Sparse);
    const double rel = to_double(abs(Mpfr(d.flux) - p.flux) / p.flux);
    CHECK(rel < 1e-12);
    double mass = 0;
    for (double x : d.pi) mass += x;
    CHECK(std::abs(mass - 1) < 1e-12);
    // Independent reference: rho M / (rho + M) at 256 bits (de Casteljau).
    std::vector<Mpfr> km;
    for (const auto& k : kappa) km.push_back(from_rational<Mpfr>(k));
    const auto f = bernstein_flux<Mpfr>(km, Mpfr(3), from_rational<Mpfr>(input)).value();
    CHECK(to_double(abs(p.flux - f) / f) < 1e-70);
  }
}

TEST_CASE("closed_form_flux from a model's metadata equals GTH; mismatched structure gives nullopt") {
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 20; ++trial) {
    std::array<Affine, 6> r;
    for (auto& x : r) x = random_affine(rng);
    const Affine b{random_rational(rng, 1, 30), 0}, d{random_rational(rng, 1, 30), 0};
    const Rational h = random_rational(rng, -20, 20);
    for (const Model& m : {two_state_model(r[0], d), three_state_model(r[0], b, r[1], d), full_three_state_model(r)}) {
      const auto cf = closed_form_flux<Rational>(m, h);
      REQUIRE(cf.has_value());
      try {
        CHECK(solve_stationary<Rational>(m, h).flux == cf->value());
      } catch (const ctmc::InputError&) {
        // several closed classes (full three-state only): nothing to compare
      }
    }
  }
  auto m = three_state_model(Affine{1, 0}, Affine{1, 0}, Affine{1, 0}, Affine{1, 0});
  m.meta["family"] = "two-state";
  CHECK_FALSE(closed_form_flux<Rational>(m, 0).has_value());
  m.meta["family"] = "no-such-family";
  CHECK_FALSE(closed_form_flux<Rational>(m, 0).has_value());
  auto bm = bernstein_model({1, 2, 3}, 4, 1, 0, 1);
  CHECK(closed_form_flux<Rational>(bm, Rational(1, 2))->value() == Rational(4 * 2, 4 + 2));  // M(1/2) = (1+4+3)/4 = 2
  bm.meta["kappa"][2] = "5";  // meta no longer describes the transitions
  CHECK_FALSE(closed_form_flux<Rational>(bm, Rational(1, 2)).has_value());
}

namespace {
// The closed forms are ratios of sums of products of nonnegative rates (the
// tree theorem): no cancellation, so a few roundings per product and sum.
// Relative error bound in units of u = 2^-p (scalar_accuracy.hpp); largest
// observed 3.0 u (MPFR), 2.4 u (double). Intervals: the relative width, the
// same roundings enclosed and not cancelling; largest observed 23 u.
constexpr double kClosedFormUlps = 8;
constexpr double kClosedFormIntervalUlps = 64;
}  // namespace

TEST_CASE_TEMPLATE("closed_form_flux of two-, three- and full-three-state models: the exact GTH flux to the scalar's accuracy",
                   T, CTMC_ALL_SCALARS) {
  // Reference: the stationary flux by GTH in exact rationals (solve_stationary),
  // independent of the closed forms (paper eq. 2, the tree theorem).
  // Random rectified affine rates at random rational H; MPFR and MPFI at 64,
  // 256 and 1024 bits.
  using Acc = test::ScalarAccuracy<T>;
  const double bound = Acc::kEnclosure ? kClosedFormIntervalUlps : kClosedFormUlps;
  std::mt19937_64 rng(5);
  double worst = 0;
  int checked = 0;
  for (int trial = 0; trial < 30; ++trial) {
    std::array<Affine, 6> r;
    for (auto& x : r) x = random_affine(rng);
    const Affine b{random_rational(rng, 1, 30), 0}, d{random_rational(rng, 1, 30), 0};
    const Rational h = random_rational(rng, -20, 20);
    for (const Model& m : {two_state_model(r[0], d), three_state_model(r[0], b, r[1], d), full_three_state_model(r)}) {
      Rational exact;
      try {
        exact = solve_stationary<Rational>(m, h).flux;
      } catch (const ctmc::InputError&) {
        continue;  // several closed classes (full three-state only): no unique flux
      }
      if (exact == 0) continue;  // a relative error needs a nonzero flux; 0 is checked exactly elsewhere
      for (unsigned bits : Acc::precisions()) {
        PrecisionScope scope(bits);
        const auto cf = closed_form_flux<T>(m, h);
        REQUIRE(cf.has_value());
        const double err = Acc::error_ulps(cf->value(), exact);
        INFO(Acc::name() << " " << family_name(m) << " at H = " << to_string(h) << ", " << Acc::bits()
                         << " bits: error " << err << " ulps");
        CHECK(err <= bound);
        worst = std::max(worst, err);
        ++checked;
      }
    }
  }
  CHECK(checked > 60);
  MESSAGE(Acc::name() << " closed forms: largest error " << worst << " ulps (bound " << bound << ")");
}

TEST_CASE("closed_form_flux of a long Bernstein chain (N = 3000, mode-relative weights) equals MPFR GTH") {
  const ctmc::PrecisionScope precision_256_at_234(256);
  const std::size_t n = 3000;
  std::vector<Rational> kappa;
  for (std::size_t i = 0; i <= n; ++i) kappa.push_back(Rational(static_cast<long>(i % 7 + 1), 3));
  const auto m = bernstein_model(kappa, 5, 2, -1, 1);
  for (const Rational& input : {Rational(-1, 3), Rational(1, 7), Rational(-2), Rational(2)}) {
    const auto p = solve_stationary<Mpfr>(m, input, Method::Sparse).flux;
    const auto cm = closed_form_flux<Mpfr>(m, input)->value();
    const auto cd = closed_form_flux<double>(m, input)->value();
    CHECK(to_double(abs(cm - p) / p) < 1e-68);
    CHECK(std::abs(cd - to_double(p)) / to_double(p) < 1e-11);
  }
}

TEST_CASE("closed_form_flux of a Bernstein chain near u = 1 with kappa_N = 0 keeps full relative accuracy") {
  // M_N(u) ~ N kappa_{N-1} (1 - u) there: 1 - u must come from the exact u,
  // not from u rounded into the scalar (double lost 8 digits at
  // u = 1 - 1e-9 and all of them at 1 - 1e-20; 256-bit MPFR lost 18).
  const ctmc::PrecisionScope precision_256_at_252(256);
  for (std::size_t n : {std::size_t{4}, std::size_t{40}}) {
    std::vector<Rational> kappa;
    for (std::size_t i = 0; i <= n; ++i) kappa.push_back(Rational(static_cast<long>(n - i), static_cast<long>(n)));
    const auto m = bernstein_model(kappa, 2, 1, 0, 1);
    for (const Rational eps : {Rational(1, 1000000000), Rational(1, 1000000) / 1000000 / 1000000 / 100}) {
      const Rational input = 1 - eps;
      const Rational exact = closed_form_flux<Rational>(m, input)->value();
      REQUIRE(solve_stationary<Rational>(m, input).flux == exact);
      CHECK(relative_error(closed_form_flux<double>(m, input)->value(), exact) < 1e-14);  // O(N eps)
      CHECK(relative_error(closed_form_flux<Mpfr>(m, input)->value(), exact) < 1e-74);
    }
  }
}

TEST_CASE("closed_form_flux in double: products of tiny or huge rates neither underflow nor overflow") {
  // Each closed form is homogeneous of degree 1 in the rates; in double it is
  // evaluated on rates scaled by a power of two. Unscaled, the two-state a d
  // underflowed to 0 at a = d = 1e-170 (closed form 0 for a flux of 5e-171)
  // and three-state products overflowed (inf / inf = NaN) at H = 1e160.
  const Rational tiny = *parse_exact("1e-170"), huge = *parse_exact("1e160");
  const auto two = two_state_model(Affine{0, 1}, Affine{3 * tiny, 0});
  const auto three = three_state_model(Affine{Rational(7, 5), Rational(3, 4)}, Affine{Rational(23, 20), 0},
                                       Affine{Rational(9, 5), 1}, Affine{10, 0});
  // a at its kink (a = 3/4 tiny) with b = d = tiny: every product of the closed form is ~1e-340 or below.
  const auto three_kink = three_state_model(Affine{Rational(7, 5), Rational(3, 4)}, Affine{tiny, 0},
                                            Affine{Rational(9, 5), 0}, Affine{tiny, 0});
  std::array<Affine, 6> r;
  for (std::size_t k = 0; k < 6; ++k) r[k] = Affine{Rational(static_cast<long>(k + 1)), k % 2 ? Rational(1) : Rational(0)};
  const auto full = full_three_state_model(r);
  std::vector<Rational> kappa{0, Rational(1, 3), 2};
  for (auto& k : kappa) k *= tiny;
  const auto bern = bernstein_model(kappa, 5 * tiny, 1, 0, 1);
  const std::vector<std::pair<const Model*, Rational>> cases{
      {&two, tiny}, {&three, huge}, {&three_kink, -Rational(28, 15) + tiny}, {&full, huge}, {&bern, Rational(1, 3)}};
  for (const auto& [m, h] : cases) {
    const Rational exact = closed_form_flux<Rational>(*m, h)->value();
    REQUIRE(solve_stationary<Rational>(*m, h).flux == exact);
    const double d = closed_form_flux<double>(*m, h)->value();
    INFO(family_name(*m) << " at H = " << to_double(h) << ": " << d << " for " << to_double(exact));
    CHECK(relative_error(d, exact) < 1e-15);
  }
}
