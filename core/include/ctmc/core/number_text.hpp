// Plain numbers and lists written as text (option values, claim fields,
// metadata): the one reading of each, shared by the libraries, the CLI and
// the Python module. Exact values (rationals, intervals) are read by
// solvers/number_text.hpp on top of these. Errors are InputErrors naming the
// input by the `what` label the caller passes (a parameter name such as
// "domain", a CLI flag, or a field of a file).
#pragma once
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace ctmc {

// The whole of `item` read by std::strtod (nothing left over, not empty);
// nullopt otherwise, and for a magnitude beyond the largest double
// ("1e400"). A number below the smallest normal double is a number: "1e-320"
// is the subnormal nearest to it, "1e-400" is 0, as numpy and Python read
// them (std::stod would refuse both). "inf" and "nan" are numbers here;
// callers that need finite values check.
inline std::optional<double> parse_double(const std::string& item) {
  if (item.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(item.c_str(), &end);
  if (end != item.c_str() + item.size()) return std::nullopt;  // a tail, or a NUL inside
  if (errno == ERANGE && std::isinf(x)) return std::nullopt;
  return x;
}

// Why `item` is not a number for parse_double, for messages: "is beyond the
// range of a double (about 1.8e308)" or "is not a number".
std::string not_a_number_reason(const std::string& item);

// A whole number in 0..max written as decimal digits only (no sign, no
// spaces, no exponent): its value, or nullopt with `why` set to "is not a
// whole number" or "is too large (at most <max>)" for messages.
std::optional<std::uint64_t> parse_whole_number(const std::string& item, std::uint64_t max, std::string& why);

// The items of a comma-separated text ("0,0.5,1", "256,128", "a.json,b.json");
// an empty text or an empty item ("", "1,", "a,,b") is an InputError naming
// `what`, never a silently shorter list. The one list splitter.
std::vector<std::string> split_input_list(const std::string& text, const std::string& what);

}  // namespace ctmc
