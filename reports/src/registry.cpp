#include "ctmc/reports/registry.hpp"

namespace ctmc::reports {

ReportDef flux_report_def();  // flux_report.cpp
ReportDef fits_report_def();  // fits_report.cpp
ReportDef theorem_report_def();  // theorem_report.cpp
ReportDef convergence_report_def();  // convergence_report.cpp
ReportDef conversion_report_def();  // conversion_report.cpp
ReportDef deep_report_def();  // deep_report.cpp

// Each report module adds its definition here, in the order `report all` runs them.
const std::vector<ReportDef>& all_reports() {
  static const std::vector<ReportDef> defs = {
      flux_report_def(),
      fits_report_def(),
      theorem_report_def(),
      convergence_report_def(),
      conversion_report_def(),
      deep_report_def(),
  };
  return defs;
}

}  // namespace ctmc::reports
