// Activations: MPFI enclosures against MPFR values at 256 bits (Boost's
// generic formulas, a different code path), derivative enclosures against
// high-precision central differences, admissibility checks.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "../test_temp_files.hpp"
#include "ctmc/activations/activation.hpp"
#include "ctmc/activations/activation_interval.hpp"
#include "ctmc/core/errors.hpp"

using namespace ctmc;
using activations::Ivl;
using solvers::Mpfr;
using solvers::Rational;

namespace {

const char* kNames[] = {"sigmoid", "relu", "softplus", "cliprelu_4", "sigmoid_shift_2", "tanh1", "sigmoid_shift_-1.5"};

// True when the MPFI interval contains the MPFR value.
bool contains(const Ivl& x, const Mpfr& v) {
  return mpfr_cmp(&x.get()->left, v.backend().data()) <= 0 && mpfr_cmp(&x.get()->right, v.backend().data()) >= 0;
}

std::string write_table(const std::string& name, const std::string& body) {
  return ctmc::testing::write_temp_file(std::string("activation_test_") + name + ".csv", body);
}

}  // namespace

TEST_CASE("point enclosures contain the 256-bit MPFR value") {
  const ctmc::PrecisionScope precision_256_at_36(256);
  for (const char* name : kNames) {
    const auto a = activations::parse_activation(name);
    for (int k = -40; k <= 40; ++k) {
      const Mpfr x = Mpfr(k) / Mpfr(5);  // -8 .. 8
      Ivl xi(128), v(128);
      mpfi_set_fr(xi, x.backend().data());
      activations::eval_interval(a, v, xi);
      const Mpfr ref = a.eval(x);
      INFO(std::string(name) << " at x = " << k << "/5");
      CHECK(contains(v, ref));
      // Tight: relative width near the working precision (128 bits).
      mpfr_t w;
      mpfr_init2(w, 64);
      mpfi_diam(w, v);
      CHECK(mpfr_get_d(w, MPFR_RNDU) <= 1e-30);
      mpfr_clear(w);
    }
  }
}

TEST_CASE("interval enclosures contain phi at points inside") {
  const ctmc::PrecisionScope precision_256_at_58(256);
  for (const char* name : kNames) {
    const auto a = activations::parse_activation(name);
    Ivl x(128), v(128);
    mpfi_interv_d(x, -0.75, 4.5);  // contains the kinks of relu and cliprelu_4
    activations::eval_interval(a, v, x);
    for (int k = 0; k <= 21; ++k) {
      const Mpfr t = Mpfr(-0.75) + Mpfr(5.25) * Mpfr(k) / Mpfr(21);
      INFO(std::string(name) << " sample " << k);
      CHECK(contains(v, a.eval(t)));
    }
  }
}

TEST_CASE("derivative enclosures contain central differences (smooth) and one-sided slopes (kinks)") {
  const ctmc::PrecisionScope precision_256_at_73(256);
  const Mpfr step = Mpfr(1) / Mpfr("1e30");
  for (const char* name : {"sigmoid", "softplus", "sigmoid_shift_2", "tanh1"}) {
    const auto a = activations::parse_activation(name);
    for (int k = -12; k <= 12; ++k) {
      const Mpfr x = Mpfr(k) / Mpfr(2);
      // Central difference: error O(step^2 phi''') ~ 1e-60, far below 1e-25.
      const Mpfr fd = (a.eval(x + step) - a.eval(x - step)) / (Mpfr(2) * step);
      Ivl xi(128), d(128);
      mpfi_set_fr(xi, x.backend().data());
      activations::derivative_interval(a, d, xi);
      INFO(std::string(name) << " at x = " << k << "/2");
      CHECK(std::fabs(d.mid() - solvers::to_double(fd)) <= 1e-25 + 1e-20 * std::fabs(solvers::to_double(fd)));
      // Second derivative: central difference of the first.
      const Mpfr s = *activations::second_derivative(a, x);
      const Mpfr h2 = Mpfr(1) / Mpfr("1e20");
      const Mpfr fd2 = (a.eval(x + h2) - Mpfr(2) * a.eval(x) + a.eval(x - h2)) / (h2 * h2);
      CHECK(std::fabs(solvers::to_double(s - fd2)) <= 1e-12);
    }
  }
  const auto relu = activations::parse_activation("relu");
  Ivl x(128), d(128);
  mpfi_interv_d(x, -1, 1);
  activations::derivative_interval(relu, d, x);
  CHECK(d.lo() == 0.0);
  CHECK(d.hi() == 1.0);
  mpfi_interv_d(x, 0.5, 2);
  activations::derivative_interval(relu, d, x);
  CHECK(d.lo() == 1.0);
  CHECK(d.hi() == 1.0);
  const auto clip = activations::parse_activation("cliprelu_4");
  mpfi_interv_d(x, 5, 6);
  activations::derivative_interval(clip, d, x);
  CHECK(d.hi() == 0.0);
  CHECK_FALSE(activations::second_derivative(relu, Mpfr(1)).has_value());
}

TEST_CASE("tabulated activation: hull over pieces, slopes") {
  const auto path = write_table("ok", "x,phi\n-1,0\n0,0.5\n2,1.5\n");
  const auto a = activations::parse_activation("table:" + path);
  Ivl x(128), v(128);
  mpfi_interv_d(x, -0.5, 1);  // phi from 0.25 to 1.0
  activations::eval_interval(a, v, x);
  CHECK(v.lo() == doctest::Approx(0.25).epsilon(1e-15));
  CHECK(v.hi() == doctest::Approx(1.0).epsilon(1e-15));
  activations::derivative_interval(a, v, x);
  CHECK(v.lo() == doctest::Approx(0.5).epsilon(1e-15));
  CHECK(v.hi() == doctest::Approx(0.5).epsilon(1e-15));
  CHECK_FALSE(activations::admissibility_violation(a, Rational(-1), Rational(2)).has_value());
  std::remove(path.c_str());
}

TEST_CASE("admissibility: not nondecreasing, negative") {
  const auto dec = write_table("dec", "0,1\n1,2\n2,1.5\n3,3\n");
  const auto a = activations::parse_activation("table:" + dec);
  CHECK(activations::admissibility_violation(a, Rational(0), Rational(3)).has_value());
  CHECK_FALSE(activations::admissibility_violation(a, Rational(0), Rational(1)).has_value());
  const auto neg = write_table("neg", "0,-1\n1,2\n");
  const auto b = activations::parse_activation("table:" + neg);
  const auto why = activations::admissibility_violation(b, Rational(0), Rational(1));
  REQUIRE(why.has_value());
  CHECK(why->find("negative") != std::string::npos);
  for (const char* name : kNames)
    CHECK_FALSE(activations::admissibility_violation(activations::parse_activation(name), Rational(-8), Rational(8)));
  std::remove(dec.c_str());
  std::remove(neg.c_str());
}
