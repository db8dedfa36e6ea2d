// PrecisionScope and precision_bits (numeric_context.hpp). The scalar types
// are solvers' Mpfr and Interval (solvers/scalar.hpp); their working
// precision is their Boost backends' default precision of the calling thread,
// which this file sets directly so that core needs nothing of ours.
#include "ctmc/core/numeric_context.hpp"

#include <boost/multiprecision/detail/digits.hpp>
#include <boost/multiprecision/mpfi.hpp>
#include <boost/multiprecision/mpfr.hpp>

namespace ctmc {

namespace {

namespace bmp = boost::multiprecision;
using MpfrNumber = bmp::number<bmp::mpfr_float_backend<0>, bmp::et_off>;
using IntervalNumber = bmp::number<bmp::mpfi_float_backend<0>, bmp::et_off>;

// Smallest decimal-digit count whose Boost conversion gives >= bits.
unsigned digits10_for_bits(unsigned bits) {
  unsigned d10 = 1;
  while (bmp::detail::digits10_2_2(d10) < bits) ++d10;
  return d10;
}

}  // namespace

PrecisionScope::PrecisionScope(unsigned bits)
    : mpfr_digits10_(MpfrNumber::thread_default_precision()),
      interval_digits10_(IntervalNumber::thread_default_precision()) {
  const unsigned d10 = digits10_for_bits(bits);
  MpfrNumber::thread_default_precision(d10);
  IntervalNumber::thread_default_precision(d10);
}

PrecisionScope::~PrecisionScope() {
  MpfrNumber::thread_default_precision(mpfr_digits10_);
  IntervalNumber::thread_default_precision(interval_digits10_);
}

unsigned precision_bits() {
  const MpfrNumber x;
  return static_cast<unsigned>(mpfr_get_prec(x.backend().data()));
}

unsigned scoped_precision_bits(unsigned bits) {
  const PrecisionScope scope(bits);
  return precision_bits();
}

}  // namespace ctmc
