// GTH (dense and sparse) against hand-derived exact stationary distributions,
// reducible chains, a stiff chain (GTH vs LU in double), interval enclosures,
// and sparse == dense in the rationals.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/solvers/gth.hpp"
#include "ctmc/solvers/linear_solve.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/solvers/sparse_gth.hpp"
#include "ctmc/solvers/stationary.hpp"
#include "scalar_accuracy.hpp"

using namespace ctmc;
using namespace ctmc::solvers;

namespace {

// Converts an exact rate matrix to another scalar (rounded once per entry).
template <class T>
DenseMatrix<T> convert(const DenseMatrix<Rational>& q) {
  DenseMatrix<T> r(q.n);
  for (std::size_t i = 0; i < q.a.size(); ++i) r.a[i] = from_rational<T>(q.a[i]);
  return r;
}

template <class T>
SparseRates<T> to_sparse(const DenseMatrix<Rational>& q) {
  SparseRates<T> s(q.n);
  for (std::size_t i = 0; i < q.n; ++i)
    for (std::size_t j = 0; j < q.n; ++j)
      if (i != j && q(i, j) != 0) s.add(i, j, from_rational<T>(q(i, j)));
  return s;
}

// Birth-death chain: i -> i+1 at up[i], i+1 -> i at down[i]. Detailed balance
// gives the product form pi_k ~ prod_{i<k} up[i] / down[i].
DenseMatrix<Rational> birth_death(const std::vector<Rational>& up, const std::vector<Rational>& down) {
  DenseMatrix<Rational> q(up.size() + 1);
  for (std::size_t i = 0; i < up.size(); ++i) {
    q(i, i + 1) = up[i];
    q(i + 1, i) = down[i];
  }
  return q;
}

std::vector<Rational> product_form(const std::vector<Rational>& up, const std::vector<Rational>& down) {
  std::vector<Rational> w{Rational(1)};
  for (std::size_t i = 0; i < up.size(); ++i) w.push_back(w.back() * up[i] / down[i]);
  Rational total(0);
  for (auto& x : w) total += x;
  for (auto& x : w) x /= total;
  return w;
}

Rational random_rate(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> num(1, 40), den(1, 17);
  return Rational(num(rng), den(rng));
}

// A random irreducible chain: a directed cycle through every state plus each
// other edge with probability `density`.
DenseMatrix<Rational> random_chain(std::mt19937_64& rng, std::size_t n, double density) {
  DenseMatrix<Rational> q(n);
  std::bernoulli_distribution edge(density);
  for (std::size_t i = 0; i < n; ++i) q(i, (i + 1) % n) = random_rate(rng);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (i != j && q(i, j) == 0 && edge(rng)) q(i, j) = random_rate(rng);
  return q;
}

// Minimum over components of the correct decimal digits (componentwise relative error).
double min_correct_digits(const std::vector<double>& x, const std::vector<Rational>& exact) {
  double worst = 17;
  for (std::size_t i = 0; i < x.size(); ++i) worst = std::min(worst, correct_digits(relative_error(x[i], exact[i]), 17));
  return worst;
}

Affine constant(const Rational& r) { return Affine{r, 0}; }

}  // namespace

TEST_CASE("GTH on birth-death chains equals the product form exactly (dense and sparse)") {
  std::mt19937_64 rng(11);
  for (std::size_t n : {2u, 3u, 5u, 9u, 17u}) {
    std::vector<Rational> up, down;
    for (std::size_t i = 0; i + 1 < n; ++i) {
      up.push_back(random_rate(rng));
      down.push_back(random_rate(rng));
    }
    const auto q = birth_death(up, down);
    const auto expected = product_form(up, down);
    CHECK(gth_dense(q) == expected);
    CHECK(gth_sparse(to_sparse<Rational>(q)) == expected);
  }
}

TEST_CASE("two-state chain: pi = (d, a) / (a + d) exactly") {
  const Rational a(7, 3), d(2, 11);
  DenseMatrix<Rational> q(2);
  q(0, 1) = a;
  q(1, 0) = d;
  const auto pi = gth_dense(q);
  CHECK(pi[0] == d / (a + d));
  CHECK(pi[1] == a / (a + d));
}

TEST_CASE("reducible chains: one closed class gives zeros outside it") {
  // 0 -> 1 (spike), 1 <-> 2: state 0 is transient, {1, 2} is closed.
  Model m;
  m.states = {"T", "X", "Y"};
  auto tr = [](std::size_t f, std::size_t t, int r, bool spike) {
    Transition x;
    x.from = f;
    x.to = t;
    x.offset = ExactValue(Rational(r));
    x.spike = spike;
    return x;
  };
  m.transitions = {tr(0, 1, 5, false), tr(1, 2, 3, true), tr(2, 1, 1, false)};
  for (auto method : {Method::Dense, Method::Sparse}) {
    const auto r = solve_stationary<Rational>(m, 0, method);
    CHECK(r.pi == std::vector<Rational>{0, Rational(1, 4), Rational(3, 4)});
    CHECK(r.flux == Rational(3, 4));
    CHECK(r.support == std::vector<std::size_t>{1, 2});
  }
}

TEST_CASE("reducible chains: two closed classes are an InputError naming both") {
  Model m;
  m.states = {"S", "L", "R"};
  Transition a, b;
  a.from = 0;
  a.to = 1;
  a.offset = ExactValue(Rational(1));
  a.spike = true;
  b.from = 0;
  b.to = 2;
  b.offset = ExactValue(Rational(2));
  m.transitions = {a, b};
  std::string message;
  try {
    solve_stationary<double>(m, 0, Method::Auto, "chain.json");
  } catch (const ctmc::InputError& e) {
    message = e.what();
  }
  CHECK(message.find("chain.json") == 0);
  CHECK(message.find("{L}") != std::string::npos);
  CHECK(message.find("{R}") != std::string::npos);
  // An H that came from a double (a network's preactivation) is named as a
  // decimal first, not only as a 53-bit fraction.
  try {
    solve_stationary<double>(m, Rational(-0.1180999), Method::Auto, "chain.json");
    FAIL("no error");
  } catch (const ctmc::InputError& e) {
    CHECK(std::string(e.what()).find("at H = -0.1180999 (exactly -") != std::string::npos);
  }
  CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("a rectified rate that reaches 0 at some H: the closed class shrinks, flux exact") {
  // Three-state with c(H) = max(0, H): for H <= 0, R is transient and {B, G} closed.
  const auto m = three_state_model(constant(2), constant(1), Affine{0, 1}, constant(Rational(1, 2)));
  for (const Rational& h : {Rational(0), Rational(-3)}) {
    const auto r = solve_stationary<Rational>(m, h);
    CHECK(r.flux == 0);
    CHECK(r.pi == std::vector<Rational>{Rational(1, 3), Rational(2, 3), 0});
  }
  // At H = 3 all rates are positive and eq. 2 holds.
  CHECK(solve_stationary<Rational>(m, 3).flux == three_state_flux<Rational>(2, 1, 3, Rational(1, 2)).value());
  // a(H) = max(0, H): at H <= 0 the resting state B is absorbing.
  const auto m2 = three_state_model(Affine{0, 1}, constant(1), constant(3), constant(1));
  const auto r2 = solve_stationary<Rational>(m2, -1);
  CHECK(r2.pi == std::vector<Rational>{1, 0, 0});
  CHECK(r2.flux == 0);
}

TEST_CASE("stiff chain: GTH in double keeps every digit, Eigen LU in double does not") {
  // Birth-death chain with up rates 1e-6 and down rates 1e6 (plus a few
  // mid-range shortcuts back to 0): pi_k ~ 1e-12 k, down to 1e-84. LU works
  // with absolute errors of about eps * max pi, so the small probabilities are
  // lost; GTH has small componentwise relative error (O'Cinneide 1993).
  const std::size_t n = 8;
  DenseMatrix<Rational> q(n);
  const Rational tiny(1, 1000000), huge(1000000);
  for (std::size_t i = 0; i + 1 < n; ++i) {
    q(i, i + 1) = tiny * Rational(static_cast<long>(i + 1), 3);
    q(i + 1, i) = huge * Rational(static_cast<long>(i + 2), 5);
  }
  for (std::size_t i = 2; i < n; i += 2) q(i, 0) = Rational(3, 7);
  const auto exact = gth_dense(q);
  CHECK(lu_stationary(q) == exact);  // an independent algorithm, exact in the rationals
  const auto qd = convert<double>(q);
  const double gth_digits = min_correct_digits(gth_dense(qd), exact);
  const double lu_digits = min_correct_digits(lu_stationary_double(qd), exact);
  MESSAGE("stiff chain, min correct digits: GTH double " << gth_digits << ", Eigen LU double " << lu_digits);
  CHECK(gth_digits >= 14);
  CHECK(lu_digits < 6);
}

TEST_CASE("sparse GTH equals dense GTH exactly on random sparse chains") {
  std::mt19937_64 rng(99);
  for (std::size_t n : {5u, 12u, 30u, 60u}) {
    const auto q = random_chain(rng, n, 3.0 / static_cast<double>(n));
    CHECK(gth_sparse(to_sparse<Rational>(q)) == gth_dense(q));
  }
}

namespace {
// GTH's componentwise error on the random chains below, in units of u = 2^-p
// (scalar_accuracy.hpp), n the number of states. Point scalars (double,
// MPFR): relative error at most 2 n u. GTH subtracts nothing, so each of the
// n - 1 elimination steps adds a few relative roundings per entry and the
// error grows linearly in n (O'Cinneide 1993); largest observed 0.64 n u
// (double, n = 6), 5.7 u overall. Intervals (MPFI): relative width at most
// 32 n^2 u: interval arithmetic cannot cancel the roundings of one step
// against another's, and each of the O(n) sums of a step widens by their
// count; largest observed 10 n^2 u (n = 18).
constexpr double kGthUlpsPerState = 2;
constexpr double kGthIntervalUlpsPerStateSquared = 32;

template <class T>
double gth_bound_ulps(std::size_t n) {
  const double m = static_cast<double>(n);
  return test::ScalarAccuracy<T>::kEnclosure ? kGthIntervalUlpsPerStateSquared * m * m : kGthUlpsPerState * m;
}
}  // namespace

TEST_CASE_TEMPLATE("GTH, dense and sparse, on random chains: pi to the scalar's accuracy of the exact LU solution",
                   T, CTMC_ALL_SCALARS) {
  // Reference: Gaussian elimination with pivoting on pi Q = 0, sum pi = 1 in
  // exact rationals (lu_stationary), an algorithm independent of GTH.
  // Rational: equal; double, MPFR: componentwise relative error; MPFI: the
  // exact pi enclosed, relative width as the error, and widths shrinking with
  // the precision (by 2^150 or more from 64 to 256 and from 256 to 1024 bits).
  using Acc = test::ScalarAccuracy<T>;
  std::mt19937_64 rng(2024);
  std::vector<DenseMatrix<Rational>> chains;
  for (int trial = 0; trial < 6; ++trial) chains.push_back(random_chain(rng, 6 + trial * 3, 0.4));
  std::mt19937_64 rng25(5);
  chains.push_back(random_chain(rng25, 25, 0.3));
  double worst = 0;
  for (const auto& q : chains) {
    const auto exact = lu_stationary(q);
    const double bound = gth_bound_ulps<T>(q.n);
    double prev_width = -1;
    for (unsigned bits : Acc::precisions()) {
      PrecisionScope scope(bits);
      for (int sparse = 0; sparse < 2; ++sparse) {
        const auto pi = sparse ? gth_sparse(to_sparse<T>(q)) : gth_dense(convert<T>(q));
        REQUIRE(pi.size() == q.n);
        double err = 0;
        for (std::size_t i = 0; i < pi.size(); ++i) err = std::max(err, Acc::error_ulps(pi[i], exact[i]));
        INFO(Acc::name() << (sparse ? " sparse" : " dense") << " GTH, n = " << q.n << ", " << Acc::bits()
                         << " bits: max error " << err << " ulps, bound " << bound);
        CHECK(err <= bound);
        worst = std::max(worst, err / bound);
        if constexpr (Acc::kEnclosure) {
          const double width = std::ldexp(err, -static_cast<int>(Acc::bits()));  // relative width
          if (!sparse && prev_width > 0) CHECK(std::ldexp(width, 150) < prev_width);
          if (!sparse) prev_width = width;
        }
      }
    }
  }
  MESSAGE(Acc::name() << " GTH: largest error " << worst << " x its bound");
}

TEST_CASE_TEMPLATE("solve_linear: the solution by substitution, pivoting past a zero pivot", T, CTMC_POINT_SCALARS) {
  // [[0, 2, 1], [1, 1, 0], [3, 0, 1]] x = (5, 3, 4) has x = (1, 2, 1) (by
  // substitution): exact in rationals, within 4 u (2^-p, relative) in double
  // and MPFR, whose inputs are exact small integers.
  using Acc = test::ScalarAccuracy<T>;
  const int v[9] = {0, 2, 1, 1, 1, 0, 3, 0, 1};
  const std::vector<Rational> expected{1, 2, 1};
  for (unsigned bits : Acc::precisions()) {
    PrecisionScope scope(bits);
    DenseMatrix<T> a(3);
    for (std::size_t i = 0; i < 9; ++i) a.a[i] = T(v[i]);
    const auto x = solve_linear(a, {T(5), T(3), T(4)});
    REQUIRE(x.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
      INFO(Acc::name() << " at " << Acc::bits() << " bits, x[" << i << "]");
      CHECK(Acc::error_ulps(x[i], expected[i]) <= 4);
    }
  }
}

TEST_CASE("solve_linear and LU: singular matrices rejected") {
  DenseMatrix<Rational> s(2);  // rank 1
  s(0, 0) = 1;
  s(0, 1) = 2;
  s(1, 0) = 2;
  s(1, 1) = 4;
  CHECK_THROWS_AS(solve_linear(s, {1, 2}), ctmc::InputError);
  // Two absorbing states: the LU system is singular, GTH reports reducibility.
  DenseMatrix<Rational> q(3);
  q(0, 1) = 1;
  q(0, 2) = 1;
  CHECK_THROWS_AS(lu_stationary(q), ctmc::InputError);
  CHECK_THROWS_AS(gth_dense(q), ctmc::InputError);
}
