// The claims checker's report folder (`ctmc-snn check`): the check of
// commands/check.hpp, written as <out>/check/ (report.md, claims.csv,
// results.json, meta.json), and the escapes of claims texts for CSV and the
// terminal.
#pragma once
#include <string>

#include "ctmc/commands/check.hpp"
#include "ctmc/commands/report_writer.hpp"

namespace ctmc::commands {

// `options` with the report context's seed, threads and precision.
CheckOptions with_context(CheckOptions options, const ReportFolderContext& ctx);

// commands::run_check (with ctx's seed, threads and precision), then the
// report folder <ctx.out_root>/check/ (report.md, results.json, claims.csv,
// meta.json); `out` gets the result. Returns the exit status
// (commands::check_exit_status).
int check_claims_report(const std::string& claims_path, const ReportFolderContext& ctx, CheckResult& out,
                        const CheckOptions& options = {});

// A text from a claims file as one CSV field of claims.csv: RFC 4180 quoting
// (csv_field), and a leading ' when it starts with = + - @, a tab or a
// carriage return and is not a plain number ("-1.5e-3" stays as it is), so
// that a spreadsheet shows it instead of evaluating it.
std::string claims_csv_field(const std::string& text);

// A text from a claims file for one line of the terminal: control
// characters written as \n, \r, \t or \xNN (one_line).
std::string claims_terminal_text(const std::string& text);

}  // namespace ctmc::commands
