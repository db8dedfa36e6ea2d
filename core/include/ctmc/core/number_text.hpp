// Plain numbers and lists written as text (option values, claim fields,
// metadata): the one reading of each, shared by the libraries, the CLI and
// the Python module. Exact values (rationals, intervals) are read by
// solvers/number_text.hpp on top of these. Errors are InputErrors naming the
// input by the `what` label the caller passes (a parameter name such as
// "domain", a CLI flag, or a field of a file).
#pragma once
#include <exception>
#include <optional>
#include <string>
#include <vector>

namespace ctmc {

// The whole of `item` read by std::stod (nothing left over, not empty);
// nullopt otherwise. "inf" and "nan" are numbers here; callers that need
// finite values check.
inline std::optional<double> parse_double(const std::string& item) {
  std::size_t used = 0;
  double x = 0;
  try {
    x = std::stod(item, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (item.empty() || used != item.size()) return std::nullopt;
  return x;
}

// The items of a comma-separated text ("0,0.5,1", "256,128", "a.json,b.json");
// an empty text or an empty item ("", "1,", "a,,b") is an InputError naming
// `what`, never a silently shorter list. The one list splitter.
std::vector<std::string> split_input_list(const std::string& text, const std::string& what);

}  // namespace ctmc
