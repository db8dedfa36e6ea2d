// ctmc-snn check CLAIMS.json [--out DIR] [--seed S] [--threads N] [--precision BITS] [--json]
//
// Checks the claims of another implementation (reports/include/ctmc/reports/
// check.hpp: the file format, tolerances and tests) and writes the report
// folder <out>/check/. Exit 0 when no claim failed, 1 when one did, 2 for a
// malformed claims file (naming the claim and the field; nothing written).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "ctmc/reports/check.hpp"
#include "ctmc/reports/writer.hpp"

namespace ctmc::cli {
namespace {

struct CheckOptions {
  std::string claims;
  bool json = false;
};

Register reg([](CLI::App& root) {
  auto o = std::make_shared<CheckOptions>();
  auto ctx = std::make_shared<reports::ReportContext>();
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
  cmd->callback([o, ctx] {
    ctx->command_line = command_line();
    nlohmann::ordered_json doc;
    const int status = reports::check_claims_report(o->claims, *ctx, &doc);
    if (o->json) {
      fmt::print("{}\n", doc.dump(2));
    } else {
      for (const auto& r : doc["results"])
        fmt::print("{:<14} {:<13} {}: claimed {}, ours {} -> {}\n", r["id"].get<std::string>(),
                   r["verdict"].get<std::string>(), r["quantity"].get<std::string>(), r["claimed"].get<std::string>(),
                   r["ours"].get<std::string>(), r["evidence"].get<std::string>());
      fmt::print("{} passed, {} failed, {} not checkable; report in {}/check/\n", doc["passed"].get<int>(),
                 doc["failed"].get<int>(), doc["not_checkable"].get<int>(), ctx->out_root);
    }
    if (status) throw ExitStatus{status};
  });
});

}  // namespace
}  // namespace ctmc::cli
