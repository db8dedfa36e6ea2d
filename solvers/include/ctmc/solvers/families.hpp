// Named CTMC neuron families and their closed-form stationary fluxes
// (DESIGN.md section 4; paper eqs. 1-2 and the Bernstein construction of the
// theorem).
//
// The closed forms are templates over any commutative ring T constructible
// from int (Rational, Mpfr, Interval, double, ceres::Jet, a symbolic
// polynomial type): they only add and multiply, and return the flux as a
// fraction num/den so that ring types (polynomials) can use them too. Divide
// (`value()`) only in a field.
//
// The model builders produce ordinary `Model`s whose rates are rectified
// affine in the input H, r(H) = max(0, offset + slope H), with
// meta = {"family": "<name>", <parameters as exact strings>}, so that the
// general solvers and these closed forms can be compared on the same chain.
#pragma once
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/scalar.hpp"

namespace ctmc::solvers {

// A rate max(0, offset + slope * H).
struct Affine {
  Rational offset{0}, slope{0};
  Rational at(const Rational& H) const {
    Rational r = offset + slope * H;
    return r > 0 ? r : Rational(0);
  }
};

// A closed-form flux num / den.
template <class T>
struct Fraction {
  T num, den;
  T value() const { return num / den; }
};

// Two-state neuron B -> R (spike) at a, R -> B at d: renewal process whose
// stationary rate is 1 / (1/a + 1/d) = a d / (a + d).
template <class T>
Fraction<T> two_state_flux(const T& a, const T& d) {
  return {a * d, a + d};
}

// Three-state neuron of the paper (eq. 1): B -> G at a, G -> B at b,
// G -> R at c (spike), R -> B at d. Tree theorem: trees into B weigh d(b+c),
// into G a d, into R a c, so F = c pi_G = a c d / (d (a+b+c) + a c) (eq. 2).
template <class T>
Fraction<T> three_state_flux(const T& a, const T& b, const T& c, const T& d) {
  return {a * c * d, d * (a + b + c) + a * c};
}

// Index of each transition of the full three-state family (states B=0, G=1,
// R=2) in its rate array.
enum FullThreeStateRate : std::size_t { kBG = 0, kBR = 1, kGB = 2, kGR = 3, kRB = 4, kRG = 5 };

// Full three-state chain, all six transitions; spikes on the transitions into
// B (G -> B and R -> B). Markov chain tree theorem: the spanning in-trees are
//   into B: {GB, RB}, {GB, RG}, {GR, RB}
//   into G: {BG, RG}, {BG, RB}, {BR, RG}
//   into R: {BR, GR}, {BR, GB}, {BG, GR}
// and F = (w_G r_GB + w_R r_RB) / (w_B + w_G + w_R).
template <class T>
Fraction<T> full_three_state_flux(const std::array<T, 6>& r) {
  const T w_b = r[kGB] * r[kRB] + r[kGB] * r[kRG] + r[kGR] * r[kRB];
  const T w_g = r[kBG] * r[kRG] + r[kBG] * r[kRB] + r[kBR] * r[kRG];
  const T w_r = r[kBR] * r[kGR] + r[kBR] * r[kGB] + r[kBG] * r[kGR];
  return {w_g * r[kGB] + w_r * r[kRB], w_b + w_g + w_r};
}

// Bernstein polynomial M_N(u) = sum_i kappa_i C(N,i) u^i (1-u)^(N-i),
// N = kappa.size() - 1, by de Casteljau's algorithm: only additions and
// multiplications by u and 1-u (no binomials, no division, no cancellation
// for 0 <= u <= 1), so it works in rings and is exact in rationals. O(N^2):
// meant for N up to a few thousand.
//
// v = 1 - u is passed separately where the caller can form it exactly (a
// rational u rounded once into T): 1 - u computed in T from a rounded u near
// 1 keeps only the absolute accuracy of u, and M_N there is of the size of
// (1-u) kappa_{N-1} when kappa_N = 0 (u = 1 - 1e-9 in double: 8 digits lost;
// 1 - 1e-20: none left; 256-bit MPFR lost 18 digits).
template <class T>
T bernstein_polynomial(const std::vector<T>& kappa, const T& u, const T& v) {
  if (kappa.empty()) return T(0);
  std::vector<T> b(kappa);
  for (std::size_t r = b.size() - 1; r >= 1; --r)
    for (std::size_t i = 0; i < r; ++i) b[i] = v * b[i] + u * b[i + 1];
  return b[0];
}
template <class T>
T bernstein_polynomial(const std::vector<T>& kappa, const T& u) {
  return bernstein_polynomial(kappa, u, T(T(1) - u));
}

// Bernstein chain flux F_N = rho M / (rho + M) (the theorem's construction):
// num = rho M, den = rho + M. Independent of gamma.
template <class T>
Fraction<T> bernstein_flux(const std::vector<T>& kappa, const T& rho, const T& u) {
  const T m = bernstein_polynomial(kappa, u);
  return {rho * m, rho + m};
}

// States B, R; B -> R spike at a(H), R -> B at d(H).
Model two_state_model(const Affine& a, const Affine& d);
// States B, G, R; B -> G a, G -> B b, G -> R c (spike), R -> B d (paper eq. 1).
Model three_state_model(const Affine& a, const Affine& b, const Affine& c, const Affine& d);
// States B, G, R; transitions in the order {BG, BR, GB, GR, RB, RG}; spikes on
// G -> B and R -> B. All six transitions are present (a zero rate is allowed).
Model full_three_state_model(const std::array<Affine, 6>& r);
// States A0..AN then R0..RN (N = kappa.size() - 1 >= 1); with
// u = (I - Imin)/(Imax - Imin) written as affine rates in the input I:
// A_i -> A_{i+1} at gamma (N-i) u, A_i -> A_{i-1} at gamma i (1-u),
// A_i -> R_i spike at kappa_i, R_i -> A_i at rho. Outside [Imin, Imax] the
// rectification makes the chain behave as u clamped to [0, 1].
// Throws InputError for kappa_i < 0, rho <= 0, gamma <= 0, Imax <= Imin.
Model bernstein_model(const std::vector<Rational>& kappa, const Rational& rho, const Rational& gamma,
                      const Rational& Imin, const Rational& Imax);

// The closed-form flux of a model whose meta.family names a known family and
// whose states and transitions have that family's structure (as the builders
// above produce them; transition order and a missing zero-rate transition of
// the full three-state chain do not matter). Rates are taken from the model's
// own transitions at H, evaluated exactly and rounded once into T, so that a
// comparison with solve_stationary<T> measures the solver, not the rounding
// of the inputs. Bernstein: kappa, rho, Imin, Imax from meta, checked against
// the transitions; u clamped to [0, 1] as the rectified rates do. Returns
// nullopt when the family is unknown or the structure does not match.
// T = double, Mpfr, Rational, Interval. In double the form is evaluated on
// the rates scaled by a power of two (exact; see families.cpp) and returned
// as {value, 1}, so its products neither overflow nor underflow where the
// flux itself is in range.
template <class T>
std::optional<Fraction<T>> closed_form_flux(const Model& m, const Rational& H);

// meta.family, or "" when absent.
std::string family_name(const Model& m);
// The closed form of a known family as text (e.g. "a c d / (d (a + b + c) + a c)"), or "".
std::string closed_form_text(const std::string& family);

extern template std::optional<Fraction<double>> closed_form_flux(const Model&, const Rational&);
extern template std::optional<Fraction<Mpfr>> closed_form_flux(const Model&, const Rational&);
extern template std::optional<Fraction<Rational>> closed_form_flux(const Model&, const Rational&);
extern template std::optional<Fraction<Interval>> closed_form_flux(const Model&, const Rational&);

}  // namespace ctmc::solvers
