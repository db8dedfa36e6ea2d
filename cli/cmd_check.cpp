// ctmc-snn check CLAIMS.json [--out DIR] [--seed S] [--threads N] [--precision BITS] [--json]
//                 [--allow-outside-paths] [--allow-unchecked] [--max-seconds S]
//
// Checks the claims of another implementation (commands/include/ctmc/commands/
// check.hpp: the file format, tolerances and tests) and writes the report
// folder <out>/check/ (check_report.hpp). Exit 0 when every claim passed, 1 when one failed or
// was Not checkable (0 for Not checkable with --allow-unchecked), 2 for a
// malformed claims file (naming the claim and the field; nothing written).
// Texts from the claims file are printed with control characters escaped.
#include <fmt/format.h>

#include "command.hpp"
#include "ctmc/commands/check_report.hpp"

namespace ctmc::cli {
namespace {

struct CheckOptions {
  std::string claims;
  bool json = false;
  commands::CheckOptions check;
};

// One result row for the terminal: what was claimed and what we found, the
// parts a row has (a claim we could not compute has no value of ours).
std::string row_text(const commands::CheckRow& r) {
  const auto text = [](const std::string& s) { return commands::claims_terminal_text(s); };
  std::string values;
  if (!r.claimed.empty()) values += "claimed " + text(r.claimed);
  if (!r.ours.empty()) values += (values.empty() ? "" : ", ") + std::string("ours ") + text(r.ours);
  return fmt::format("{:<14} {:<13} {}: {}{}{}", text(r.id), text(commands::check_verdict_name(r.verdict)), text(r.quantity), values,
                     values.empty() ? "" : " -> ", text(r.evidence));
}

Register reg([](CLI::App& root) {
  auto o = std::make_shared<CheckOptions>();
  auto ctx = std::make_shared<commands::ReportFolderContext>();
  auto* cmd = root.add_subcommand("check", "Check another implementation's claims (flux, counting, fit, simulation): "
                                           "Pass / Fail / Not checkable, with a report folder");
  cmd->add_option("claims", o->claims, "Claims JSON file")->required();
  cmd->add_option("--out", ctx->out_root, "Folder of report folders (the report goes to <out>/check/)")
      ->capture_default_str();
  cmd->add_option("--seed", ctx->seed, "Seed of the reference simulations (simulation claims)")
      ->check(kNoMinus)->capture_default_str();
  cmd->add_option("--threads", ctx->threads, "Threads (0: all cores); results do not depend on it")
      ->capture_default_str()->check(kThreadCount);
  cmd->add_option("--precision", ctx->precision, "MPFR precision in bits (finite-T counting, fit errors)")
      ->capture_default_str()->check(CLI::Range(53u, 100000u));
  cmd->add_flag("--json", o->json, "Print the results document (also written to <out>/check/results.json)");
  cmd->add_flag("--allow-outside-paths", o->check.allow_outside_paths,
                "Let the claims name files outside the claims file's folder (by default paths stay inside it)");
  cmd->add_flag("--allow-unchecked", o->check.allow_unchecked,
                "Exit 0 although a claim is Not checkable (by default a claim not checked makes the exit status 1)");
  cmd->add_option("--max-seconds", o->check.max_seconds,
                  "Refuse a network claim whose reference run would take longer (estimated from its neuron-steps "
                  "before anything runs)")
      ->capture_default_str();  // its range is run_check's to check
  cmd->callback([o, ctx] {
    ctx->command_line = command_line();
    commands::CheckResult r;
    const int status = commands::check_claims_report(o->claims, *ctx, r, o->check);
    if (o->json) {
      fmt::print("{}\n", commands::to_json(r).dump(2));
    } else {
      for (const auto& row : r.results) fmt::print("{}\n", row_text(row));
      fmt::print("{} passed, {} failed, {} not checkable{}; report in {}/check/\n", r.passed, r.failed, r.not_checkable,
                 r.not_checkable > 0 && !o->check.allow_unchecked
                     ? " (not checked: exit status 1; --allow-unchecked accepts them)"
                     : "",
                 commands::claims_terminal_text(ctx->out_root));
    }
    if (status) throw ExitStatus{status};
  });
});

}  // namespace
}  // namespace ctmc::cli
