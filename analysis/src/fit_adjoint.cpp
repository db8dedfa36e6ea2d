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
  const auto c = closed_class(q);
  if (c.empty()) return false;  // several closed classes
  const std::size_t nc = c.size();
  if (grad)
    for (std::size_t k = 0; k < 2 * n * (n - 1); ++k) grad[k] = 0.0;
  if (c.front() != 0) {  // state 0 transient: no spikes, and none for small changes
    flux = 0;
    return true;
  }
  solvers::DenseMatrix<double> sub(nc);
  for (std::size_t a = 0; a < nc; ++a)
    for (std::size_t b = 0; b < nc; ++b)
      if (a != b) sub(a, b) = q(c[a], c[b]);
  std::vector<double> pic;
  try {
    pic = solvers::gth_dense(sub);
  } catch (const InputError&) {
    return false;
  }
  double f = 0;
  for (std::size_t a = 1; a < nc; ++a) f += pic[a] * q(c[a], 0);
  flux = f;
  if (!std::isfinite(f)) return false;
  if (!grad) return true;

  // z on C (z at state 0 = 0): rows/columns C \ {0} of Q z = f - F 1.
  const auto m = static_cast<Eigen::Index>(nc - 1);
  std::vector<double> z(n, 0.0), pi(n, 0.0);
  for (std::size_t a = 0; a < nc; ++a) pi[c[a]] = pic[a];
  if (m > 0) {
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(m, m);
    Eigen::VectorXd b(m);
    for (std::size_t a = 1; a < nc; ++a) {
      double out = 0;
      for (std::size_t j = 0; j < n; ++j)
        if (j != c[a]) out += q(c[a], j);  // C is closed: all exits stay in C
      A(a - 1, a - 1) = -out;
      for (std::size_t bb = 1; bb < nc; ++bb)
        if (bb != a) A(a - 1, bb - 1) = q(c[a], c[bb]);
      b(a - 1) = q(c[a], 0) - f;
    }
    const Eigen::VectorXd zr = A.partialPivLu().solve(b);
    for (std::size_t a = 1; a < nc; ++a) z[c[a]] = zr(a - 1);
  }
  std::vector<char> in_c(n, 0);
  for (std::size_t s : c) in_c[s] = 1;

  // dF/dr_ij = pi_i (z_i - z_j + [j = 0]) for i, j in C; rates leaving C are
  // 0 (inactive) and states outside C have pi_i = 0.
  std::size_t k = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      if (in_c[i] && in_c[j]) {
        const double dr = pi[i] * (z[i] - z[j] + (j == 0 ? 1.0 : 0.0));
        const bool active = theta[k] + theta[k + 1] * H > 0;
        grad[k] = active ? dr : 0.0;
        grad[k + 1] = active ? dr * H : 0.0;
        if (!std::isfinite(grad[k]) || !std::isfinite(grad[k + 1])) return false;
      }
      k += 2;
    }
  return true;
}

}  // namespace ctmc::analysis
