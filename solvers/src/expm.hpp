// Matrix exponential by scaling and squaring with a Taylor polynomial
// (Moler and Van Loan, "Nineteen dubious ways...", SIAM Review 45, 2003,
// method 3), for double and MPFR at run-time precision.
//
// exp(A) = (T_m(A / 2^s))^(2^s), T_m the degree-m Taylor polynomial. With
// theta = ||A||_inf / 2^s the truncation error of T_m is bounded by
// theta^(m+1) / (m+1)! * 1 / (1 - theta/(m+2)) (the tail of the exponential
// series, bounded by a geometric series). s and m are chosen together, from
// the working precision p of T, to make that bound <= 2^-(p + s + 4) at the
// least cost m + s (each squaring can double the relative error, hence the
// + s). The polynomial is evaluated in Horner form, so there is no
// cancellation between growing terms: ||A / 2^s|| <= 1/2 throughout.
//
// That bound is absolute, against entries of size ~1. An entry reached only
// along paths of d steps of A's graph starts at the term A^d / d!: at small
// ||A|| (rates x t ~ 1e-12) it is ~||A||^d, and a degree below d returned it
// as exactly 0 (the counting moments' F1 and F2 blocks: E[N(t)] = 0 and
// Var N(t) = -1.1e-25 from a state two jumps away from a spike). So the
// degree also covers the longest path, path_terms = (states - 1): each entry
// then keeps the tail bound relative to its own leading term.
//
// Used by the counting statistics (Van Loan's block exponential); general
// dense matrices, O(n^3 (m + s)) work. Internal header of solvers (not
// installed): the library includes it as "expm.hpp", and so do the tests
// that use it as a reference (tests/CMakeLists.txt gives them solvers/src).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/det_math.hpp"

#include "ctmc/solvers/dense_matrix.hpp"
#include "ctmc/solvers/scalar.hpp"

namespace ctmc::solvers {

// Working precision in bits of a scalar type: 53 for double, the current
// MPFR default precision for Mpfr.
template <class T> unsigned working_bits();
template <> inline unsigned working_bits<double>() { return 53; }
template <> inline unsigned working_bits<Mpfr>() { return precision_bits(); }

template <class T>
DenseMatrix<T> matmul(const DenseMatrix<T>& a, const DenseMatrix<T>& b) {
  const std::size_t n = a.n;
  DenseMatrix<T> c(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < n; ++k) {
      const T& aik = a(i, k);
      if (aik == 0) continue;
      for (std::size_t j = 0; j < n; ++j) add_product(c(i, j), aik, b(k, j));
    }
  return c;
}

// The scaling s and Taylor degree m for ||A||_inf = norm at `bits` bits.
struct ExpmPlan {
  int squarings = 0;
  int degree = 0;
};

// The plan from log2 ||A||_inf (-inf for the zero matrix). Planning in log2
// terms lets the caller take the norm in its working scalar: an MPFR matrix
// whose norm is below double's smallest subnormal (rates x t < 4.9e-324,
// e.g. t = 1e-400) has a norm of 0 in double, which planned exp(A) = I and
// lost every entry that starts at A^d / d! (E N(t) = Var N(t) = 0).
inline ExpmPlan expm_plan_log2(double log2_norm, unsigned bits, int path_terms = 0) {
  // An infinite (or NaN) norm has no plan: the int below would overflow, and
  // the scaling 2^-s is formed in double.
  if (!(log2_norm < 1024) && !(log2_norm == -std::numeric_limits<double>::infinity()))
    throw InputError("matrix exponential: the matrix norm is beyond the range of double");
  ExpmPlan best{0, 0};
  if (log2_norm == -std::numeric_limits<double>::infinity()) return best;  // zero matrix: exp = I
  // ||A / 2^s0|| <= 1/2 (s0 = 0 for any norm <= 1/2, however small).
  const int s0 = log2_norm > -1 ? static_cast<int>(std::ceil(log2_norm + 1)) : 0;
  int best_cost = -1;
  // Extra scaling beyond ||A/2^s|| <= 1/2 trades Taylor terms for squarings.
  for (int extra = 0; extra <= 40; ++extra) {
    const int s = s0 + extra;
    const double log2_theta = log2_norm - s;
    const double target = -(static_cast<double>(bits) + s + 4);
    int m = 0;
    double log2_fact = 0;  // log2((m+1)!)
    for (m = 0; m < 10000; ++m) {
      log2_fact += detmath::log2(static_cast<double>(m + 1));
      // tail <= theta^(m+1)/(m+1)! * 1/(1 - theta/(m+2)) <= 2 theta^(m+1)/(m+1)!  (theta <= 1/2)
      if ((m + 1) * log2_theta - log2_fact + 1 <= target) break;
    }
    const int cost = m + s;
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      best = {s, m};
    }
  }
  best.degree += path_terms;
  return best;
}

// The same plan from the norm as a double (> 0, or 0 for the zero matrix).
inline ExpmPlan expm_plan(double norm, unsigned bits, int path_terms = 0) {
  if (!(norm <= std::numeric_limits<double>::max()) && !(norm <= 0))
    throw InputError("matrix exponential: the matrix norm is beyond the range of double");
  return expm_plan_log2(norm > 0 ? detmath::log2(norm) : -std::numeric_limits<double>::infinity(), bits, path_terms);
}

// log2 of x >= 0 in T's own range, as a double (-inf for 0).
inline double log2_of(double x) { return x > 0 ? detmath::log2(x) : -std::numeric_limits<double>::infinity(); }
inline double log2_of(const Mpfr& x) {
  if (!(x > 0)) return -std::numeric_limits<double>::infinity();
  long e = 0;
  const double mant = mpfr_get_d_2exp(&e, x.backend().data(), MPFR_RNDN);  // x = mant 2^e, 0.5 <= mant < 1
  return static_cast<double>(e) + detmath::log2(mant);
}

// log2 ||a||_inf, the row sums taken in T.
template <class T>
double log2_norm_inf(const DenseMatrix<T>& a) {
  using std::abs;
  T norm(0);
  for (std::size_t i = 0; i < a.n; ++i) {
    T row(0);
    for (std::size_t j = 0; j < a.n; ++j) row += abs(a(i, j));
    if (row > norm) norm = row;
  }
  return log2_of(norm);
}

template <class T>
DenseMatrix<T> expm(const DenseMatrix<T>& a) {
  using std::abs;
  const std::size_t n = a.n;
  const ExpmPlan plan = expm_plan_log2(log2_norm_inf(a), working_bits<T>(), n > 0 ? static_cast<int>(n) - 1 : 0);
  DenseMatrix<T> b = a;
  const T scale = T(std::ldexp(1.0, -plan.squarings));  // a power of two: exact
  for (auto& x : b.a) x *= scale;
  // Horner: P = I + B/m (I + B/(m-1) (... (I + B/1))).
  DenseMatrix<T> p(n);
  for (std::size_t i = 0; i < n; ++i) p(i, i) = T(1);
  for (int k = plan.degree; k >= 1; --k) {
    DenseMatrix<T> bp = matmul(b, p);
    const T inv_k = T(1) / T(k);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) p(i, j) = bp(i, j) * inv_k + (i == j ? T(1) : T(0));
  }
  for (int s = 0; s < plan.squarings; ++s) p = matmul(p, p);
  return p;
}

// exp of the 3n x 3n block upper-triangular Toeplitz matrix
//   A = [[Q, D, 0], [0, Q, D], [0, 0, Q]]   (Van Loan's construction)
// returned as its three distinct blocks {E, F1, F2} (exp(A) =
// [[E, F1, F2], [0, E, F1], [0, 0, E]]). Same scaling, degree and Horner
// scheme as expm(A), but products of such matrices stay in the structure:
// (X0, X1, X2)(Y0, Y1, Y2) = (X0 Y0, X0 Y1 + X1 Y0, X0 Y2 + X1 Y1 + X2 Y0),
// 5-6 n x n products instead of one 3n x 3n product (27 n^3): about 5x less work.
template <class T>
std::array<DenseMatrix<T>, 3> expm_van_loan(const DenseMatrix<T>& q, const DenseMatrix<T>& d) {
  const std::size_t n = q.n;
  using Blocks = std::array<DenseMatrix<T>, 3>;
  auto add_into = [n](DenseMatrix<T>& acc, const DenseMatrix<T>& x) {
    for (std::size_t i = 0; i < n * n; ++i) acc.a[i] += x.a[i];
  };
  auto mul = [&](const Blocks& x, const Blocks& y, bool y2_zero) {
    Blocks r{matmul(x[0], y[0]), matmul(x[0], y[1]), y2_zero ? DenseMatrix<T>(n) : matmul(x[0], y[2])};
    add_into(r[1], matmul(x[1], y[0]));
    add_into(r[2], matmul(x[1], y[1]));
    if (!y2_zero) add_into(r[2], matmul(x[2], y[0]));
    return r;
  };
  // ||A||_inf = max row sum of |Q| + |D| (the first two block rows dominate),
  // taken in T (see expm_plan_log2).
  DenseMatrix<T> qd(n);
  {
    using std::abs;
    for (std::size_t i = 0; i < n * n; ++i) qd.a[i] = abs(q.a[i]) + abs(d.a[i]);
  }
  // The 3n states of A's graph: paths of up to 3n - 1 steps.
  const ExpmPlan plan =
      expm_plan_log2(log2_norm_inf(qd), working_bits<T>(), n > 0 ? 3 * static_cast<int>(n) - 1 : 0);
  const T scale = T(std::ldexp(1.0, -plan.squarings));
  // B = A / 2^s as blocks (Q/2^s, D/2^s, 0).
  Blocks b{q, d, DenseMatrix<T>(n)};
  for (std::size_t k = 0; k < 2; ++k)
    for (auto& x : b[k].a) x *= scale;
  Blocks p{DenseMatrix<T>(n), DenseMatrix<T>(n), DenseMatrix<T>(n)};
  for (std::size_t i = 0; i < n; ++i) p[0](i, i) = T(1);
  for (int k = plan.degree; k >= 1; --k) {
    // P = I + B P / k; B's third block is zero.
    Blocks bp{matmul(b[0], p[0]), matmul(b[0], p[1]), matmul(b[0], p[2])};
    add_into(bp[1], matmul(b[1], p[0]));
    add_into(bp[2], matmul(b[1], p[1]));
    const T inv_k = T(1) / T(k);
    for (std::size_t blk = 0; blk < 3; ++blk)
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
          p[blk](i, j) = bp[blk](i, j) * inv_k + (blk == 0 && i == j ? T(1) : T(0));
  }
  for (int s = 0; s < plan.squarings; ++s) p = mul(p, p, false);
  return p;
}

extern template DenseMatrix<double> matmul(const DenseMatrix<double>&, const DenseMatrix<double>&);
extern template DenseMatrix<Mpfr> matmul(const DenseMatrix<Mpfr>&, const DenseMatrix<Mpfr>&);
extern template DenseMatrix<double> expm(const DenseMatrix<double>&);
extern template DenseMatrix<Mpfr> expm(const DenseMatrix<Mpfr>&);
extern template std::array<DenseMatrix<double>, 3> expm_van_loan(const DenseMatrix<double>&, const DenseMatrix<double>&);
extern template std::array<DenseMatrix<Mpfr>, 3> expm_van_loan(const DenseMatrix<Mpfr>&, const DenseMatrix<Mpfr>&);

}  // namespace ctmc::solvers
