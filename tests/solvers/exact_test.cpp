// Exact parsing of numbers as users write them (DESIGN.md section 8): the
// value must be the rational the decimal text denotes.
#include <doctest/doctest.h>

#include <string>

#include "ctmc/solvers/exact.hpp"

using namespace ctmc::solvers;

TEST_CASE("parse_exact reads decimals, exponents and fractions exactly") {
  CHECK(*parse_exact("0.1") == Rational(1, 10));
  CHECK(*parse_exact("-1.25e-12") == Rational(-125, 100) / Rational(1000000000000LL));
  CHECK(*parse_exact("5/48") == Rational(5, 48));
  CHECK(*parse_exact(" 3 ") == 3);
  CHECK(*parse_exact("2.5E3") == 2500);
  CHECK(*parse_exact(".5") == Rational(1, 2));
  CHECK(*parse_exact("7.") == 7);
}

TEST_CASE("leading zeros are decimal, not octal") {
  // Boost's gmp_int string constructor would read "010" as 8 and reject "09".
  CHECK(*parse_exact("0.9") == Rational(9, 10));
  CHECK(*parse_exact("0.10") == Rational(1, 10));
  CHECK(*parse_exact("010") == 10);
  CHECK(*parse_exact("09") == 9);
  CHECK(*parse_exact("1/010") == Rational(1, 10));
  CHECK(*parse_exact("1e-010") == Rational(1, 10000000000LL));
  CHECK(*parse_exact("-0.0008") == Rational(-8, 10000));
}

TEST_CASE("parse_exact rejects what is not a finite number") {
  for (const char* bad : {"", "nan", "NaN", "inf", "-inf", "1/0", "1e", "e5", "0x10", "1.2.3", "1/2/3", "--1", "."})
    CHECK_FALSE(parse_exact(bad).has_value());
}

TEST_CASE("exact_text round-trips") {
  for (const Rational& q : {Rational(1, 3), Rational(-7, 8), Rational(0), Rational(123456789), Rational(1, 1024),
                            Rational(-5, 48)})
    CHECK(*parse_exact(exact_text(q)) == q);
  CHECK(exact_text(Rational(1, 2)) == "0.5");
  CHECK(exact_text(Rational(-1, 8)) == "-0.125");
}

TEST_CASE("a decimal with a million digits after the point reads and prints exactly") {
  // 10^k is formed by GMP powering, and exact_text removes the powers of 2
  // and 5 in one step each, so a 1 MB rate reads in well under a second
  // (bench/bench_exact.cpp times it; a test asserts no wall-clock figure).
  const std::size_t zeros = 1000000;
  const auto q = parse_exact("0." + std::string(zeros, '0') + "1");
  REQUIRE(q.has_value());
  Integer den = 1;
  mpz_ui_pow_ui(den.backend().data(), 10, zeros + 1);
  CHECK(*q == Rational(Integer(1), den));
  const std::string text = exact_text(*q);  // too long for a decimal: a fraction
  CHECK(text.rfind("1/1000", 0) == 0);
  CHECK(text.size() == 2 + zeros + 2);
}
