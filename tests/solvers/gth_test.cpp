// GTH against hand-derived stationary distributions (exact rationals).
#include <doctest/doctest.h>

#include "ctmc/solvers/gth.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/sparse_gth.hpp"
#include "ctmc/solvers/stationary.hpp"

using namespace ctmc::solvers;

TEST_CASE("three-state chain of the paper, a=2 b=1 c=3 d=1/2: pi by hand") {
  // Balance: pi_B a = pi_G (b + c), pi_G c = pi_R d  =>  pi ~ (b+c)/a : 1 : c/d = 2 : 1 : 6.
  DenseMatrix<Rational> q(3);
  q(0, 1) = 2;
  q(1, 0) = 1;
  q(1, 2) = 3;
  q(2, 0) = Rational(1, 2);
  const auto pi = gth_dense(q);
  CHECK(pi[0] == Rational(2, 9));
  CHECK(pi[1] == Rational(1, 9));
  CHECK(pi[2] == Rational(6, 9));
  SparseRates<Rational> s(3);
  s.add(0, 1, 2);
  s.add(1, 0, 1);
  s.add(1, 2, 3);
  s.add(2, 0, Rational(1, 2));
  CHECK(gth_sparse(s) == pi);
}

TEST_CASE("model file: flux 1/3 exactly") {
  const auto m = read_model_file(CTMC_FIXTURES_DIR "/three_state.json");
  const auto r = solve_stationary<Rational>(m, Rational(0));
  CHECK(r.flux == Rational(1, 3));
}
