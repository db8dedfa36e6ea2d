// Shared by the analysis tests: the fit table's targets (fit_tables.hpp) by
// slug, so that a test fits the same problem as the report's row.
#pragma once
#include <stdexcept>
#include <string>

#include "ctmc/analysis/fit_tables.hpp"

namespace ctmc::analysis::testing {

// The report table's target with this slug ("sigmoid", "softplus_x_1_14").
inline const FitTarget& table_target(const std::string& slug) {
  static const auto all = fit_table_targets();
  for (const auto& t : all)
    if (t.slug == slug) return t;
  throw std::runtime_error("no table target " + slug);
}

}  // namespace ctmc::analysis::testing
