// The report writer (commands/report_writer.hpp) under the names the
// reports use: it lives in commands/ because the commands that write a
// report folder of their own (check, convert) are below reports.
#pragma once
#include "ctmc/commands/report_writer.hpp"
#include "ctmc/reports/registry.hpp"

namespace ctmc::reports {

using commands::kNoPaperValue;
using commands::kPaperColumn;
using commands::Plot;
using commands::Provenance;
using commands::ReportWriter;
using commands::Series;
using commands::Table;

using commands::check_output_root;
using commands::git_revision;
using commands::utc_now;

using commands::fmt_exact;
using commands::fmt_fix;
using commands::fmt_g;
using commands::fmt_int;
using commands::fmt_pct;
using commands::fmt_sci;

using commands::csv_field;
using commands::csv_text;
using commands::markdown_table;
using commands::md_code;
using commands::md_text;
using commands::paper_cell;

}  // namespace ctmc::reports
