// A minimal row-major dense matrix over any scalar (double, Mpfr, Rational,
// Interval, ceres::Jet). The solvers need only indexing; using our own type
// rather than Eigen keeps every scalar, including GMP rationals, on one code path.
#pragma once
#include <cstddef>
#include <vector>

namespace ctmc::solvers {

template <class T>
struct DenseMatrix {
  std::size_t n = 0;
  std::vector<T> a;
  DenseMatrix() = default;
  explicit DenseMatrix(std::size_t size) : n(size), a(size * size, T(0)) {}
  T& operator()(std::size_t i, std::size_t j) { return a[i * n + j]; }
  const T& operator()(std::size_t i, std::size_t j) const { return a[i * n + j]; }
};

}  // namespace ctmc::solvers
