// Comma-separated lists of plain numbers given on the command line (grids of
// a sweep, per-layer values), read as doubles.
#pragma once
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "ctmc/solvers/errors.hpp"
#include "ctmc/solvers/model.hpp"

namespace ctmc::cli {

// The whole of `item` as a double; InputError naming `option` otherwise.
inline double parse_number(const std::string& item, const std::string& option) {
  std::size_t used = 0;
  double x = 0;
  try {
    x = std::stod(item, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (item.empty() || used != item.size()) throw InputError(fmt::format("{}: '{}' is not a number", option, item));
  return x;
}

inline std::vector<double> number_list(const std::string& text, const std::string& option) {
  std::vector<double> v;
  for (const auto& item : solvers::split_input_list(text, option)) v.push_back(parse_number(item, option));
  return v;
}

// --layer-alpha: one alpha_l per spiking layer, "auto" (NaN) keeping the scale rule.
inline std::vector<double> layer_alpha_list(const std::string& text) {
  std::vector<double> v;
  for (const auto& item : solvers::split_input_list(text, "--layer-alpha"))
    v.push_back(item == "auto" ? std::nan("") : parse_number(item, "--layer-alpha"));
  return v;
}

}  // namespace ctmc::cli
