// Internal header of reports (not installed): the box budgets of the
// certified-optimum search (certify_fit_optimum, fit_certificates.hpp), which
// `report fits` states beside its tables. The two-state search ends well
// inside its budget (about 3e4 boxes per row of the fit table); the
// three-state one is stopped by it: 150000 boxes, about 45 s a row on one
// core, keep `report all` under its 25 minutes, and its bound still grows
// with more (sigmoid: gap 67x at 150000 boxes, 2.3x at 600000).
#pragma once
#include <cstdint>

namespace ctmc::reports {

inline constexpr std::int64_t kTwoStateBoxes = 2000000;
inline constexpr std::int64_t kThreeStateBoxes = 150000;

}  // namespace ctmc::reports
