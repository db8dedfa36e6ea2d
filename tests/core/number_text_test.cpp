// Plain numbers as text (core/number_text.hpp parse_double): read as strtod,
// numpy and Python read them. Subnormals are numbers (std::stod refuses
// them); only a magnitude beyond the largest double is not.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "ctmc/core/number_text.hpp"

using ctmc::not_a_number_reason;
using ctmc::parse_double;

TEST_CASE("parse_double: subnormals and underflow are numbers; overflow and tails are not") {
  // 1e-320 lies between the subnormals 2024 * 2^-1074 and 2025 * 2^-1074 (2^-1074 = 4.94e-324), nearer the first.
  const auto sub = parse_double("1e-320");
  REQUIRE(sub);
  CHECK(*sub == std::ldexp(2024.0, -1074));
  CHECK(*parse_double("4.9406564584124654e-324") == std::numeric_limits<double>::denorm_min());
  CHECK(*parse_double("1e-400") == 0.0);  // below half the smallest subnormal: rounds to 0, as float('1e-400')
  CHECK(*parse_double("-2.5") == -2.5);
  CHECK(std::isnan(*parse_double("nan")));
  CHECK(std::isinf(*parse_double("inf")));
  CHECK(*parse_double("1.7976931348623157e308") == std::numeric_limits<double>::max());
  CHECK(!parse_double("1e400"));
  CHECK(!parse_double("-1e400"));
  CHECK(!parse_double(""));
  CHECK(!parse_double("1x"));
  CHECK(!parse_double(std::string("1\0" "2", 3)));
  CHECK(not_a_number_reason("1e400") == "is beyond the range of a double (about 1.8e308)");
  CHECK(not_a_number_reason("x") == "is not a number");
  CHECK(not_a_number_reason("1e400x") == "is not a number");
}

TEST_CASE("parse_whole_number: digits only, and a number too large is named as such") {
  std::string why;
  CHECK(ctmc::parse_whole_number("0", 10, why) == 0u);
  CHECK(ctmc::parse_whole_number("2147483647", 2147483647u, why) == 2147483647u);
  CHECK(ctmc::parse_whole_number("18446744073709551615", UINT64_MAX, why) == UINT64_MAX);
  for (const char* bad : {"", "-1", "+1", "1.0", "1e3", " 1", "0x10", "1 "}) {
    CHECK_FALSE(ctmc::parse_whole_number(bad, 100, why));
    CHECK(why == "is not a whole number");
  }
  // 2^62 and a number past 2^64: too large, not "not a number".
  CHECK_FALSE(ctmc::parse_whole_number("4611686018427387904", 2147483647u, why));
  CHECK(why == "is too large (at most 2147483647)");
  CHECK_FALSE(ctmc::parse_whole_number("18446744073709551616", UINT64_MAX, why));
  CHECK(why == "is too large (at most 18446744073709551615)");
  CHECK_FALSE(ctmc::parse_whole_number("11", 10, why));
}
