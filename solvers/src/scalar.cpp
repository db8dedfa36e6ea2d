#include "ctmc/solvers/scalar.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ctmc/solvers/det_math.hpp"

namespace ctmc::solvers {

template <>
double from_rational<double>(const Rational& q) {
  mpfr_t t;
  mpfr_init2(t, 53);
  mpfr_set_q(t, q.backend().data(), MPFR_RNDN);
  double d = mpfr_get_d(t, MPFR_RNDN);
  mpfr_clear(t);
  return d;
}

template <>
Mpfr from_rational<Mpfr>(const Rational& q) {
  Mpfr x;
  mpfr_set_q(x.backend().data(), q.backend().data(), MPFR_RNDN);
  return x;
}

template <>
Interval from_rational<Interval>(const Rational& q) {
  Interval x;
  mpfi_set_q(x.backend().data(), q.backend().data());
  return x;
}

double to_double(const Mpfr& x) { return mpfr_get_d(x.backend().data(), MPFR_RNDN); }
double to_double(const Interval& x) { return mpfi_get_d(x.backend().data()); }
double to_double(const Rational& x) { return from_rational<double>(x); }

namespace {
// |x - exact| / |exact| evaluated at `prec` bits (enough to resolve the error
// of an x at precision prec - 64).
double rel_err_mpfr(mpfr_srcptr x, const Rational& exact, mpfr_prec_t prec) {
  if (exact == 0) {
    return mpfr_zero_p(x) ? 0.0 : std::numeric_limits<double>::infinity();
  }
  mpfr_t e, d;
  mpfr_init2(e, prec);
  mpfr_init2(d, prec);
  mpfr_set_q(e, exact.backend().data(), MPFR_RNDN);
  mpfr_sub(d, x, e, MPFR_RNDN);
  mpfr_div(d, d, e, MPFR_RNDN);
  mpfr_abs(d, d, MPFR_RNDN);
  double r = mpfr_get_d(d, MPFR_RNDU);
  mpfr_clear(e);
  mpfr_clear(d);
  return r;
}
}  // namespace

double relative_error(const Mpfr& x, const Rational& exact) {
  return rel_err_mpfr(x.backend().data(), exact, mpfr_get_prec(x.backend().data()) + 64);
}

double relative_error(double x, const Rational& exact) {
  mpfr_t t;
  mpfr_init2(t, 53);
  mpfr_set_d(t, x, MPFR_RNDN);
  double r = rel_err_mpfr(t, exact, 53 + 64);
  mpfr_clear(t);
  return r;
}

// A NaN error (e.g. 0/0 or inf - inf in the value checked) has no correct
// bit: it must not pass as the full precision. An error of 100% or more has
// none either, rather than a negative number of them.
double correct_bits(double rel_err, double cap) {
  if (std::isnan(rel_err)) return 0;
  if (rel_err <= 0) return cap;
  return std::clamp(-detmath::log2(rel_err), 0.0, cap);
}

double correct_digits(double rel_err, double cap) {
  if (std::isnan(rel_err)) return 0;
  if (rel_err <= 0) return cap;
  return std::clamp(-detmath::log10(rel_err), 0.0, cap);
}

Rational lower(const Interval& x) {
  Rational q;
  // An mpfr value is a dyadic rational, so this is exact.
  mpfr_t l;
  mpfr_init2(l, mpfi_get_prec(x.backend().data()));
  mpfi_get_left(l, x.backend().data());
  mpz_t m;
  mpz_init(m);
  mpfr_exp_t e = mpfr_get_z_2exp(m, l);
  mpq_set_z(q.backend().data(), m);
  if (e >= 0)
    mpq_mul_2exp(q.backend().data(), q.backend().data(), static_cast<mp_bitcnt_t>(e));
  else
    mpq_div_2exp(q.backend().data(), q.backend().data(), static_cast<mp_bitcnt_t>(-e));
  mpz_clear(m);
  mpfr_clear(l);
  return q;
}

Rational upper(const Interval& x) {
  Interval neg = -x;
  return -lower(neg);
}

bool contains(const Interval& x, const Rational& q) { return lower(x) <= q && q <= upper(x); }

double relative_width(const Interval& x) {
  mpfr_t w, m;
  mpfr_init2(w, 64);
  mpfr_init2(m, 64);
  mpfi_diam_abs(w, x.backend().data());
  mpfi_mid(m, x.backend().data());
  double r;
  if (mpfr_zero_p(m))
    r = mpfr_zero_p(w) ? 0.0 : std::numeric_limits<double>::infinity();
  else
    r = mpfr_get_d(w, MPFR_RNDU) / std::fabs(mpfr_get_d(m, MPFR_RNDN));
  mpfr_clear(w);
  mpfr_clear(m);
  return r;
}

std::string to_string(const Mpfr& x, int digits) {
  return x.str(digits, std::ios_base::scientific);
}

std::string to_string(const Rational& x) { return x.str(); }

}  // namespace ctmc::solvers
