// The claims checker's report folder (check_report.hpp).
#include "ctmc/commands/check_report.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <string_view>

#include "ctmc/commands/command_text.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/core/number_text.hpp"
#include "ctmc/core/quote.hpp"
#include "ctmc/io/same_file.hpp"
#include "ctmc/commands/report_writer.hpp"

namespace ctmc::commands {

namespace fs = std::filesystem;

namespace {

// A plain number cannot be a formula; any other text that a spreadsheet
// would evaluate (=, +, -, @ start a formula; some skip a leading tab or CR
// before one) is shown as text by a leading quote.
std::string formula_guarded(const std::string& text) {
  const bool risky = !text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos;
  const bool number = ctmc::parse_double(text).has_value() && text.find_first_of(" \t\r\n") == std::string::npos;
  return risky && !number ? "'" + text : text;
}

}  // namespace

CheckOptions with_context(CheckOptions options, const ReportFolderContext& ctx) {
  options.seed = ctx.seed;
  options.threads = ctx.threads;
  options.precision = ctx.precision;
  return options;
}

std::string claims_csv_field(const std::string& text) { return csv_field(formula_guarded(text)); }

std::string claims_terminal_text(const std::string& text) { return commands::one_line(text); }

int check_claims_report(const std::string& claims_path, const ReportFolderContext& ctx, CheckResult& out,
                        const CheckOptions& options) {
  commands::check_max_seconds(options.max_seconds);  // before the output folder is made
  check_output_root(ctx.out_root);
  // The report replaces <out>/check whole: no input may be in it.
  CheckOptions opts = options;
  opts.replaced_folder = (fs::path(ctx.out_root.empty() ? "." : ctx.out_root) / "check").string();
  if (io::in_folder(claims_path, opts.replaced_folder))
    throw InputError(fmt::format("{}: the claims file is in the folder {} that check replaces (--out); writing the "
                                 "report would remove it",
                                 quote_excerpt(claims_path), quote_excerpt(opts.replaced_folder)));
  const CheckResult r = commands::run_check(claims_path, with_context(opts, ctx));
  ReportWriter w(ctx, "check", "Claims check: " + md_text(claims_path));
  w.paragraph(fmt::format("Claims from {}: {} passed, {} failed, {} not checkable. Pass/Fail per claim (a claim "
                          "with several values fails when one fails); the evidence says what ours is and how it "
                          "was computed. Tolerances: see `ctmc/commands/check.hpp`. A claim Not checkable was not "
                          "checked: it counts as a failed check{}.",
                          md_code(claims_path), r.passed, r.failed, r.not_checkable,
                          options.allow_unchecked ? " unless allowed, as here (--allow-unchecked)" : ""));
  // The same rows twice: Markdown-escaped for report.md, as written (only
  // CSV-quoted and formula-guarded) for claims.csv.
  const std::vector<std::string> columns = {"id", "kind", "quantity", "claimed", "ours", "claimed - ours",
                                            "tolerance", "verdict", "evidence"};
  Table md{columns, {}}, csv{columns, {}};
  for (const auto& c : r.results) {
    std::vector<std::string> row = {c.id, c.kind, c.quantity, c.claimed, c.ours, c.difference, c.tolerance, check_verdict_name(c.verdict),
                                    c.evidence};
    md.rows.push_back(row);
    for (auto& cell : md.rows.back()) cell = md_text(cell);
    for (auto& cell : row) cell = formula_guarded(cell);
    csv.rows.push_back(std::move(row));
  }
  w.table(md);
  w.write_csv("claims.csv", csv);  // RFC 4180 quoting (csv_field)
  w.paragraph("(data: [claims.csv](claims.csv))");
  w.write_json("results.json", commands::to_json(r));
  for (const auto& [id, v] : r.verdicts)
    if (v != Verdict::NotComparable || !options.allow_unchecked)
      w.check("claim " + md_text(id), v == Verdict::Reproduced, check_verdict_name(v));
  w.finish();
  out = r;
  return commands::check_exit_status(r, options);
}

}  // namespace ctmc::commands
