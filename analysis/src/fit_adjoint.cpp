// Adjoint gradient of the general family's stationary flux (fit_flux.hpp).
//
// Derivation: pi Q = 0, pi 1 = 1, F = pi f with f_i = r_i0 (i != 0). Take z
// with Q z = f - F 1 (solvable: pi (f - F 1) = 0). A change dr of r_ij gives
// dQ = dr e_i (e_j - e_i)^T and df = dr [j = 0] e_i, and from dpi Q = -pi dQ,
// dpi 1 = 0: dpi f = dpi (Q z + F 1) = -pi dQ z = -dr pi_i (z_j - z_i). So
//   dF/dr_ij = pi_i (z_i - z_j + [j = 0]).
// The cost per input is one GTH (O(n^3)) and one (n-1)-dimensional LU solve,
// against O(n^3 P) for forward-mode Jets with P = 2 n (n - 1) parameters.
#include <Eigen/Dense>
#include <cmath>

#include "ctmc/analysis/fit_flux.hpp"
#include "ctmc/solvers/errors.hpp"

namespace ctmc::analysis {

bool general_flux_adjoint(std::size_t n, const double* theta, double H, double& flux, double* grad) {
  const auto q = general_rates(n, theta, H);
  std::vector<double> pi;
  try {
    pi = solvers::gth_dense(q);
  } catch (const InputError&) {
    return false;  // reducible at H
  }
  double f = 0;
  for (std::size_t i = 1; i < n; ++i) f += pi[i] * q(i, 0);
  flux = f;
  if (!std::isfinite(f)) return false;
  if (!grad) return true;

  // Rows/columns 1..n-1 of Q z = b with z_0 = 0; b_i = f_i - F.
  const auto m = static_cast<Eigen::Index>(n - 1);
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(m, m);
  Eigen::VectorXd b(m);
  for (std::size_t i = 1; i < n; ++i) {
    double out = 0;
    for (std::size_t j = 0; j < n; ++j)
      if (j != i) out += q(i, j);
    a(i - 1, i - 1) = -out;
    for (std::size_t j = 1; j < n; ++j)
      if (j != i) a(i - 1, j - 1) = q(i, j);
    b(i - 1) = q(i, 0) - f;
  }
  const Eigen::VectorXd zr = a.partialPivLu().solve(b);
  std::vector<double> z(n, 0.0);
  for (std::size_t i = 1; i < n; ++i) z[i] = zr(i - 1);

  std::size_t k = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const double dr = pi[i] * (z[i] - z[j] + (j == 0 ? 1.0 : 0.0));
      const bool active = theta[k] + theta[k + 1] * H > 0;
      grad[k] = active ? dr : 0.0;
      grad[k + 1] = active ? dr * H : 0.0;
      if (!std::isfinite(grad[k]) || !std::isfinite(grad[k + 1])) return false;
      k += 2;
    }
  return true;
}

}  // namespace ctmc::analysis
