// Per-scalar accuracy of a solver result against an exact rational reference,
// for tests written once over the scalar types (doctest TEST_CASE_TEMPLATE
// over CTMC_ALL_SCALARS or CTMC_POINT_SCALARS, defined at the end).
//
// Errors are measured in units of u = 2^-p, p the scalar's significand bits
// (53 for double, precision_bits() for MPFR and MPFI; double's unit roundoff is
// 2^-53 = eps / 2):
// - Rational: the result must equal the reference (error 0 or infinite);
// - double, Mpfr: relative error |x - exact| / |exact| in units of u;
// - Interval: the enclosure must contain the reference (else infinite) and its
//   relative width (upper - lower) / |exact| is the error in units of u.
// A check `error_ulps(x, exact) <= bound` then reads the same for every scalar.
#pragma once
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ctmc/solvers/scalar.hpp"

namespace ctmc::solvers::test {

template <class T> struct ScalarAccuracy;

template <> struct ScalarAccuracy<double> {
  static std::string name() { return "double"; }
  static constexpr bool kEnclosure = false;
  // The precisions a test runs at (a PrecisionScope of each; the working
  // precision has no effect on double and Rational).
  static std::vector<unsigned> precisions() { return {53}; }
  static unsigned bits() { return 53; }
  static double error_ulps(double x, const Rational& exact) { return std::ldexp(relative_error(x, exact), 53); }
};

template <> struct ScalarAccuracy<Mpfr> {
  static std::string name() { return "MPFR"; }
  static constexpr bool kEnclosure = false;
  static std::vector<unsigned> precisions() { return {64, 256, 1024}; }
  static unsigned bits() { return precision_bits(); }
  static double error_ulps(const Mpfr& x, const Rational& exact) {
    return std::ldexp(relative_error(x, exact), static_cast<int>(bits()));
  }
};

template <> struct ScalarAccuracy<Rational> {
  static std::string name() { return "rational"; }
  static constexpr bool kEnclosure = false;
  static std::vector<unsigned> precisions() { return {53}; }
  static unsigned bits() { return 0; }
  static double error_ulps(const Rational& x, const Rational& exact) {
    return x == exact ? 0.0 : std::numeric_limits<double>::infinity();
  }
};

template <> struct ScalarAccuracy<Interval> {
  static std::string name() { return "MPFI"; }
  static constexpr bool kEnclosure = true;
  static std::vector<unsigned> precisions() { return {64, 256, 1024}; }
  static unsigned bits() { return precision_bits(); }
  static double error_ulps(const Interval& x, const Rational& exact) {
    if (!contains(x, exact)) return std::numeric_limits<double>::infinity();
    const Rational q = (upper(x) - lower(x)) / (exact < 0 ? Rational(-exact) : exact);
    return std::ldexp(to_double(q), static_cast<int>(bits()));
  }
};

}  // namespace ctmc::solvers::test

// The scalar lists of the templated tests.
#define CTMC_ALL_SCALARS double, ctmc::solvers::Mpfr, ctmc::solvers::Rational, ctmc::solvers::Interval
// Without MPFI, for the solvers that have no interval version.
#define CTMC_POINT_SCALARS double, ctmc::solvers::Mpfr, ctmc::solvers::Rational
