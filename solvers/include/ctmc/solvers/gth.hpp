// Stationary distributions by GTH state reduction (Grassmann, Taksar and
// Heyman, Operations Research 33, 1985), DESIGN.md section 5.
//
// For k = n-1 down to 1: s_k = sum_{j<k} q_kj; q_ik /= s_k for i < k;
// q_ij += q_ik q_kj for i, j < k, i != j. Then pi_0 = 1,
// pi_k = sum_{i<k} pi_i q_ik, normalized. The diagonal is never read and no
// subtraction occurs, so the result has small componentwise relative error
// (O'Cinneide 1993), is exact in rational arithmetic, and in interval
// arithmetic is a tight enclosure.
#pragma once
#include <string>
#include <vector>

#include "ctmc/solvers/dense_matrix.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/scalar.hpp"

namespace ctmc::solvers {

// True when x is known to be exactly zero (used only to skip work; the
// default `false` is always safe, e.g. for ceres::Jet whose derivative part
// may be nonzero).
template <class T> inline bool is_exact_zero(const T&) { return false; }
inline bool is_exact_zero(double x) { return x == 0.0; }
inline bool is_exact_zero(const Rational& x) { return x == 0; }
inline bool is_exact_zero(const Mpfr& x) { return mpfr_zero_p(x.backend().data()) != 0; }
inline bool is_exact_zero(const Interval& x) { return mpfi_is_zero(x.backend().data()) > 0; }

namespace detail {
// Unnormalized back-substitution values grow like products of rate ratios
// (C(N, N/2) on the Bernstein chain) and can leave double's range before the
// normalization; for double they are rescaled when they grow large (a power
// of ten: the relative accuracy is unchanged up to one rounding).
inline bool too_large(double x) { return x > 1e250; }
template <class T> inline bool too_large(const T&) { return false; }
}  // namespace detail

// Dense GTH. q holds the off-diagonal rates q(i,j) >= 0 (diagonal ignored) of
// an irreducible chain; returns pi with pi Q = 0, sum pi = 1. Throws
// InputError when a state has no exit to lower-numbered states during
// reduction (the chain is reducible). O(n^3).
template <class T>
std::vector<T> gth_dense(DenseMatrix<T> q) {
  const std::size_t n = q.n;
  std::vector<T> pi(n, T(0));
  if (n == 0) return pi;
  for (std::size_t k = n - 1; k >= 1; --k) {
    T s(0);
    for (std::size_t j = 0; j < k; ++j) s += q(k, j);
    if (is_exact_zero(s)) throw InputError("GTH: state " + std::to_string(k) + " has no path back: the chain is reducible");
    for (std::size_t i = 0; i < k; ++i) q(i, k) /= s;
    for (std::size_t i = 0; i < k; ++i) {
      const T& qik = q(i, k);
      if (is_exact_zero(qik)) continue;
      for (std::size_t j = 0; j < k; ++j) {
        if (j == i) continue;
        add_product(q(i, j), qik, q(k, j));
      }
    }
  }
  pi[0] = T(1);
  for (std::size_t k = 1; k < n; ++k) {
    T acc(0);
    for (std::size_t i = 0; i < k; ++i) add_product(acc, pi[i], q(i, k));
    pi[k] = acc;
    if (detail::too_large(pi[k]))
      for (std::size_t i = 0; i <= k; ++i) pi[i] *= T(1e-250);
  }
  // Summed after the loop (not along it) so that rescaling cannot leave the
  // total out of step with pi.
  T total(0);
  for (const auto& p : pi) total += p;
  for (auto& p : pi) p /= total;
  return pi;
}

extern template std::vector<double> gth_dense(DenseMatrix<double>);
extern template std::vector<Mpfr> gth_dense(DenseMatrix<Mpfr>);
extern template std::vector<Rational> gth_dense(DenseMatrix<Rational>);
extern template std::vector<Interval> gth_dense(DenseMatrix<Interval>);

}  // namespace ctmc::solvers
