// The Bernstein construction (paper Appendix B): claim 1 exactly in rationals
// against an independent binomial sum, the certified sup error against exact
// values where they are known, L_h against its closed form, Voronovskaya,
// and every bad-input case.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>

#include "ctmc/proofs_check/bernstein.hpp"
#include "ctmc/proofs_check/bernstein_claims.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/solvers/stationary.hpp"

using namespace ctmc;
using proofs_check::Verdict;
using solvers::Integer;
using solvers::Rational;

namespace {

Integer choose(int n, int k) {
  Integer r(1);
  for (int j = 1; j <= k; ++j) r = r * Integer(n - k + j) / Integer(j);
  return r;
}

Rational power(const Rational& x, int e) {
  Rational r(1);
  for (int k = 0; k < e; ++k) r *= x;
  return r;
}

// M_N(u) = sum_i kappa_i C(N,i) u^i (1-u)^(N-i), directly.
Rational bernstein_direct(const std::vector<Rational>& kappa, const Rational& u) {
  const int n = static_cast<int>(kappa.size()) - 1;
  Rational s(0);
  for (int i = 0; i <= n; ++i) s += kappa[i] * Rational(choose(n, i)) * power(u, i) * power(Rational(1) - u, n - i);
  return s;
}

proofs_check::BernsteinProblem problem(const char* act, int lo, int hi, Rational rho) {
  return proofs_check::make_problem(activations::parse_activation(act), Rational(lo), Rational(hi), rho, std::nullopt,
                                    128);
}

}  // namespace

TEST_CASE("claim 1 exactly: generator flux = rho M / (rho + M) for small N, any kappa >= 0") {
  for (int n = 1; n <= 7; ++n) {
    // Arbitrary nonnegative rates (not monotone, some zero): the identity holds for any kappa.
    std::vector<Rational> kappa;
    for (int i = 0; i <= n; ++i) kappa.push_back(Rational((i * 7 + 3) % 5, 3));
    const Rational rho(5, 2);
    const auto model = solvers::bernstein_model(kappa, rho, Rational(3, 2), Rational(-2), Rational(6));
    for (int a = 0; a <= 8; ++a) {
      const Rational u(a, 8);
      const Rational H = Rational(-2) + Rational(8) * u;
      const auto st = solvers::solve_stationary<Rational>(model, H, solvers::Method::Sparse, "test");
      const Rational m = bernstein_direct(kappa, u);
      INFO("N = " << n << ", u = " << a << "/8");
      CHECK(st.flux == rho * m / (rho + m));
    }
  }
}

TEST_CASE("claim 1: symbolic proof for all N and numeric checks through the library") {
  std::vector<std::string> ids;
  const auto c = proofs_check::claim1_symbolic(&ids);
  CHECK(c.verdict == Verdict::Proved);
  CHECK(ids.size() >= 6);
  const auto p = problem("sigmoid", -8, 8, Rational(2));
  const std::vector<Rational> us = {Rational(0), Rational(1, 3), Rational(1, 2), Rational(1)};
  for (const auto& pt : proofs_check::claim1_numeric(p, 12, us)) CHECK(pt.verdict == Verdict::Proved);
  // Exact rationals up to N = 256 by default, MPFI above the limit given.
  for (const auto& pt : proofs_check::claim1_numeric(p, 200, us)) CHECK(pt.verdict == Verdict::Proved);
  for (const auto& pt : proofs_check::claim1_numeric(p, 200, us, 48)) {
    CHECK(pt.method == "MPFI");
    CHECK(pt.verdict == Verdict::Unknown);  // MPFI agreement is not a proof
    CHECK(pt.max_rel_gap < 1e-9);
  }
}

TEST_CASE("M_N enclosure at u = 1/2 for h(x) = (x - 1/2)_+: E(K/N - 1/2)_+ exactly") {
  // B_N h(1/2) - h(1/2) = E(K/N - 1/2)_+ = E|K/N - 1/2| / 2, computed here by
  // the direct rational sum, for N up to 200, then by de Moivre for 1e5.
  for (int n : {1, 2, 3, 10, 51, 200}) {
    std::vector<activations::Ivl> kiv;
    std::vector<Rational> kr;
    for (int i = 0; i <= n; ++i) {
      Rational k = Rational(i, n) - Rational(1, 2);
      if (k < 0) k = 0;
      kr.push_back(k);
      kiv.emplace_back(128);
      activations::set_rational(kiv.back(), k);
    }
    activations::Ivl u(128), kmax(128), m(128);
    mpfi_set_d(u, 0.5);
    mpfi_set_d(kmax, 0.5);
    proofs_check::bernstein_sum(m, n, u, [&](std::int64_t i) -> mpfi_srcptr { return kiv[i]; }, kmax);
    const Rational exact = bernstein_direct(kr, Rational(1, 2));
    INFO("N = " << n);
    CHECK(m.lo() <= solvers::to_double(exact));
    CHECK(m.hi() >= solvers::to_double(exact));
    CHECK(m.hi() - m.lo() <= 1e-10 * solvers::to_double(exact));
  }
}

TEST_CASE("certified sup error >= the exact error where it is known (relu, psi(1/2) = 0)") {
  // phi = relu on [-1, 1]: psi(u) = (2u - 1)_+, psi(1/2) = 0, so the error at
  // u = 1/2 is g(M_N(1/2)) with kappa_i = h(i/N) rational: an exact rational.
  const Rational rho(3);
  const auto p = problem("relu", -1, 1, rho);
  for (int n : {4, 16, 64}) {
    std::vector<Rational> kr;
    for (int i = 0; i <= n; ++i) {
      Rational x = Rational(2 * i, n) - 1;
      if (x < 0) x = 0;
      kr.push_back(rho * x / (rho - x));
    }
    const Rational m = bernstein_direct(kr, Rational(1, 2));
    const double exact_at_half = solvers::to_double(rho * m / (rho + m));
    // Brute force: exact rational errors on a grid, a lower bound of the sup.
    double grid_max = 0;
    for (int a = 0; a <= 400; ++a) {
      const Rational u(a, 400);
      const Rational mm = bernstein_direct(kr, u);
      Rational psi = 2 * u - 1;
      if (psi < 0) psi = 0;
      grid_max = std::max(grid_max, std::fabs(solvers::to_double(rho * mm / (rho + mm) - psi)));
    }
    for (auto arith : {proofs_check::Arithmetic::Mpfi, proofs_check::Arithmetic::DoubleErrorBound}) {
      proofs_check::BernsteinEvaluator ev(p, n, arith);
      const auto r = proofs_check::certified_sup(ev);
      INFO("N = " << n);
      CHECK(r.upper >= exact_at_half);
      CHECK(r.upper >= grid_max);
      CHECK(r.lower <= r.upper);
      CHECK(r.upper <= grid_max * 1.05);  // tight (rel_tol 2%, grid close to the sup)
    }
  }
}

TEST_CASE("sigmoid on [-8, 8], rho = 2 max phi: published sup error at N = 4096 and corollary bounds") {
  const auto p = proofs_check::make_problem(activations::parse_activation("sigmoid"), Rational(-8), Rational(8),
                                            std::nullopt, Rational(2), 128);
  const auto lh = proofs_check::lipschitz_h(p);
  const auto b = proofs_check::bounds_at(p, lh, 4096, proofs_check::SupOptions{});
  // REFERENCES.md: sup error 1.05e-3 at N = 4096.
  CHECK(b.sup.lower <= 1.055e-3);
  CHECK(b.sup.upper >= 1.045e-3);
  CHECK(b.sup.upper <= b.sup.lower * 1.021);
  CHECK(b.corollary.verdict == Verdict::Proved);
  CHECK(b.sharper.verdict == Verdict::Proved);
  CHECK(b.sharper_hi < b.paper_lo);  // the sharper bound is sharper
}

TEST_CASE("MPFI and double-with-error-bound enclosures of F_N overlap") {
  const auto p = problem("softplus", -6, 6, Rational(20));
  for (std::int64_t n : {5, 100, 3000, 200000}) {
    proofs_check::BernsteinEvaluator a(p, n, proofs_check::Arithmetic::Mpfi);
    proofs_check::BernsteinEvaluator b(p, n, proofs_check::Arithmetic::DoubleErrorBound);
    for (double u : {0.001, 0.2, 0.5, 0.77, 0.999}) {
      activations::Ivl ui(128), m1(128), f1(128), m2(128), f2(128);
      mpfi_set_d(ui, u);
      a.eval(m1, f1, ui);
      b.eval(m2, f2, ui);
      INFO("N = " << n << ", u = " << u);
      CHECK(f1.lo() <= f2.hi());
      CHECK(f2.lo() <= f1.hi());
      CHECK(f2.hi() - f2.lo() <= 1e-8 * f2.hi());
    }
  }
}

TEST_CASE("L_h: closed form for relu, sampled maximum for sigmoid") {
  // relu on [-2, 6], rho = 12: h' = 8 rho^2 / (rho - phi)^2 is largest at I = 6: 8 * 144 / 36 = 32.
  const auto p = problem("relu", -2, 6, Rational(12));
  const auto l = proofs_check::lipschitz_h(p);
  CHECK(l.lower <= 32.0);
  CHECK(l.upper >= 32.0);
  CHECK(l.upper - l.lower <= 1e-6);
  const auto q = problem("sigmoid", -8, 8, Rational(2));
  const auto ls = proofs_check::lipschitz_h(q);
  double sampled = 0;
  for (int k = 0; k <= 160000; ++k) {
    const double x = -8 + 16.0 * k / 160000;
    const double s = 1 / (1 + std::exp(-x));
    sampled = std::max(sampled, 16 * 4 * s * (1 - s) / ((2 - s) * (2 - s)));
  }
  CHECK(ls.upper >= sampled * (1 - 1e-12));
  CHECK(ls.upper <= sampled * (1 + 1e-6));
}

TEST_CASE("eps search: sigmoid needs about 420 states for 1e-2 (REFERENCES.md)") {
  const auto p = proofs_check::make_problem(activations::parse_activation("sigmoid"), Rational(-8), Rational(8),
                                            std::nullopt, Rational(2), 128);
  const auto lh = proofs_check::lipschitz_h(p);
  const auto s = proofs_check::smallest_n(p, lh, 1e-2);
  CHECK_FALSE(s.capped);
  CHECK(s.n_hi >= 400);
  CHECK(s.n_hi <= 440);
  CHECK(s.n_lo < s.n_hi);
  CHECK(s.upper_at_hi < 1e-2);
  CHECK(s.sharper_n < s.paper_n);
  CHECK(s.paper_n >= s.n_hi);  // the corollary's N is sufficient
}

TEST_CASE("Voronovskaya: N (B_N h - h)(u) approaches u(1-u) h''(u)/2") {
  const auto p = problem("sigmoid", -8, 8, Rational(2));
  const auto rows = proofs_check::voronovskaya(p, 0.375, {64, 256, 1024, 4096});
  REQUIRE(rows.size() == 4);
  for (std::size_t k = 1; k < rows.size(); ++k) CHECK(rows[k].rel_diff < rows[k - 1].rel_diff);
  CHECK(rows.back().rel_diff < 5e-3);
  // The limit against a central second difference of h (MPFI, step 1e-6).
  activations::Ivl u0(128), up(128), dn(128), h0(128), h1(128), h2(128);
  mpfi_set_d(u0, 0.375);
  mpfi_set_d(up, 0.375 + 0x1p-20);
  mpfi_set_d(dn, 0.375 - 0x1p-20);
  p.h(h0, u0);
  p.h(h1, up);
  p.h(h2, dn);
  const double second = (h1.mid() - 2 * h0.mid() + h2.mid()) / (0x1p-20 * 0x1p-20);
  CHECK(rows[0].limit == doctest::Approx(0.375 * 0.625 * second / 2).epsilon(1e-5));
  CHECK(proofs_check::voronovskaya(problem("relu", -2, 6, Rational(12)), 0.5, {64}).empty());
}

TEST_CASE("bad input is rejected with InputError") {
  const auto sig = activations::parse_activation("sigmoid");
  // empty interval
  CHECK_THROWS_AS(proofs_check::make_problem(sig, Rational(1), Rational(1), Rational(2), std::nullopt, 128), InputError);
  CHECK_THROWS_AS(proofs_check::make_problem(sig, Rational(2), Rational(1), Rational(2), std::nullopt, 128), InputError);
  // rho <= max psi
  CHECK_THROWS_AS(proofs_check::make_problem(sig, Rational(-8), Rational(8), Rational(9, 10), std::nullopt, 128),
                  InputError);
  CHECK_THROWS_AS(proofs_check::make_problem(activations::parse_activation("relu"), Rational(-2), Rational(6), Rational(6),
                                             std::nullopt, 128),
                  InputError);
  CHECK_THROWS_AS(proofs_check::make_problem(sig, Rational(-8), Rational(8), std::nullopt, Rational(1), 128), InputError);
  // Beyond double's range, named by parameter: a domain width of 2e308 printed a
  // NaN limit, rho = 1e400 became inf (sup error 0, "Proved"), and softplus's
  // max on [-1e200, 1e200] overflowed to "F x max phi = 0 ... not positive".
  const Rational e308 = *solvers::parse_exact("1e308"), e400 = *solvers::parse_exact("1e400");
  const Rational e200 = *solvers::parse_exact("1e200");
  CHECK_THROWS_WITH_AS(proofs_check::make_problem(sig, -e308, e308, Rational(2), std::nullopt, 128),
                       doctest::Contains("domain: the width"), InputError);
  CHECK_THROWS_WITH_AS(proofs_check::make_problem(sig, Rational(-8), Rational(8), e400, std::nullopt, 128),
                       doctest::Contains("rho: "), InputError);
  CHECK_THROWS_WITH_AS(proofs_check::make_problem(sig, Rational(-8), Rational(8), std::nullopt, e400, 128),
                       doctest::Contains("rho_factor: "), InputError);
  CHECK_THROWS_WITH_AS(proofs_check::make_problem(activations::parse_activation("softplus"), -e200, e200, std::nullopt,
                                                  std::nullopt, 128),
                       doctest::Contains("domain: max phi"), InputError);
  // not nondecreasing / negative
  {
    std::ofstream("bernstein_bad_dec.csv") << "0,1\n1,0.5\n2,2\n";
    std::ofstream("bernstein_bad_neg.csv") << "0,-0.5\n1,1\n";
    CHECK_THROWS_AS(proofs_check::make_problem(activations::parse_activation("table:bernstein_bad_dec.csv"), Rational(0),
                                               Rational(2), Rational(5), std::nullopt, 128),
                    InputError);
    CHECK_THROWS_AS(proofs_check::make_problem(activations::parse_activation("table:bernstein_bad_neg.csv"), Rational(0),
                                               Rational(1), Rational(5), std::nullopt, 128),
                    InputError);
    std::remove("bernstein_bad_dec.csv");
    std::remove("bernstein_bad_neg.csv");
  }
  const auto p = problem("sigmoid", -8, 8, Rational(2));
  // N < 1
  CHECK_THROWS_AS(proofs_check::BernsteinEvaluator(p, 0), InputError);
  CHECK_THROWS_AS(proofs_check::BernsteinEvaluator(p, -3), InputError);
  // eps <= 0
  const auto lh = proofs_check::lipschitz_h(p);
  CHECK_THROWS_AS(proofs_check::smallest_n(p, lh, 0.0), InputError);
  CHECK_THROWS_AS(proofs_check::smallest_n(p, lh, -1e-3), InputError);
}

TEST_CASE("derivative bounds of M_N over a cell contain the exact derivative (rationals)") {
  // relu on [-1, 1], rho = 3: kappa_i = h(i/N) rational; M_N'(u) =
  // N sum_i (kappa_{i+1} - kappa_i) C(N-1,i) u^i (1-u)^(N-1-i), exactly.
  const Rational rho(3);
  const auto p = problem("relu", -1, 1, rho);
  for (int n : {1, 3, 20, 60}) {
    std::vector<Rational> kr;
    for (int i = 0; i <= n; ++i) {
      Rational x = Rational(2 * i, n) - 1;
      if (x < 0) x = 0;
      kr.push_back(rho * x / (rho - x));
    }
    std::vector<Rational> diff;
    for (int i = 0; i < n; ++i) diff.push_back(Rational(n) * (kr[i + 1] - kr[i]));
    proofs_check::BernsteinEvaluator ev(p, n, proofs_check::Arithmetic::DoubleErrorBound);
    for (auto [a, b] : {std::pair{0.25, 0.3125}, std::pair{0.5, 0.515625}, std::pair{0.4375, 0.5625},
                        std::pair{0.875, 0.90625}}) {
      double lo = 0, hi = 0;
      if (!ev.derivative_bounds(a, b, lo, hi)) continue;
      for (int k = 0; k <= 16; ++k) {
        const Rational u = Rational(a) + (Rational(b) - Rational(a)) * Rational(k, 16);
        const double exact = solvers::to_double(n == 1 ? diff[0] : bernstein_direct(diff, u));
        INFO("N = " << n << ", cell [" << a << ", " << b << "], k = " << k);
        CHECK(lo <= exact);
        CHECK(hi >= exact);
      }
    }
  }
}
