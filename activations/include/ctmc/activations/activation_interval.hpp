// Rigorous (outward-rounded, MPFI) evaluation of the target activations phi
// and of their derivatives over an interval (DESIGN.md section 6; used by the
// certified sup-norm and Lipschitz bounds of the Bernstein theorem).
//
// Every function returns an enclosure: for every real x in X the true value
// phi(x) (resp. phi'(x)) lies in the returned interval. The enclosures are
// analytic (no libm call):
//   sigmoid, sigmoid_shift_S  1/(1+e^-(x-S));  phi' = 1/(4 cosh^2((x-S)/2)),
//                             decreasing in |x-S|, so evaluated on |X-S|
//   softplus                  log1p(e^x);       phi' = sigmoid(x)
//   tanh1                     tanh(x)+1;        phi' = 1/cosh^2(x)
//   relu, cliprelu_K          endpoint formulas; phi' in {0,1}, and [0,1]
//                             where X contains a kink (one-sided derivatives)
//   table:FILE                hull over the pieces X meets; phi' = hull of
//                             their slopes (0 beyond the ends)
// Each single-use-of-x formula is evaluated in interval arithmetic, which is
// then tight up to rounding (no dependency problem).
//
// Precision: results get the precision of `out` (mpfi_init2 by the caller).
#pragma once
#include <mpfi.h>

#include <optional>
#include <string>

#include "ctmc/activations/activation.hpp"
#include "ctmc/solvers/scalar.hpp"

namespace ctmc::activations {

// RAII holder of one mpfi_t (the hot loops use the C API directly: Boost's
// number wrapper allocates a temporary per operation).
class Ivl {
 public:
  explicit Ivl(mpfr_prec_t prec) { mpfi_init2(v_, prec); }
  Ivl(const Ivl& o) {
    mpfi_init2(v_, mpfi_get_prec(o.v_));
    mpfi_set(v_, o.v_);
  }
  Ivl& operator=(const Ivl& o) {
    if (this != &o) {
      mpfi_set_prec(v_, mpfi_get_prec(o.v_));
      mpfi_set(v_, o.v_);
    }
    return *this;
  }
  ~Ivl() { mpfi_clear(v_); }
  mpfi_ptr get() { return v_; }
  mpfi_srcptr get() const { return v_; }
  operator mpfi_ptr() { return v_; }
  operator mpfi_srcptr() const { return v_; }
  double lo() const;  // left end rounded down to double
  double hi() const;  // right end rounded up to double
  double mid() const;

 private:
  mpfi_t v_;
};

// Encloses q (exact rational) in out.
void set_rational(mpfi_ptr out, const solvers::Rational& q);

// phi(X) and phi'(X) enclosures (see the header comment).
void eval_interval(const Activation& a, mpfi_ptr out, mpfi_srcptr x);
void derivative_interval(const Activation& a, mpfi_ptr out, mpfi_srcptr x);

// Convenience forms on solvers::Interval (result at x's precision).
solvers::Interval eval_interval(const Activation& a, const solvers::Interval& x);
solvers::Interval derivative_interval(const Activation& a, const solvers::Interval& x);

// True for the C-infinity activations (sigmoid, sigmoid_shift, softplus,
// tanh1): the Voronovskaya check applies to them.
bool is_smooth(const Activation& a);
// phi''(x) in MPFR (round to nearest; not an enclosure), for smooth a only;
// std::nullopt otherwise.
std::optional<solvers::Mpfr> second_derivative(const Activation& a, const solvers::Mpfr& x);

// Why phi is not an admissible target of the theorem on [lo, hi] (not
// nondecreasing, or negative somewhere), or std::nullopt when it is. Decided
// rigorously: nondecreasing when the enclosure of phi' over [lo, hi] has a
// nonnegative left end (exact for the analytic and piecewise-linear cases),
// nonnegative when phi(lo) >= 0 is proved. Callers throw it as
// InputError("activation", ...).
std::optional<std::string> admissibility_violation(const Activation& a, const solvers::Rational& lo,
                                                   const solvers::Rational& hi, mpfr_prec_t prec = 128);

}  // namespace ctmc::activations
