// The deterministic elementary functions (ctmc/solvers/det_math.hpp) against
// MPFR at 256 bits: the error of every result, in units in the last place of
// the correctly rounded value, stays within the bound the header states
// (1.0 ulp), on seeded random arguments spread over each function's range.
// A failure prints the worst argument.
#include <doctest/doctest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "ctmc/solvers/det_math.hpp"

namespace dm = ctmc::detmath;

namespace {

// SLEEF's stated bound for its u10 functions.
constexpr double kMaxUlps = 1.0;
constexpr int kSamples = 10000;
constexpr mpfr_prec_t kRefBits = 256;

using MpfrUnary = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);

// |y - ref| in ulps of ref at `bits` significand bits (53 double, 24 float);
// ref's exponent e (ref = m 2^e, 1/2 <= |m| < 1) gives ulp = 2^(e - bits),
// floored at the smallest subnormal's.
double ulps(double y, mpfr_srcptr ref, int bits, int min_exp) {
  if (mpfr_zero_p(ref)) return y == 0 ? 0 : std::numeric_limits<double>::infinity();
  mpfr_t d;
  mpfr_init2(d, kRefBits);
  mpfr_set_d(d, y, MPFR_RNDN);
  mpfr_sub(d, d, ref, MPFR_RNDN);
  mpfr_abs(d, d, MPFR_RNDN);
  const long e = std::max<long>(mpfr_get_exp(ref), min_exp + bits);
  mpfr_mul_2si(d, d, bits - e, MPFR_RNDN);
  const double r = mpfr_get_d(d, MPFR_RNDU);
  mpfr_clear(d);
  return r;
}

struct Worst {
  double ulps = 0, x = 0, y = 0;
  void add(double u, double xi, double yi = 0) {
    if (!(u <= ulps)) ulps = u, x = xi, y = yi;  // NaN counts as worst
  }
};

// Max error of f against the MPFR function g over args drawn by `draw`.
template <class T>
Worst check_unary(T (*f)(T), MpfrUnary g, const std::function<double(std::mt19937_64&)>& draw) {
  constexpr int bits = std::numeric_limits<T>::digits;
  constexpr int min_exp = std::numeric_limits<T>::min_exponent - bits;
  std::mt19937_64 rng(20240601);
  mpfr_t x, r;
  mpfr_inits2(kRefBits, x, r, static_cast<mpfr_ptr>(nullptr));
  Worst w;
  for (int i = 0; i < kSamples; ++i) {
    const T xi = static_cast<T>(draw(rng));
    mpfr_set_d(x, static_cast<double>(xi), MPFR_RNDN);
    g(r, x, MPFR_RNDN);
    w.add(ulps(static_cast<double>(f(xi)), r, bits, min_exp), static_cast<double>(xi));
  }
  mpfr_clears(x, r, static_cast<mpfr_ptr>(nullptr));
  return w;
}

template <class T>
Worst check_pow(T (*f)(T, T), const std::function<double(std::mt19937_64&)>& draw_x,
                const std::function<double(std::mt19937_64&)>& draw_y) {
  constexpr int bits = std::numeric_limits<T>::digits;
  constexpr int min_exp = std::numeric_limits<T>::min_exponent - bits;
  std::mt19937_64 rng(20240602);
  mpfr_t x, y, r;
  mpfr_inits2(kRefBits, x, y, r, static_cast<mpfr_ptr>(nullptr));
  Worst w;
  for (int i = 0; i < kSamples; ++i) {
    const T xi = static_cast<T>(draw_x(rng)), yi = static_cast<T>(draw_y(rng));
    mpfr_set_d(x, static_cast<double>(xi), MPFR_RNDN);
    mpfr_set_d(y, static_cast<double>(yi), MPFR_RNDN);
    mpfr_pow(r, x, y, MPFR_RNDN);
    const T v = f(xi, yi);
    if (std::isinf(v) && std::fabs(mpfr_get_d(r, MPFR_RNDN)) > static_cast<double>(std::numeric_limits<T>::max())) continue;
    w.add(ulps(static_cast<double>(v), r, bits, min_exp), static_cast<double>(xi), static_cast<double>(yi));
  }
  mpfr_clears(x, y, r, static_cast<mpfr_ptr>(nullptr));
  return w;
}

int mpfr_lgamma_abs(mpfr_ptr r, mpfr_srcptr x, mpfr_rnd_t rnd) {
  int sign = 0;
  return mpfr_lgamma(r, &sign, x, rnd);
}

std::function<double(std::mt19937_64&)> uniform(double lo, double hi) {
  return [lo, hi](std::mt19937_64& g) { return lo + (hi - lo) * std::generate_canonical<double, 53>(g); };
}
// 10^U(lo, hi): arguments spread over many binades.
std::function<double(std::mt19937_64&)> log_uniform(double lo, double hi) {
  return [lo, hi](std::mt19937_64& g) { return std::pow(10.0, lo + (hi - lo) * std::generate_canonical<double, 53>(g)); };
}

// Prints each function's max error and worst argument (doctest -s shows it).
void require_bound(const std::string& name, const Worst& w) {
  INFO(name << ": max error " << w.ulps << " ulp at x = " << w.x << (w.y != 0 ? " (y = " + std::to_string(w.y) + ")" : ""));
  CHECK(w.ulps <= kMaxUlps);
}

}  // namespace

TEST_CASE("det_math double functions are within 1 ulp of MPFR") {
  require_bound("exp", check_unary<double>(dm::exp, mpfr_exp, uniform(-745, 709.7)));
  require_bound("exp near 0", check_unary<double>(dm::exp, mpfr_exp, uniform(-1e-3, 1e-3)));
  require_bound("expm1", check_unary<double>(dm::expm1, mpfr_expm1, uniform(-40, 709)));
  require_bound("expm1 near 0", check_unary<double>(dm::expm1, mpfr_expm1, uniform(-1e-3, 1e-3)));
  require_bound("log", check_unary<double>(dm::log, mpfr_log, log_uniform(-300, 300)));
  require_bound("log near 1", check_unary<double>(dm::log, mpfr_log, uniform(0.99, 1.01)));
  require_bound("log1p", check_unary<double>(dm::log1p, mpfr_log1p, uniform(-0.999, 10)));
  require_bound("log1p near 0", check_unary<double>(dm::log1p, mpfr_log1p, uniform(-1e-6, 1e-6)));
  require_bound("log2", check_unary<double>(dm::log2, mpfr_log2, log_uniform(-300, 300)));
  require_bound("log10", check_unary<double>(dm::log10, mpfr_log10, log_uniform(-300, 300)));
  require_bound("tanh", check_unary<double>(dm::tanh, mpfr_tanh, uniform(-20, 20)));
  require_bound("tanh near 0", check_unary<double>(dm::tanh, mpfr_tanh, uniform(-1e-4, 1e-4)));
  require_bound("lgamma", check_unary<double>(dm::lgamma, mpfr_lgamma_abs, log_uniform(-3, 5)));
  require_bound("pow", check_pow<double>(dm::pow, log_uniform(-3, 3), uniform(-50, 50)));
}

TEST_CASE("det_math float functions are within 1 ulp of MPFR") {
  require_bound("expf", check_unary<float>(dm::exp, mpfr_exp, uniform(-103, 88.7)));
  require_bound("expm1f", check_unary<float>(dm::expm1, mpfr_expm1, uniform(-10, 10)));
  require_bound("logf", check_unary<float>(dm::log, mpfr_log, log_uniform(-37, 38)));
  require_bound("log1pf", check_unary<float>(dm::log1p, mpfr_log1p, uniform(-0.999, 10)));
  require_bound("tanhf", check_unary<float>(dm::tanh, mpfr_tanh, uniform(-10, 10)));
  require_bound("powf", check_pow<float>(dm::pow, uniform(0.01, 2), uniform(-20, 20)));
}

TEST_CASE("det_math special values follow C99 Annex F") {
  constexpr double inf = std::numeric_limits<double>::infinity();
  CHECK(dm::exp(-inf) == 0.0);
  CHECK(dm::exp(inf) == inf);
  CHECK(dm::exp(0.0) == 1.0);
  CHECK(dm::log(1.0) == 0.0);
  CHECK(dm::log(0.0) == -inf);
  CHECK(std::isnan(dm::log(-1.0)));
  CHECK(dm::expm1(0.0) == 0.0);
  CHECK(dm::log1p(-1.0) == -inf);
  CHECK(dm::tanh(inf) == 1.0);
  CHECK(dm::pow(2.0, 10.0) == 1024.0);
  CHECK(dm::pow(10.0, 0.0) == 1.0);
  CHECK(dm::lgamma(1.0) == 0.0);
  CHECK(dm::lgamma(2.0) == 0.0);
  CHECK(dm::exp(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(dm::log(1.0f) == 0.0f);
}
