#include "ctmc/reports/registry.hpp"

namespace ctmc::reports {

ReportDef flux_report_def();  // flux_report.cpp

// Each report module adds its definition here, in the order `report all` runs them.
const std::vector<ReportDef>& all_reports() {
  static const std::vector<ReportDef> defs = {
      flux_report_def(),
  };
  return defs;
}

}  // namespace ctmc::reports
