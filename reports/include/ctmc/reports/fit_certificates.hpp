// The fit certificates (commands/fit_certificates.hpp) as the fits report's
// tables show them.
#pragma once
#include <string>

#include "ctmc/commands/fit_certificates.hpp"

namespace ctmc::reports {

using commands::kOptimalityGap;
using commands::kThreeStateBoxes;
using commands::kThreeStateGap;
using commands::kTwoStateBoxes;
using commands::certify_fit_optimum;
using commands::closed_family;
using commands::SupCell;
using commands::try_certified_sup;

// One cell for tables: "1.234e-02" (tight to 1%), "<= 4.1e-09 (>= 2.0e-18)"
// (stopped by rounding or the budget), "not bounded (>= ...)", or
// "undefined (see summary)" (the reason is in the SupCell's `error`).
std::string sup_text(const SupCell& c);
// "within 0.1% (certified)", "gap 3.2% (lower bound 1.234e-03)", ...
std::string optimality_text(const proofs_check::OptimalityResult& r, double rel_gap);

}  // namespace ctmc::reports
