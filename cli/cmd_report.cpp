// ctmc-snn report <name> [--out DIR] [--seed S] [--threads N] [--precision BITS]
#include <fmt/format.h>
#include <omp.h>

#include "command.hpp"
#include "ctmc/reports/registry.hpp"
#include "ctmc/solvers/errors.hpp"

namespace ctmc::cli {
namespace {

Register reg([](CLI::App& root) {
  auto* report = root.add_subcommand("report", "Write a report under reports/generated/ (or --out DIR)");
  report->require_subcommand(1);
  auto ctx = std::make_shared<reports::ReportContext>();
  // Every report takes the same options after its name: report flux --out DIR.
  auto add_common = [ctx](CLI::App* sub) {
    sub->add_option("--out", ctx->out_root, "Folder that holds the report folders")->capture_default_str();
    sub->add_option("--seed", ctx->seed, "Random seed")->capture_default_str();
    sub->add_option("--threads", ctx->threads, "Threads (0 = all cores)")->capture_default_str();
    sub->add_option("--precision", ctx->precision, "MPFR/MPFI precision in bits")->capture_default_str()
        ->check(CLI::Range(53u, 100000u));
  };
  auto run_one = [ctx](const reports::ReportDef& def) {
    ctx->command_line = command_line();
    if (ctx->threads > 0) omp_set_num_threads(ctx->threads);
    fmt::print(stderr, "report {}: {}\n", def.name, def.description);
    return def.run(*ctx);
  };
  for (const auto& def : reports::all_reports()) {
    auto* sub = report->add_subcommand(def.name, def.description);
    add_common(sub);
    sub->callback([run_one, &def] {
      int rc = run_one(def);
      if (rc != 0) throw ExitStatus{rc};
    });
  }
  auto* all = report->add_subcommand("all", "Run every report");
  add_common(all);
  all->callback([run_one] {
    int worst = 0;
    for (const auto& def : reports::all_reports()) worst = std::max(worst, run_one(def));
    if (worst != 0) throw ExitStatus{worst};
  });
});

}  // namespace
}  // namespace ctmc::cli
