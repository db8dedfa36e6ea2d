#include "bernstein_binomial.hpp"

#include <gmp.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/det_math.hpp"

namespace ctmc::proofs_check {

using solvers::Integer;
using solvers::Rational;

namespace {

Integer binomial(std::int64_t n, std::int64_t k) {
  Integer r;
  mpz_bin_uiui(r.backend().data(), static_cast<unsigned long>(n), static_cast<unsigned long>(k));
  return r;
}

Integer ipow(std::int64_t b, std::int64_t e) {
  Integer r;
  mpz_ui_pow_ui(r.backend().data(), static_cast<unsigned long>(b), static_cast<unsigned long>(e));
  return r;
}

Rational rpow(const Rational& x, std::int64_t e) {
  Rational r(1), b(x);
  for (; e > 0; e >>= 1) {  // square and multiply
    if (e & 1) r *= b;
    if (e > 1) b *= b;
  }
  return r;
}

// v_k exactly (see the header).
Rational v_exact(std::int64_t n, std::int64_t k) {
  Integer num = Integer(2 * k) * binomial(n, k) * ipow(k, k) * ipow(n + 1 - k, n + 1 - k);
  Integer den = Integer(n) * ipow(n + 1, n + 1);
  return Rational(num, den);
}

// log v_k in double (screening only).
double log_v(std::int64_t n, std::int64_t k) {
  const double N = static_cast<double>(n), K = static_cast<double>(k);
  return detmath::log(2 * K / N) + detmath::lgamma(N + 1) - detmath::lgamma(K + 1) - detmath::lgamma(N - K + 1) +
         K * detmath::log(K) + (N + 1 - K) * detmath::log(N + 1 - K) - (N + 1) * detmath::log(N + 1);
}

double rational_down(const Rational& q) {
  mpfr_t t;
  mpfr_init2(t, 64);
  mpfr_set_q(t, q.backend().data(), MPFR_RNDD);
  const double d = mpfr_get_d(t, MPFR_RNDD);
  mpfr_clear(t);
  return d;
}

double rational_up(const Rational& q) {
  mpfr_t t;
  mpfr_init2(t, 64);
  mpfr_set_q(t, q.backend().data(), MPFR_RNDU);
  const double d = mpfr_get_d(t, MPFR_RNDU);
  mpfr_clear(t);
  return d;
}

}  // namespace

Rational binomial_mad_de_moivre(std::int64_t n, const Rational& u) {
  if (n < 1 || u < 0 || u > 1) throw InputError("binomial_mad_de_moivre: need N >= 1 and 0 <= u <= 1");
  if (u == 1) return Rational(0);
  // m = floor(N u) + 1
  const Rational nu = Rational(n) * u;
  Integer fl = numerator(nu) / denominator(nu);  // floor for nu >= 0
  const std::int64_t m = fl.convert_to<std::int64_t>() + 1;
  return Rational(2 * m) * Rational(binomial(n, m)) * rpow(u, m) * rpow(Rational(1) - u, n - m + 1);
}

MaxMeanAbsDev max_mean_abs_deviation(std::int64_t n) {
  if (n < 1 || n > kMaxExactMadN) throw InputError("max_mean_abs_deviation: N out of range");
  const std::int64_t half = (n + 1) / 2;  // v_k = v_{N+1-k}: k <= (N+1)/2 suffices
  std::vector<double> lv(static_cast<std::size_t>(half + 1), -INFINITY);
  double best = -INFINITY;
  for (std::int64_t k = 1; k <= half; ++k) {
    lv[k] = log_v(n, k);
    best = std::max(best, lv[k]);
  }
  MaxMeanAbsDev r;
  r.value = Rational(-1);
  for (std::int64_t k = 1; k <= half; ++k) {
    if (lv[k] < best - 1e-7) continue;
    Rational v = v_exact(n, k);
    if (v > r.value) {
      r.value = v;
      r.k = k;
    }
  }
  return r;
}

double max_mean_abs_deviation_asymptotic_upper(std::int64_t n) {
  if (n < 1) throw InputError("max_mean_abs_deviation: N must be >= 1");
  if (n == 1) return 0.5;
  mpfr_t a, b;
  mpfr_init2(a, 80);
  mpfr_init2(b, 80);
  const double N = static_cast<double>(n);
  // (1 + 2/(N-1)), up
  mpfr_set_ui(a, 2, MPFR_RNDU);
  mpfr_div_d(a, a, N - 1, MPFR_RNDU);
  mpfr_add_ui(a, a, 1, MPFR_RNDU);
  // e^(7/(12N)), up
  mpfr_set_ui(b, 7, MPFR_RNDU);
  mpfr_div_d(b, b, 12 * N, MPFR_RNDU);
  mpfr_exp(b, b, MPFR_RNDU);
  mpfr_mul(a, a, b, MPFR_RNDU);
  // / sqrt(2 pi N): divide by a lower bound of it
  mpfr_const_pi(b, MPFR_RNDD);
  mpfr_mul_d(b, b, 2 * N, MPFR_RNDD);
  mpfr_sqrt(b, b, MPFR_RNDD);
  mpfr_div(a, a, b, MPFR_RNDU);
  const double r = mpfr_get_d(a, MPFR_RNDU);
  mpfr_clear(a);
  mpfr_clear(b);
  return r;
}

double max_mean_abs_deviation_upper(std::int64_t n, std::int64_t exact_limit) {
  if (n <= std::min(exact_limit, kMaxExactMadN)) return rational_up(max_mean_abs_deviation(n).value);
  return max_mean_abs_deviation_asymptotic_upper(n);
}

double max_mean_abs_deviation_lower(std::int64_t n, std::int64_t exact_limit) {
  if (n <= std::min(exact_limit, kMaxExactMadN)) return rational_down(max_mean_abs_deviation(n).value);
  // log v_k = log(2k/N) + lnG(N+1) - lnG(k+1) - lnG(N-k+1) + k log k
  //           + (N+1-k) log(N+1-k) - (N+1) log(N+1); added terms rounded
  // down, subtracted terms rounded up.
  const std::int64_t k = (n + 1) / 2;
  mpfr_t acc, t, x;
  mpfr_inits2(160, acc, t, x, static_cast<mpfr_ptr>(nullptr));
  int sign = 0;
  auto add_log = [&](double coef_sign, std::int64_t mult, std::int64_t arg) {  // +- mult * log(arg)
    mpfr_set_si(x, static_cast<long>(arg), MPFR_RNDN);
    mpfr_log(t, x, coef_sign > 0 ? MPFR_RNDD : MPFR_RNDU);
    mpfr_mul_si(t, t, static_cast<long>(mult), coef_sign > 0 ? MPFR_RNDD : MPFR_RNDU);
    if (coef_sign > 0) mpfr_add(acc, acc, t, MPFR_RNDD); else mpfr_sub(acc, acc, t, MPFR_RNDD);
  };
  auto add_lngamma = [&](double coef_sign, std::int64_t arg) {  // +- lnGamma(arg)
    mpfr_set_si(x, static_cast<long>(arg), MPFR_RNDN);
    mpfr_lgamma(t, &sign, x, coef_sign > 0 ? MPFR_RNDD : MPFR_RNDU);
    if (coef_sign > 0) mpfr_add(acc, acc, t, MPFR_RNDD); else mpfr_sub(acc, acc, t, MPFR_RNDD);
  };
  mpfr_set_zero(acc, 1);
  add_log(+1, 1, 2 * k);
  add_log(-1, 1, n);
  add_lngamma(+1, n + 1);
  add_lngamma(-1, k + 1);
  add_lngamma(-1, n - k + 1);
  add_log(+1, k, k);
  add_log(+1, n + 1 - k, n + 1 - k);
  add_log(-1, n + 1, n + 1);
  mpfr_exp(acc, acc, MPFR_RNDD);
  const double r = mpfr_get_d(acc, MPFR_RNDD);
  mpfr_clears(acc, t, x, static_cast<mpfr_ptr>(nullptr));
  return r;
}

}  // namespace ctmc::proofs_check
