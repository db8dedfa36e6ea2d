// Printing a solver scalar for the CLI: exact text for rationals, 17
// significant digits for double, and the digits the precision carries for MPFR.
#pragma once
#include <fmt/format.h>

#include <string>
#include <type_traits>

#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/scalar.hpp"

namespace ctmc::cli {

template <class T>
std::string show(const T& x, unsigned precision) {
  if constexpr (std::is_same_v<T, solvers::Rational>) {
    return solvers::exact_text(x);
  } else if constexpr (std::is_same_v<T, double>) {
    return fmt::format("{:.17g}", x);
  } else {
    return solvers::to_string(x, static_cast<int>(precision * 0.30103) + 1);
  }
}

}  // namespace ctmc::cli
