// The rate families that `ctmc-snn fit` fits, as functions of their parameter
// vector theta (DESIGN.md section 4; paper eqs. 1-3).
//
// Every input-dependent rate is rectified affine, r(H) = max(0, p + s H);
// constant rates are single parameters kept > 0 by the fit's bounds.
// Parameter layout (this order is also the order of `family_parameters`):
//   two-state         [a.p, a.s, d]                       B -> R (spike) a(H), R -> B d
//   three-state       [a.p, a.s, b, c.p, c.s, d]          paper eq. 1: B->G a(H), G->B b,
//                                                          G->R c(H) (spike), R->B d
//   full-three-state  [p, s] for BG, BR, GB, GR, RB, RG   all six rectified affine,
//                                                          spikes on G->B and R->B
//   general (n)       [p, s] for every ordered pair (i, j), i != j, in row-major
//                     order (0->1, 0->2, ..., 1->0, 1->2, ...): the complete graph
//                     on n states, spikes on the transitions into state 0.
// `general` with n = 3 is the same family as full-three-state (with another
// parameter order); tests use that to compare GTH with the closed form.
//
// family_flux<T> evaluates the stationary flux F_theta(H): by the closed forms of
// solvers/families.hpp where the family has one, else by dense GTH
// (solvers/gth.hpp) on the n x n rate matrix. T is double, Mpfr or ceres::Jet:
// the same code gives values, high-precision values and exact derivatives
// (automatic differentiation through GTH, DESIGN.md section 5).
// For the general family the fit uses by default the adjoint gradient
// (general_flux_adjoint below: pi still from GTH, derivatives from one small
// linear solve), which costs O(n^3) per input instead of O(n^3 P) for Jets
// with P = 2n(n-1) parameters; tests check it against the Jet gradient, and
// FitOptions::gradient = JetGth selects the Jet path.
//
// The rectifier max(0, .) has a kink at p + s H = 0. For Jets the comparison
// uses the value part, so the derivative there is the one-sided derivative of
// the branch taken (0 on the inactive side). A least-squares objective built
// from it is piecewise smooth; Ceres' trust-region method copes with this in
// practice because a kink only affects the few grid points it sits between,
// and multistart covers the rest (see fit.hpp).
#pragma once
#include <array>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "ctmc/solvers/dense_matrix.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/solvers/gth.hpp"

namespace ctmc::analysis {

enum class FitFamily { TwoState, ThreeState, FullThreeState, General };

struct FamilySpec {
  FitFamily family = FitFamily::ThreeState;
  std::size_t states = 3;  // n for General (2..kMaxGeneralStates); implied otherwise
};

inline constexpr std::size_t kMaxGeneralStates = 6;

// What a parameter is; decides its bounds (fit.hpp) and its start distribution.
enum class ParamKind { Offset, Slope, ConstRate };

struct ParamInfo {
  std::string name;  // "a.p", "d", "BG.s", "2->0.p"
  ParamKind kind;
};

// params[i], params[i + 1] are a rectified-affine rate max(0, p + s H).
inline bool is_rectified_rate(const std::vector<ParamInfo>& params, std::size_t i) {
  return i + 1 < params.size() && params[i].kind == ParamKind::Offset && params[i + 1].kind == ParamKind::Slope;
}

// "two-state", "three-state", "full-three-state", "general"; `states` is used
// only for "general" (2..kMaxGeneralStates). Throws InputError naming
// --family / --states otherwise.
FamilySpec parse_family(const std::string& name, std::size_t states);
std::string family_name(const FamilySpec& f);  // "three-state", "general-4"
std::size_t state_count(const FamilySpec& f);
std::vector<ParamInfo> family_parameters(const FamilySpec& f);
inline std::size_t parameter_count(const FamilySpec& f) { return family_parameters(f).size(); }

// max(0, p + s H), branch chosen on the value (also for Jets).
template <class T>
T rectified_affine(const T& p, const T& s, const T& H) {
  T r = p + s * H;
  return r > T(0) ? r : T(0);
}

// Rate matrix of the general n-state family at H (off-diagonal entries).
template <class T>
solvers::DenseMatrix<T> general_rates(std::size_t n, const T* theta, const T& H) {
  solvers::DenseMatrix<T> q(n);
  std::size_t k = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      q(i, j) = rectified_affine(theta[k], theta[k + 1], H);
      k += 2;
    }
  return q;
}

// The value part of a scalar (x.a for ceres::Jet), to decide structure.
template <class T>
double value_part(const T& x) {
  if constexpr (requires { x.a; }) {
    return x.a;
  } else {
    return static_cast<double>(x);
  }
}

// The unique closed communicating class of the chain whose positive rates are
// q(i, j) > 0 (decided on the value parts), sorted; empty when there are
// several. A rectified rate can vanish at some H: the chain is then
// reducible and pi lives on the closed class (DESIGN.md section 4).
template <class T>
std::vector<std::size_t> closed_class(const solvers::DenseMatrix<T>& q) {
  const std::size_t n = q.n;
  std::vector<char> reach(n * n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    reach[i * n + i] = 1;
    for (std::size_t j = 0; j < n; ++j)
      if (i != j && value_part(q(i, j)) > 0) reach[i * n + j] = 1;
  }
  for (std::size_t k = 0; k < n; ++k)  // transitive closure (Warshall)
    for (std::size_t i = 0; i < n; ++i)
      if (reach[i * n + k])
        for (std::size_t j = 0; j < n; ++j)
          if (reach[k * n + j]) reach[i * n + j] = 1;
  std::vector<std::size_t> c;  // recurrent states: everything they reach reaches back
  for (std::size_t i = 0; i < n; ++i) {
    bool recurrent = true;
    for (std::size_t j = 0; j < n && recurrent; ++j)
      if (reach[i * n + j] && !reach[j * n + i]) recurrent = false;
    if (recurrent) c.push_back(i);
  }
  for (std::size_t a : c)
    for (std::size_t b : c)
      if (!reach[a * n + b]) return {};  // two closed classes
  return c;
}

// Flux of the general family: GTH on the closed class C, then
// F = sum_{i in C, i != 0} pi_i r_i0 (0 when state 0 is transient: no rate
// from C into 0 is positive). Several closed classes give NaN, which the fit
// rejects. The structure is fixed at the evaluation point, so Jets get the
// derivative of the branch taken (transient states contribute 0).
template <class T>
T general_flux(std::size_t n, const T* theta, const T& H) {
  const auto q = general_rates(n, theta, H);
  const auto c = closed_class(q);
  if (c.empty()) return T(std::numeric_limits<double>::quiet_NaN());
  solvers::DenseMatrix<T> sub(c.size());
  for (std::size_t a = 0; a < c.size(); ++a)
    for (std::size_t b = 0; b < c.size(); ++b)
      if (a != b) sub(a, b) = q(c[a], c[b]);
  const auto pi = solvers::gth_dense(sub);
  T f(0);
  for (std::size_t a = 0; a < c.size(); ++a)
    if (c[a] != 0) f += pi[a] * q(c[a], 0);
  return f;
}

// Value and gradient of the general family's flux in double by the adjoint of
// the stationary equations: with Q z = f - F 1 (f_i = r_i0 the spike rate out
// of i, z_0 = 0), perturbing r_ij changes pi Q = 0 by dQ = e_i (e_j - e_i)^T,
// so dF/dr_ij = pi_i (z_i - z_j + [j = 0]); then dr/dp = [r > 0] and
// dr/ds = H [r > 0] (the branch rule of rectified_affine). pi comes from GTH;
// z from an LU solve of the (n-1) x (n-1) block of Q without state 0
// (nonsingular on the closed class). Reducible chains are handled as in
// general_flux (pi on the closed class C; 0 in C or F = 0 and grad = 0).
// grad may be null; it receives scale x the gradient. Returns false when
// there are several closed classes.
bool general_flux_adjoint(std::size_t n, const double* theta, double H, double& flux, double* grad,
                          double scale = 1.0);

// Value and gradient in double of any family's flux: the closed forms'
// derivatives written out by hand (two-, three-, full-three-state: quotient
// rule on the tree-theorem numerator and denominator), the adjoint above for
// the general family. The fit's default Jacobian (about 5x cheaper than Jets
// through the closed forms at -O2); tests check it against the Jets. Returns
// false where the flux is undefined (denominator 0: no closed class). With
// `scale`, grad holds scale x the gradient (a weighted residual's row).
bool family_flux_gradient(const FamilySpec& f, const double* theta, double H, double& flux, double* grad,
                          double scale = 1.0);

template <class T>
T family_flux(const FamilySpec& f, const T* theta, const T& H) {
  switch (f.family) {
    case FitFamily::TwoState:
      return solvers::two_state_flux(rectified_affine(theta[0], theta[1], H), theta[2]).value();
    case FitFamily::ThreeState:
      return solvers::three_state_flux(rectified_affine(theta[0], theta[1], H), theta[2],
                                       rectified_affine(theta[3], theta[4], H), theta[5])
          .value();
    case FitFamily::FullThreeState: {
      std::array<T, 6> r;
      for (std::size_t k = 0; k < 6; ++k) r[k] = rectified_affine(theta[2 * k], theta[2 * k + 1], H);
      return solvers::full_three_state_flux(r).value();
    }
    case FitFamily::General:
      return general_flux(f.states, theta, H);
  }
  return T(0);
}

}  // namespace ctmc::analysis
