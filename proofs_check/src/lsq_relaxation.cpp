#include "lsq_relaxation.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace ctmc::proofs_check {

using outward::I;

namespace {

constexpr std::size_t kMax = kMaxRelaxationVars;
// Newton iterations; a piecewise-quadratic Phi is usually minimized in a few.
constexpr int kNewtonIterations = 20;
// Step halvings of the projected line search.
constexpr int kHalvings = 12;

// z - clamp(z, lo, hi): the signed distance of z to [lo, hi].
double excess(double z, double lo, double hi) { return z < lo ? z - lo : (z > hi ? z - hi : 0.0); }

}  // namespace

bool solve_spd(SmallMatrix A, SmallVector b, std::size_t m, SmallVector& x) {
  double scale = 0;
  for (std::size_t i = 0; i < m; ++i) scale = std::max(scale, A[i][i]);
  if (!(scale > 0) || !std::isfinite(scale)) return false;
  for (double mu = 1e-13 * scale; mu < scale; mu *= 100) {
    std::array<std::array<double, kMax>, kMax> Lc{};
    bool ok = true;
    for (std::size_t i = 0; i < m && ok; ++i) {
      for (std::size_t j = 0; j <= i; ++j) {
        double s = A[i][j] + (i == j ? mu : 0.0);
        for (std::size_t k = 0; k < j; ++k) s -= Lc[i][k] * Lc[j][k];
        if (i == j) {
          if (!(s > 0)) {
            ok = false;
            break;
          }
          Lc[i][i] = std::sqrt(s);
        } else {
          Lc[i][j] = s / Lc[j][j];
        }
      }
    }
    if (!ok) continue;
    for (std::size_t i = 0; i < m; ++i) {
      double s = b[i];
      for (std::size_t k = 0; k < i; ++k) s -= Lc[i][k] * x[k];
      x[i] = s / Lc[i][i];
    }
    for (std::size_t i = m; i-- > 0;) {
      double s = x[i];
      for (std::size_t k = i + 1; k < m; ++k) s -= Lc[k][i] * x[k];
      x[i] = s / Lc[i][i];
    }
    return true;
  }
  return false;
}

double LsqRelaxation::phi(const double* delta) const {
  double s = 0;
  for (std::size_t m = 0; m < L.size(); ++m) {
    double z = L[m];
    const double* gm = &g[m * n];
    for (std::size_t k = 0; k < n; ++k) z += gm[k] * delta[k];
    const double e = excess(z, zlo[m], zhi[m]);
    s += w[m] * e * e;
  }
  return s;
}

double LsqRelaxation::bound(std::vector<double>* argmin) const {
  const std::size_t M = L.size();
  std::vector<double> d(n, 0.0), trial(n);
  // Variables scaled by their half-ranges, so that the Newton system is
  // well conditioned whatever the units of the parameters.
  std::array<double, kMax> scale{};
  for (std::size_t k = 0; k < n; ++k) scale[k] = std::max(std::max(-lo[k], hi[k]), 1e-300);
  double f = phi(d.data());
  for (int it = 0; it < kNewtonIterations && f > 0; ++it) {
    std::array<double, kMax> G{};
    std::array<std::array<double, kMax>, kMax> H{};
    for (std::size_t m = 0; m < M; ++m) {
      const double* gm = &g[m * n];
      double z = L[m];
      for (std::size_t k = 0; k < n; ++k) z += gm[k] * d[k];
      const double e = excess(z, zlo[m], zhi[m]);
      if (e == 0) continue;
      for (std::size_t i = 0; i < n; ++i) {
        const double gi = 2 * w[m] * gm[i] * scale[i];
        G[i] += gi * e;
        for (std::size_t j = 0; j <= i; ++j) H[i][j] += gi * gm[j] * scale[j];
      }
    }
    // The free variables: those not held at a bound by the gradient.
    std::array<std::size_t, kMax> free{};
    std::size_t nf = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const double u = d[k] / scale[k], ulo = lo[k] / scale[k], uhi = hi[k] / scale[k];
      const double tol = 1e-12;
      if ((u <= ulo + tol && G[k] > 0) || (u >= uhi - tol && G[k] < 0)) continue;
      free[nf++] = k;
    }
    if (nf == 0) break;
    std::array<std::array<double, kMax>, kMax> A{};
    std::array<double, kMax> b{}, p{};
    for (std::size_t i = 0; i < nf; ++i) {
      b[i] = -G[free[i]];
      for (std::size_t j = 0; j < nf; ++j) {
        const std::size_t a = std::max(free[i], free[j]), c = std::min(free[i], free[j]);
        A[i][j] = H[a][c];
      }
    }
    if (!solve_spd(A, b, nf, p)) break;
    double t = 1, fn = f;
    bool accepted = false;
    for (int h = 0; h < kHalvings; ++h, t *= 0.5) {
      trial = d;
      for (std::size_t i = 0; i < nf; ++i) {
        const std::size_t k = free[i];
        trial[k] = std::clamp(d[k] + t * p[i] * scale[k], lo[k], hi[k]);
      }
      fn = phi(trial.data());
      if (fn < f) {
        accepted = true;
        break;
      }
    }
    if (!accepted) break;
    const bool converged = f - fn <= 1e-13 * f;
    d = trial;
    f = fn;
    if (converged) break;
  }

  // Phi(delta) >= Phi(d) + grad Phi(d) . (delta - d) over the box, in
  // interval arithmetic.
  I Phi{0, 0};
  std::array<I, kMax> grad;
  grad.fill(I{0, 0});
  for (std::size_t m = 0; m < M; ++m) {
    const double* gm = &g[m * n];
    I z = I::point(L[m]);
    for (std::size_t k = 0; k < n; ++k) z = z + I::point(gm[k]) * I::point(d[k]);
    // excess() is nondecreasing in z: its range over z is [excess(z.lo), excess(z.hi)], each rounded outwards.
    const I e = {outward::down(excess(z.lo, zlo[m], zhi[m])), outward::up(excess(z.hi, zlo[m], zhi[m]))};
    const I we = I::point(w[m]) * e;
    Phi = Phi + I::point(w[m]) * sqr(e);
    for (std::size_t k = 0; k < n; ++k) grad[k] = grad[k] + I::point(2) * we * I::point(gm[k]);
  }
  I lb = Phi;
  for (std::size_t k = 0; k < n; ++k)
    lb = lb + grad[k] * I{outward::down(lo[k] - d[k]), outward::up(hi[k] - d[k])};
  if (argmin) *argmin = d;
  return std::max(lb.lo, 0.0);
}

}  // namespace ctmc::proofs_check
