// Plain decimal numbers in option texts, as doubles: the one reading shared
// by the CLI's and the Python module's option parsers (reports/command_text.hpp)
// and the simulator's --normalize (sim/tensor_inputs.cpp), each of which words
// its own error.
#pragma once
#include <exception>
#include <optional>
#include <string>

namespace ctmc::solvers {

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

}  // namespace ctmc::solvers
