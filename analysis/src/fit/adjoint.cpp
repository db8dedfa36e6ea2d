// Adjoint gradient of the general family's stationary flux (fit_flux.hpp).
//
// Derivation: pi Q = 0, pi 1 = 1, F = pi f with f_i = r_i0 (i != 0). Take z
// with Q z = f - F 1 (solvable: pi (f - F 1) = 0). A change dr of r_ij gives
// dQ = dr e_i (e_j - e_i)^T and df = dr [j = 0] e_i, and from dpi Q = -pi dQ,
// dpi 1 = 0: dpi f = dpi (Q z + F 1) = -pi dQ z = -dr pi_i (z_j - z_i). So
//   dF/dr_ij = pi_i (z_i - z_j + [j = 0]).
// The cost per input is one GTH (O(n^3)) and one (n-1)-dimensional linear solve,
// against O(n^3 P) for forward-mode Jets with P = 2 n (n - 1) parameters.
#include <cmath>
#include <utility>

#include "ctmc/analysis/fit_flux.hpp"
#include "ctmc/core/errors.hpp"

namespace ctmc::analysis {

namespace {

// Called for every grid point of every Jacobian evaluation (401 x per LM
// iteration), so everything lives in fixed-size arrays: no heap allocation,
// and n is a compile-time constant so that the small loops unroll (about 2x
// faster than a run-time n). The arithmetic is that of general_rates,
// closed_class and solvers::gth_dense, in the same order (same results to
// the last bit).
// At -O3 (analysis/CMakeLists.txt) GCC 12 cannot follow the closed-class
// bookkeeping and warns that g and pic may be read uninitialized; every
// entry read (g[a][b], a != b < nc; pic[i], i < k) is written first, and
// zero-filling them would cost a store per entry on every call.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
template <std::size_t n>
bool adjoint(const double* theta, double H, double& flux, double* grad, double scale) {
  constexpr std::size_t N = kMaxGeneralStates;  // array size; loops run to n
  // Diagonals of q, g and unused entries are never read: no zero fill.
  double q[N][N];
  bool active[N][N];
  std::size_t inactive = 0;
  {
    std::size_t k = 0;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        if (i == j) continue;
        const double r = theta[k] + theta[k + 1] * H;  // rectified_affine
        active[i][j] = r > 0;
        inactive += !(r > 0);
        q[i][j] = r > 0 ? r : 0.0;
        k += 2;
      }
  }
  // Closed class (closed_class in fit_flux.hpp) with bit masks: reach[i] has
  // bit j when j is reachable from i. Every rate positive: all states, in
  // order (what the search below finds then).
  std::size_t c[N];
  std::size_t nc = 0;
  if (inactive == 0) {
    for (std::size_t i = 0; i < n; ++i) c[nc++] = i;
  } else {
    unsigned reach[N];
    for (std::size_t i = 0; i < n; ++i) {
      reach[i] = 1u << i;
      for (std::size_t j = 0; j < n; ++j)
        if (i != j && q[i][j] > 0) reach[i] |= 1u << j;
    }
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t i = 0; i < n; ++i)
        if (reach[i] >> k & 1u) reach[i] |= reach[k];
    for (std::size_t i = 0; i < n; ++i) {
      bool recurrent = true;
      for (std::size_t j = 0; j < n && recurrent; ++j)
        if ((reach[i] >> j & 1u) && !(reach[j] >> i & 1u)) recurrent = false;
      if (recurrent) c[nc++] = i;
    }
    for (std::size_t a = 0; a < nc; ++a)
      for (std::size_t b = 0; b < nc; ++b)
        if (!(reach[c[a]] >> c[b] & 1u)) return false;  // several closed classes
    if (nc == 0) return false;
  }
  if (grad)
    for (std::size_t k = 0; k < 2 * n * (n - 1); ++k) grad[k] = 0.0;
  if (c[0] != 0) {  // state 0 transient: no spikes, and none for small changes
    flux = 0;
    return true;
  }
  // GTH on the closed class (solvers::gth_dense, same operation order).
  double g[N][N];
  for (std::size_t a = 0; a < nc; ++a)
    for (std::size_t b = 0; b < nc; ++b)
      if (a != b) g[a][b] = q[c[a]][c[b]];
  double pic[N];
  for (std::size_t k = nc - 1; k >= 1; --k) {
    double s = 0;
    for (std::size_t j = 0; j < k; ++j) s += g[k][j];
    if (s == 0.0) return false;  // reducible (gth_dense throws)
    for (std::size_t i = 0; i < k; ++i) g[i][k] /= s;
    for (std::size_t i = 0; i < k; ++i) {
      const double qik = g[i][k];
      if (qik == 0.0) continue;
      for (std::size_t j = 0; j < k; ++j) {
        if (j == i) continue;
        g[i][j] += qik * g[k][j];
      }
    }
  }
  pic[0] = 1;
  double total = 1;
  for (std::size_t k = 1; k < nc; ++k) {
    double acc = 0;
    for (std::size_t i = 0; i < k; ++i) acc += pic[i] * g[i][k];
    pic[k] = acc;
    total += acc;
  }
  for (std::size_t k = 0; k < nc; ++k) pic[k] /= total;

  double f = 0;
  for (std::size_t a = 1; a < nc; ++a) f += pic[a] * q[c[a]][0];
  flux = f;
  if (!std::isfinite(f)) return false;
  if (!grad) return true;

  // z on C (z at state 0 = 0): rows/columns C \ {0} of Q z = f - F 1,
  // solved by Gaussian elimination with partial pivoting (m <= 5; a library
  // LU costs more in set-up than in arithmetic at this size). The block is
  // nonsingular: C \ {0} is transient once state 0 is made absorbing.
  const std::size_t m = nc - 1;
  double z[N] = {}, pi[N] = {};
  for (std::size_t a = 0; a < nc; ++a) pi[c[a]] = pic[a];
  if (m > 0) {
    double A[N][N + 1];  // augmented [A | b], every used entry set below
    for (std::size_t a = 1; a < nc; ++a) {
      double out = 0;
      for (std::size_t j = 0; j < n; ++j)
        if (j != c[a]) out += q[c[a]][j];  // C is closed: all exits stay in C
      A[a - 1][a - 1] = -out;
      for (std::size_t bb = 1; bb < nc; ++bb)
        if (bb != a) A[a - 1][bb - 1] = q[c[a]][c[bb]];
      A[a - 1][m] = q[c[a]][0] - f;
    }
    for (std::size_t k = 0; k < m; ++k) {
      std::size_t piv = k;
      for (std::size_t i = k + 1; i < m; ++i)
        if (std::abs(A[i][k]) > std::abs(A[piv][k])) piv = i;
      if (A[piv][k] == 0.0) return false;
      if (piv != k)
        for (std::size_t j = k; j <= m; ++j) std::swap(A[k][j], A[piv][j]);
      for (std::size_t i = k + 1; i < m; ++i) {
        const double l = A[i][k] / A[k][k];
        for (std::size_t j = k + 1; j <= m; ++j) A[i][j] -= l * A[k][j];
      }
    }
    // Back substitution column by column (the order of Eigen's triangular
    // solve, which this replaces: same rounding, same fits).
    double zr[N];
    for (std::size_t k = m; k-- > 0;) {
      const double x = A[k][m] / A[k][k];
      zr[k] = x;
      for (std::size_t i = 0; i < k; ++i) A[i][m] -= x * A[i][k];
    }
    for (std::size_t a = 1; a < nc; ++a) z[c[a]] = zr[a - 1];
  }
  bool in_c[N] = {};
  for (std::size_t a = 0; a < nc; ++a) in_c[c[a]] = true;

  // dF/dr_ij = pi_i (z_i - z_j + [j = 0]) for i, j in C; rates leaving C are
  // 0 (inactive) and states outside C have pi_i = 0.
  std::size_t k = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      if (in_c[i] && in_c[j]) {
        if (active[i][j]) {
          const double dr = pi[i] * (z[i] - z[j] + (j == 0 ? 1.0 : 0.0));
          if (!std::isfinite(dr) || !std::isfinite(dr * H)) return false;
          grad[k] = dr * scale;
          grad[k + 1] = dr * H * scale;
        }
      }
      k += 2;
    }
  return true;
}
#pragma GCC diagnostic pop

}  // namespace

bool general_flux_adjoint(std::size_t n, const double* theta, double H, double& flux, double* grad, double scale) {
  static_assert(kMaxGeneralStates == 6, "instantiate adjoint<n> for every n up to kMaxGeneralStates");
  switch (n) {
    case 2: return adjoint<2>(theta, H, flux, grad, scale);
    case 3: return adjoint<3>(theta, H, flux, grad, scale);
    case 4: return adjoint<4>(theta, H, flux, grad, scale);
    case 5: return adjoint<5>(theta, H, flux, grad, scale);
    case 6: return adjoint<6>(theta, H, flux, grad, scale);
    default: return false;
  }
}

// Hand-derived gradients of the closed forms of solvers/families.hpp with
// respect to the rates (quotient rule dF = (dN - F dD) / D), then
// dr/dp = [r > 0], dr/ds = H [r > 0] as in rectified_affine. Same value as
// family_flux<double> up to rounding (same formulas, same order for N and D);
// tests compare the gradient with the Jet path. The flux comes first and the
// derivatives only when asked for: Ceres evaluates every trial step without
// a Jacobian, and accepted ones again with it. Each gradient entry is
// multiplied by `scale` (the residual's weight, applied here rather than in a
// second pass over the Jacobian row).
bool family_flux_gradient(const FamilySpec& f, const double* theta, double H, double& flux, double* grad,
                          double scale) {
  auto rect = [&](std::size_t k) {
    const double x = theta[k] + theta[k + 1] * H;
    return x > 0 ? x : 0.0;
  };
  // grad entries of a rectified rate (offset at theta[k]) and of a constant:
  // g = dF/dr = (dN/dr - F dD/dr) / D.
  auto rectified = [&](std::size_t k, double g) {
    const double gs = theta[k] + theta[k + 1] * H > 0 ? g : 0.0;
    grad[k] = gs * scale;
    grad[k + 1] = gs * H * scale;
  };
  auto quotient = [&](double dn, double dd, double den) { return (dn - flux * dd) / den; };
  // F = num / den where it is defined (den > 0, both finite).
  auto set_flux = [&](double num, double den) {
    if (!(den > 0) || !std::isfinite(den) || !std::isfinite(num)) return false;
    flux = num / den;
    return true;
  };
  switch (f.family) {
    case FitFamily::TwoState: {  // [a.p, a.s, d]: F = a d / (a + d)
      const double a = rect(0), d = theta[2];
      const double den = a + d;
      if (!set_flux(a * d, den)) return false;
      if (!grad) return true;
      rectified(0, quotient(d, 1, den));
      grad[2] = quotient(a, 1, den) * scale;
      return true;
    }
    case FitFamily::ThreeState: {  // [a.p, a.s, b, c.p, c.s, d]: F = a c d / (d (a+b+c) + a c)
      const double a = rect(0), b = theta[2], c = rect(3), d = theta[5];
      const double den = d * (a + b + c) + a * c;
      if (!set_flux(a * c * d, den)) return false;
      if (!grad) return true;
      rectified(0, quotient(c * d, d + c, den));
      grad[2] = quotient(0, d, den) * scale;
      rectified(3, quotient(a * d, d + a, den));
      grad[5] = quotient(a * c, a + b + c, den) * scale;
      return true;
    }
    case FitFamily::FullThreeState: {  // rates BG, BR, GB, GR, RB, RG (tree theorem)
      const double bg = rect(0), br = rect(2), gb = rect(4), gr = rect(6), rb = rect(8), rg = rect(10);
      const double w_b = gb * rb + gb * rg + gr * rb;
      const double w_g = bg * rg + bg * rb + br * rg;
      const double w_r = br * gr + br * gb + bg * gr;
      const double den = w_b + w_g + w_r;
      if (!set_flux(w_g * gb + w_r * rb, den)) return false;
      if (!grad) return true;
      // d w_x / d r: w_b depends on GB, GR, RB, RG; w_g on BG, BR, RB, RG;
      // w_r on BG, BR, GB, GR. dN = dw_g gb + dw_r rb (+ w_g for GB,
      // + w_r for RB); dD = dw_b + dw_g + dw_r.
      rectified(0, quotient((rg + rb) * gb + gr * rb, (rg + rb) + gr, den));  // BG
      rectified(2, quotient(rg * gb + (gr + gb) * rb, rg + (gr + gb), den));  // BR
      rectified(4, quotient(br * rb + w_g, (rb + rg) + br, den));             // GB
      rectified(6, quotient((br + bg) * rb, rb + (br + bg), den));            // GR
      rectified(8, quotient(bg * gb + w_r, (gb + gr) + bg, den));             // RB
      rectified(10, quotient((bg + br) * gb, gb + (bg + br), den));           // RG
      return true;
    }
    case FitFamily::General:
      return general_flux_adjoint(f.states, theta, H, flux, grad, scale);
  }
  return false;
}

}  // namespace ctmc::analysis
