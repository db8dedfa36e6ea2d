// The claims checker's report folder (commands/check_report.hpp) under the
// names the reports use (report deep checks its PyTorch peer with it).
#pragma once
#include "ctmc/commands/check_report.hpp"
#include "ctmc/reports/registry.hpp"

namespace ctmc::reports {

using commands::CheckOptions;
using commands::CheckResult;
using commands::CheckRow;

using commands::check_claims_report;
using commands::claims_csv_field;
using commands::claims_terminal_text;
using commands::with_context;

}  // namespace ctmc::reports
