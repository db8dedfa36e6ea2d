// Flux-identity checks: the true closed forms are proved / agree exactly and to
// the MPFR tolerance; deliberately wrong closed forms are refuted by both the
// symbolic and the exact rational check. Small point counts keep this fast.
#include <doctest/doctest.h>

#include "ctmc/proofs_check/flux_identities.hpp"
#include "ctmc/solvers/stationary.hpp"

using namespace ctmc::proofs_check;
using ctmc::solvers::Polynomial;

namespace {

FluxCheckOptions small_options() {
  FluxCheckOptions o;
  o.seed = 7;
  o.rational_points = 40;
  o.mpfr_random_points = 10;
  o.stiff_random_points = 10;
  o.threads = 2;
  return o;
}

const ScalarCheck& find(const FluxCheckResult& r, const std::string& scalar) {
  for (const auto& s : r.scalars)
    if (s.scalar == scalar) return s;
  throw std::runtime_error("no scalar check " + scalar);
}

}  // namespace

TEST_CASE("three-state closed form matches the paper's worked value") {
  // REFERENCES.md: a = 2, b = 1, c = 3, d = 1/2 gives flux 1/3 (hand derivation).
  const auto c = family_case(FluxFamily::ThreeState);
  const auto f = c.closed_form({Rational(2), Rational(1), Rational(3), Rational(1, 2)});
  CHECK(f.num / f.den == Rational(1, 3));
  // The builder's chain, solved exactly at the same rates, gives the same number.
  std::mt19937_64 rng(3);
  const auto inst = c.build({Rational(2), Rational(1), Rational(3), Rational(1, 2)}, rng);
  CHECK(ctmc::solvers::solve_stationary<Rational>(inst.model, inst.H).flux == Rational(1, 3));
}

TEST_CASE("symbolic proofs for every family with at most 7 states") {
  for (const auto& c : standard_cases({1, 2, 3})) {
    CAPTURE(c.name);
    const auto s = check_symbolic(c);
    if (c.states <= 7) {
      CHECK(s.verdict == Verdict::Proved);
      CHECK(s.trees > 0);
      CHECK(!s.derived_text.empty());
    } else {
      CHECK(s.verdict == Verdict::Unknown);  // bernstein(N=3) has 8 states
    }
  }
}

TEST_CASE("the three-state derived formula is the paper's eq. 2") {
  const auto s = check_symbolic(family_case(FluxFamily::ThreeState));
  CHECK(s.derived_text == "a*c*d / (a*c + a*d + b*d + c*d)");
  CHECK(s.trees == 4);
}

TEST_CASE("true closed forms pass every numeric check") {
  const auto o = small_options();
  for (const auto& c : standard_cases({1, 2, 5})) {
    CAPTURE(c.name);
    const auto r = check_family(c, o);
    CHECK(r.passed());
    const auto& exact = find(r, "rational");
    CHECK(exact.points == o.rational_points);
    CHECK(exact.failures == 0);
    const auto& m256 = find(r, "mpfr-256");
    CHECK(m256.failures == 0);
    CHECK(m256.min_correct_bits >= 248);
    CHECK(find(r, "mpfr-1024").min_correct_bits >= 1016);
    const auto& iv = find(r, "mpfi-256");
    CHECK(iv.failures == 0);         // every enclosure contains the exact flux
    CHECK(iv.max_rel_error < 1e-60);  // and is tight
    // GTH in double keeps componentwise relative accuracy on stiff chains
    // (O'Cinneide 1993): many correct digits even at rates 1e-12 .. 1e12.
    CHECK(find(r, "double-gth").min_correct_digits >= 12);
  }
}

TEST_CASE("on the stiff three-state grid double GTH keeps its digits and dense LU does not") {
  // Rates at 1e-12, 1, 1e12 in every combination: LU subtracts and loses the
  // small stationary probabilities; GTH never subtracts. Both are measured
  // against the exact rational flux.
  const auto r = check_family(family_case(FluxFamily::ThreeState), small_options());
  const auto& gth = find(r, "double-gth");
  const auto& lu = find(r, "double-lu");
  CHECK(gth.min_correct_digits >= 14);
  CHECK(lu.min_correct_digits < 4);
  CHECK(lu.max_rel_error > 1e-6);
}

TEST_CASE("a wrong three-state closed form is refuted symbolically and exactly") {
  auto c = family_case(FluxFamily::ThreeState);
  // a*b instead of a*c in the denominator: a plausible transcription slip.
  c.closed_form = [](const std::vector<Rational>& p) {
    return ctmc::solvers::Fraction<Rational>{p[0] * p[2] * p[3], p[3] * (p[0] + p[1] + p[2]) + p[0] * p[1]};
  };
  c.closed_form_symbolic = [](const std::vector<Polynomial>& p) {
    return ctmc::solvers::Fraction<Polynomial>{p[0] * p[2] * p[3], p[3] * (p[0] + p[1] + p[2]) + p[0] * p[1]};
  };
  const auto r = check_family(c, small_options());
  CHECK(r.symbolic.verdict == Verdict::Refuted);
  CHECK(find(r, "rational").failures > 0);
  CHECK(find(r, "mpfr-256").failures > 0);
  CHECK_FALSE(r.passed());
}

TEST_CASE("a wrong Bernstein closed form is refuted symbolically and exactly") {
  auto c = family_case(FluxFamily::Bernstein, 2);
  // rho M / (rho + 2 M): off by a factor in the saturation term.
  c.closed_form = [](const std::vector<Rational>& p) {
    const auto f = ctmc::solvers::bernstein_flux(std::vector<Rational>{p[2], p[3], p[4]}, p[5], p[0]);
    return ctmc::solvers::Fraction<Rational>{f.num, f.den + (f.den - p[5])};
  };
  c.closed_form_symbolic = [](const std::vector<Polynomial>& p) {
    const auto f = ctmc::solvers::bernstein_flux(std::vector<Polynomial>{p[2], p[3], p[4]}, p[5], p[0]);
    return ctmc::solvers::Fraction<Polynomial>{f.num, f.den + (f.den - p[5])};
  };
  const auto r = check_family(c, small_options());
  CHECK(r.symbolic.verdict == Verdict::Refuted);
  CHECK(find(r, "rational").failures > 0);
  CHECK_FALSE(r.passed());
}

TEST_CASE("results do not depend on the thread count") {
  auto o = small_options();
  const auto c = family_case(FluxFamily::Bernstein, 4);
  o.threads = 1;
  const auto a = check_family(c, o);
  o.threads = 2;
  const auto b = check_family(c, o);
  REQUIRE(a.scalars.size() == b.scalars.size());
  for (std::size_t i = 0; i < a.scalars.size(); ++i) {
    CHECK(a.scalars[i].max_rel_error == b.scalars[i].max_rel_error);
    CHECK(a.scalars[i].worst == b.scalars[i].worst);
  }
}
