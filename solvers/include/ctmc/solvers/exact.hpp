// Exact numbers as users write them: "5/48", "-1.25e-12", "3", "0.1".
// A decimal is read as the rational it denotes (0.1 = 1/10), never through a
// double, so exact and high-precision modes use the values as written
// (DESIGN.md section 8).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "ctmc/solvers/scalar.hpp"

namespace ctmc::solvers {

// Parses an integer, a decimal with optional exponent, or "p/q" (q != 0).
// Returns nullopt for anything else (including nan, inf, empty text).
std::optional<Rational> parse_exact(std::string_view text);

// Canonical exact text of q: an integer, a finite decimal when q has one of at
// most 40 characters, else "p/q". parse_exact(exact_text(q)) == q.
std::string exact_text(const Rational& q);

// log2 of a positive rational, from GMP's (mantissa, exponent) splits of
// numerator and denominator: no rounding to double's range, no MPFR state.
double log2_rational(const Rational& q);

}  // namespace ctmc::solvers
