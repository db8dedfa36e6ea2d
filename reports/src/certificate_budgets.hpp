// Internal header of reports (not installed): the box budgets of the
// certified-optimum search (certify_fit_optimum, fit_certificates.hpp), which
// `report fits` states beside its tables. The two-state search ends well
// inside its budget (about 3e4 boxes per row of the fit table); the
// three-state one is stopped by it.
#pragma once
#include <cstdint>

namespace ctmc::reports {

inline constexpr std::int64_t kTwoStateBoxes = 2000000;
inline constexpr std::int64_t kThreeStateBoxes = 2000;

}  // namespace ctmc::reports
