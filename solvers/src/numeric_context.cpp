// PrecisionScope (numeric_context.hpp).
#include "ctmc/solvers/numeric_context.hpp"

#include "ctmc/solvers/scalar.hpp"

namespace ctmc::solvers {

PrecisionScope::PrecisionScope(unsigned bits)
    : mpfr_digits10_(Mpfr::default_precision()), interval_digits10_(Interval::default_precision()) {
  set_precision_bits(bits);
}

PrecisionScope::~PrecisionScope() {
  Mpfr::default_precision(mpfr_digits10_);
  Interval::default_precision(interval_digits10_);
}

unsigned scoped_precision_bits(unsigned bits) {
  const PrecisionScope scope(bits);
  return precision_bits();
}

}  // namespace ctmc::solvers
