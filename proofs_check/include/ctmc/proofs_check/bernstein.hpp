// The theorem's Bernstein construction (paper Appendix B, DESIGN.md section 6)
// and its certified sup-norm error.
//
// Target: phi continuous, nondecreasing, >= 0 on [Imin, Imax];
//   u = (I - Imin)/(Imax - Imin),  psi(u) = phi(Imin + (Imax - Imin) u),
//   h = rho psi / (rho - psi)  (rho > max psi),  kappa_i = h(i/N),
//   M_N(u) = sum_i kappa_i b_i(u),  b_i = C(N,i) u^i (1-u)^(N-i)  (= B_N h),
//   F_N(u) = g(M_N(u)),  g(z) = rho z / (rho + z)            (paper eq. B.bernrate).
//
// Rigorous evaluation of M_N(u) for large N (up to 1e6 and beyond) without
// binomial coefficients: with w_i = b_i / b_m (m the mode), the ratios
// w_{i+1}/w_i = (N-i)/(i+1) * u/(1-u) are decreasing in i, so once the ratio
// t_j is < 1 the upper tail is at most w_j t_j / (1 - t_j) (geometric series);
// the lower tail likewise. Only the window where the weights matter (about
// +-9 standard deviations) is summed; with S the window sum of w_i, A that of
// kappa_i w_i, T the tail bound and kappa_max = h(1),
//   M_N(u) in (A + [0, kappa_max T]) / (S + [0, T]),
// since sum_i b_i = 1 fixes b_m = 1 / sum_i w_i. All in MPFI.
//
// Certified sup error (DESIGN.md section 6): F_N and psi are nondecreasing
// (B_N preserves monotonicity, g is increasing), so on a cell [a, b]
//   sup |F_N - psi| <= max(F_N(b) - psi(a), psi(b) - F_N(a)),
// evaluated with outward rounding on an adaptively refined grid (the worst
// cell is bisected first); the lower bound is the best point value
// |F_N(u) - psi(u)| found (its interval's lower end).
//
// Errors: InputError for an inadmissible target (see make_problem).
#pragma once
#include <mpfi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ctmc/activations/activation.hpp"
#include "ctmc/activations/activation_interval.hpp"
#include "ctmc/solvers/scalar.hpp"

namespace ctmc::proofs_check {

using activations::Ivl;
using solvers::Rational;

// The target of the theorem: phi on [Imin, Imax] and rho.
struct BernsteinProblem {
  activations::Activation act;
  Rational imin, imax, rho;
  mpfr_prec_t prec = 128;

  // psi(u), h(u) = rho psi/(rho - psi) enclosures at an interval u.
  void psi(mpfi_ptr out, mpfi_srcptr u) const;
  void h(mpfi_ptr out, mpfi_srcptr u) const;
  // psi'(u) = (Imax - Imin) phi'(I(u)) over an interval u.
  void psi_derivative(mpfi_ptr out, mpfi_srcptr u) const;
  // max psi = phi(Imax) enclosure (phi is nondecreasing).
  void max_psi(mpfi_ptr out) const;
};

// Validates and builds a problem; rho given exactly, or as factor * max phi
// (rounded to a dyadic rational at `prec` bits, upward). Throws InputError
// (one line naming the parameter: domain, rho, rho_factor) for: empty interval (Imax <= Imin), a target
// that is not nondecreasing or negative on it, rho <= max psi (or not
// provably above it), factor <= 1.
BernsteinProblem make_problem(const activations::Activation& act, const Rational& imin, const Rational& imax,
                              const std::optional<Rational>& rho, const std::optional<Rational>& rho_factor,
                              mpfr_prec_t prec);

// How the window sums are enclosed. Mpfi: outward-rounded MPFI at the
// problem's precision. DoubleErrorBound: round-to-nearest doubles with an
// a-priori rounding-error bound (Higham's gamma_k = k 2^-53 / (1 - k 2^-53)
// for the k roundings each term goes through, doubled for safety) around the
// computed sums, and kappa's MPFI enclosure ends rounded outward to doubles:
// equally rigorous, about 100x faster, relative width about 1e-11.
enum class Arithmetic { Mpfi, DoubleErrorBound };

// F_N, M_N and the error at one point, for a fixed N. kappa_i are computed
// lazily (only the window indices are ever needed) and cached.
class BernsteinEvaluator {
 public:
  BernsteinEvaluator(const BernsteinProblem& p, std::int64_t n, Arithmetic arith = Arithmetic::Mpfi);
  ~BernsteinEvaluator();
  BernsteinEvaluator(const BernsteinEvaluator&) = delete;
  BernsteinEvaluator& operator=(const BernsteinEvaluator&) = delete;

  std::int64_t n() const { return n_; }
  const BernsteinProblem& problem() const { return p_; }
  // Encloses M_N(u) and F_N(u); u a point or narrow interval inside [0, 1].
  void eval(mpfi_ptr m_out, mpfi_ptr f_out, mpfi_srcptr u);
  // Nonrigorous double F_N(u) - psi(u) (search heuristics only).
  double error_double(double u);
  // Enclosure of kappa_i = h(i/N).
  mpfi_srcptr kappa(std::int64_t i);
  // Rigorous [lo, hi] of M_N'(u) over 0 < a <= u <= b < 1, from
  // M_N' = N sum_i (kappa_{i+1} - kappa_i) b^{N-1}_i(u) with nonnegative
  // increments: each b_i ranges between min(b_i(a), b_i(b)) and its maximum
  // on [a, b] (an end, or inside: bounded by the tangent of the concave
  // log b_i at a). Double weights with the a-priori error bound. False when
  // the cell is too wide for the windowed sums (the caller falls back).
  bool derivative_bounds(double a, double b, double& lo, double& hi);
  Arithmetic arithmetic() const { return arith_; }
  std::uint64_t terms_summed() const { return terms_; }

 private:
  double kappa_double(std::int64_t i);
  double kappa_lo_d(std::int64_t i);
  double kappa_hi_d(std::int64_t i);
  void eval_double_bound(mpfi_ptr m_out, double u);
  const BernsteinProblem& p_;
  std::int64_t n_;
  Arithmetic arith_;
  std::vector<double> kappa_lo_d_, kappa_hi_d_;  // outward-rounded ends (DoubleErrorBound)
  std::vector<std::unique_ptr<Ivl>> kappa_;  // lazily filled
  std::vector<double> kappa_d_;
  std::vector<char> kappa_d_set_;
  Ivl kappa_max_;
  std::uint64_t terms_ = 0;
};

// Encloses M_N(u) = sum_i kappa(i) b_i(u) for nonnegative nondecreasing
// kappa (any source), by the windowed sum with rigorous tails above.
// kappa_max must enclose an upper bound of every kappa(i).
// u must be a point or narrow interval in [0, 1].
// tail_rel: tails below tail_rel times the window sum are bounded, not summed.
void bernstein_sum(mpfi_ptr out, std::int64_t n, mpfi_srcptr u,
                   const std::function<mpfi_srcptr(std::int64_t)>& kappa, mpfi_srcptr kappa_max,
                   std::uint64_t* terms = nullptr, double tail_rel = 0x1p-40);

struct SupOptions {
  std::optional<double> eps;        // certify mode: stop once upper < eps or lower >= eps
  double rel_tol = 0.02;            // sup mode: stop once upper <= lower (1 + rel_tol) + abs_tol
  double abs_tol = 0;
  std::int64_t max_evals = 200000;  // budget of point evaluations
  int initial_cells = 64;
  bool seed_with_search = true;     // double search for the argmax first
  // Also use the second-order (derivative) cell bound where the bracketing
  // bound is not enough (DoubleErrorBound evaluators only).
  bool second_order = true;
};

struct SupResult {
  double lower = 0;        // proven: sup |F_N - psi| >= lower (a point value)
  double upper = 0;        // proven: sup |F_N - psi| <= upper
  double argmax_u = 0;     // where `lower` was found
  std::int64_t evaluations = 0;
  std::int64_t cells = 0;
  bool converged = false;  // the stopping rule was met (not the budget)
};

SupResult certified_sup(BernsteinEvaluator& ev, const SupOptions& opt = {});

// A proven lower bound only: a nonrigorous double search for the argmax of
// |F_N - psi|, then one MPFI point value there (cheap; used to rule N out).
SupResult search_lower_bound(BernsteinEvaluator& ev);

// Uniform-grid, non-adaptive certificate (the benchmark's baseline): the
// same cell bound on `cells` equal cells.
SupResult uniform_grid_sup(BernsteinEvaluator& ev, std::int64_t cells);

// L_h = (Imax - Imin) sup rho^2 phi'(I) / (rho - phi(I))^2, the Lipschitz
// constant of h as a function of u: [lower, upper] by branch and bound with
// interval evaluation (upper rigorous; lower a point value).
struct LipschitzBound {
  double lower = 0, upper = 0, argmax_I = 0;
};
LipschitzBound lipschitz_h(const BernsteinProblem& p, double rel_tol = 1e-9, int max_evals = 200000);

}  // namespace ctmc::proofs_check
