#include "ctmc/solvers/linear_solve.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <utility>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/gth.hpp"

namespace ctmc::solvers {
namespace {

double magnitude(double x) { return std::abs(x); }
template <class T> T magnitude(const T& x) { return abs(x); }

// Q^T with the last row replaced by ones: rows are the balance equations
// sum_i pi_i q_ij = pi_j sum_k q_jk, for j = 0..n-2, then normalization.
template <class T>
DenseMatrix<T> balance_system(const DenseMatrix<T>& rates) {
  const std::size_t n = rates.n;
  DenseMatrix<T> a(n);
  for (std::size_t i = 0; i < n; ++i) {
    T out(0);
    for (std::size_t j = 0; j < n; ++j)
      if (j != i) {
        a(j, i) = rates(i, j);
        out += rates(i, j);
      }
    a(i, i) = -out;
  }
  for (std::size_t j = 0; j < n; ++j) a(n - 1, j) = T(1);
  return a;
}

}  // namespace

template <class T>
std::vector<T> solve_linear(DenseMatrix<T> a, std::vector<T> b, const std::string& what) {
  const std::size_t n = a.n;
  if (b.size() != n) throw InputError(what + ": right-hand side has the wrong size");
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t piv = k;
    auto best = magnitude(a(k, k));
    for (std::size_t i = k + 1; i < n; ++i) {
      auto m = magnitude(a(i, k));
      if (m > best) {
        best = m;
        piv = i;
      }
    }
    if (is_exact_zero(a(piv, k))) throw InputError(what + ": singular matrix");
    if (piv != k) {
      for (std::size_t j = 0; j < n; ++j) std::swap(a(k, j), a(piv, j));
      std::swap(b[k], b[piv]);
    }
    const T inv = T(1) / a(k, k);
    for (std::size_t i = k + 1; i < n; ++i) {
      if (is_exact_zero(a(i, k))) continue;
      const T f = a(i, k) * inv;
      for (std::size_t j = k + 1; j < n; ++j) a(i, j) -= f * a(k, j);
      b[i] -= f * b[k];
      a(i, k) = T(0);
    }
  }
  std::vector<T> x(n, T(0));
  for (std::size_t k = n; k-- > 0;) {
    T acc = b[k];
    for (std::size_t j = k + 1; j < n; ++j) acc -= a(k, j) * x[j];
    x[k] = acc / a(k, k);
  }
  return x;
}

template <class T>
std::vector<T> lu_stationary(const DenseMatrix<T>& rates) {
  const std::size_t n = rates.n;
  if (n == 0) return {};
  std::vector<T> rhs(n, T(0));
  rhs[n - 1] = T(1);
  return solve_linear(balance_system(rates), std::move(rhs), "LU stationary solve");
}

std::vector<double> lu_stationary_double(const DenseMatrix<double>& rates) {
  const std::size_t n = rates.n;
  if (n == 0) return {};
  const DenseMatrix<double> a = balance_system(rates);
  Eigen::MatrixXd m(n, n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = a(i, j);
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(n));
  rhs(static_cast<Eigen::Index>(n - 1)) = 1.0;
  const Eigen::VectorXd x = m.partialPivLu().solve(rhs);
  return std::vector<double>(x.data(), x.data() + n);
}

template std::vector<double> solve_linear(DenseMatrix<double>, std::vector<double>, const std::string&);
template std::vector<Mpfr> solve_linear(DenseMatrix<Mpfr>, std::vector<Mpfr>, const std::string&);
template std::vector<Rational> solve_linear(DenseMatrix<Rational>, std::vector<Rational>, const std::string&);
template std::vector<double> lu_stationary(const DenseMatrix<double>&);
template std::vector<Mpfr> lu_stationary(const DenseMatrix<Mpfr>&);
template std::vector<Rational> lu_stationary(const DenseMatrix<Rational>&);

}  // namespace ctmc::solvers
