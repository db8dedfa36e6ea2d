// Dense linear solves by Gaussian elimination with partial pivoting, for
// double, MPFR and exact rationals (exact answers), and the textbook way of
// computing a stationary distribution with them: replace one balance equation
// of pi Q = 0 by the normalization sum pi = 1 and solve.
//
// The LU route is here as the baseline GTH is compared against (DESIGN.md
// section 5): it subtracts, so on stiff chains (rates spanning many orders of
// magnitude) its small stationary probabilities lose their relative accuracy,
// whereas GTH keeps componentwise relative accuracy. Use gth_dense /
// solve_stationary for real work.
#pragma once
#include <string>
#include <vector>

#include "ctmc/solvers/dense_matrix.hpp"
#include "ctmc/solvers/scalar.hpp"

namespace ctmc::solvers {

// Solves a x = b by Gaussian elimination with partial pivoting (largest
// magnitude pivot in the column). Throws InputError naming `what` when a is
// singular (an exactly zero pivot). O(n^3).
template <class T>
std::vector<T> solve_linear(DenseMatrix<T> a, std::vector<T> b, const std::string& what = "linear system");

// Stationary distribution of the chain with off-diagonal rates q(i,j)
// (diagonal ignored, as for gth_dense) by solving Q^T pi = 0 with its last
// equation replaced by sum pi = 1, through solve_linear (our own Gaussian
// elimination; in MPFR this is the in-repo counterpart of an mpmath LU solve).
template <class T>
std::vector<T> lu_stationary(const DenseMatrix<T>& rates);

// The same system solved by Eigen's dense partial-pivoting LU in double: what
// a typical user of Eigen/NumPy would write.
std::vector<double> lu_stationary_double(const DenseMatrix<double>& rates);

extern template std::vector<double> solve_linear(DenseMatrix<double>, std::vector<double>, const std::string&);
extern template std::vector<Mpfr> solve_linear(DenseMatrix<Mpfr>, std::vector<Mpfr>, const std::string&);
extern template std::vector<Rational> solve_linear(DenseMatrix<Rational>, std::vector<Rational>, const std::string&);
extern template std::vector<double> lu_stationary(const DenseMatrix<double>&);
extern template std::vector<Mpfr> lu_stationary(const DenseMatrix<Mpfr>&);
extern template std::vector<Rational> lu_stationary(const DenseMatrix<Rational>&);

}  // namespace ctmc::solvers
