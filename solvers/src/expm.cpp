// Explicit instantiations of the matrix exponential (DESIGN.md section 9).
#include "expm.hpp"

namespace ctmc::solvers {

template DenseMatrix<double> matmul(const DenseMatrix<double>&, const DenseMatrix<double>&);
template DenseMatrix<Mpfr> matmul(const DenseMatrix<Mpfr>&, const DenseMatrix<Mpfr>&);
template DenseMatrix<double> expm(const DenseMatrix<double>&);
template DenseMatrix<Mpfr> expm(const DenseMatrix<Mpfr>&);
template std::array<DenseMatrix<double>, 3> expm_van_loan(const DenseMatrix<double>&, const DenseMatrix<double>&);
template std::array<DenseMatrix<Mpfr>, 3> expm_van_loan(const DenseMatrix<Mpfr>&, const DenseMatrix<Mpfr>&);

}  // namespace ctmc::solvers
