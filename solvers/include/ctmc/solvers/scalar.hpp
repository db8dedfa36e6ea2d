// Scalar types of the solvers and the few operations generic code needs from
// them. One algorithm, many scalars (DESIGN.md section 5): double, MPFR at
// run-time precision, exact rational (GMP), interval (MPFI), and ceres::Jet
// (the latter supported by analysis/, which owns the Ceres dependency).
//
// Conversions go through exact rationals: a model's rates are exact numbers,
// evaluated exactly at a rational input H and then rounded once into the
// target scalar (correctly rounded for double/MPFR, an enclosure for MPFI).
#pragma once
#include <boost/multiprecision/gmp.hpp>
#include <boost/multiprecision/mpfi.hpp>
#include <boost/multiprecision/mpfr.hpp>
#include <string>

#include "ctmc/core/numeric_context.hpp"

namespace ctmc::solvers {

namespace bmp = boost::multiprecision;
// et_off: expression templates interfere with generic code and Eigen.
using Mpfr = bmp::number<bmp::mpfr_float_backend<0>, bmp::et_off>;
using Interval = bmp::number<bmp::mpfi_float_backend<0>, bmp::et_off>;
using Rational = bmp::number<bmp::gmp_rational, bmp::et_off>;
using Integer = bmp::number<bmp::gmp_int, bmp::et_off>;

// The working precision of Mpfr and Interval values is set by
// ctmc::PrecisionScope (core/numeric_context.hpp), read by precision_bits().

// Exact rational -> scalar, rounded once.
template <class T> T from_rational(const Rational& q);
template <> double from_rational<double>(const Rational& q);  // round to nearest
template <> Mpfr from_rational<Mpfr>(const Rational& q);      // round to nearest
template <> Interval from_rational<Interval>(const Rational& q);  // enclosure
template <> inline Rational from_rational<Rational>(const Rational& q) { return q; }

// Scalar -> double (nearest; the midpoint for intervals).
inline double to_double(double x) { return x; }
double to_double(const Mpfr& x);
double to_double(const Interval& x);
double to_double(const Rational& x);

// acc += a * b; fused (one rounding) where the scalar supports it.
template <class T> inline void add_product(T& acc, const T& a, const T& b) { acc += a * b; }
inline void add_product(Mpfr& acc, const Mpfr& a, const Mpfr& b) {
  mpfr_fma(acc.backend().data(), a.backend().data(), b.backend().data(), acc.backend().data(),
           MPFR_RNDN);
}

// Relative error |x - exact| / |exact| as a double (0 when both are 0),
// computed in the rationals / at the precision of x so it is not limited by
// double rounding of x.
double relative_error(const Mpfr& x, const Rational& exact);
double relative_error(double x, const Rational& exact);
// Correct bits/digits from a relative error, in [0, cap] (cap: the precision;
// an error of 0 gives cap, a NaN error or one of 100% or more gives 0).
double correct_bits(double rel_err, double cap);
double correct_digits(double rel_err, double cap);

// Interval helpers: endpoints as exact rationals and containment.
Rational lower(const Interval& x);
Rational upper(const Interval& x);
bool contains(const Interval& x, const Rational& q);
// Relative width (upper - lower) / |midpoint|, as a double.
double relative_width(const Interval& x);

// Decimal text of x with `digits` significant digits.
std::string to_string(const Mpfr& x, int digits);
std::string to_string(const Rational& x);

}  // namespace ctmc::solvers
