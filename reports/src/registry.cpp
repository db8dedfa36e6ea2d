#include "ctmc/reports/registry.hpp"

namespace ctmc::reports {

// Each report module adds its definition here, in the order `report all` runs them.
const std::vector<ReportDef>& all_reports() {
  static const std::vector<ReportDef> defs = {
  };
  return defs;
}

}  // namespace ctmc::reports
