// ctmc-snn report <name> [--out DIR] [--seed S] [--threads N] [--precision BITS]
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include "command.hpp"
#include "ctmc/io/same_file.hpp"
#include "ctmc/commands/command_text.hpp"
#include "ctmc/reports/registry.hpp"
#include "ctmc/reports/writer.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/core/numeric_context.hpp"

namespace ctmc::cli {
namespace {

Register reg([](CLI::App& root) {
  auto* report = root.add_subcommand("report", "Write a report under reports/generated/ (or --out DIR)");
  report->require_subcommand(1);
  auto ctx = std::make_shared<reports::ReportContext>();
  // Every report takes the same options after its name: report flux --out DIR.
  auto add_common = [ctx](CLI::App* sub) {
    sub->add_option("--out", ctx->out_root, "Folder that holds the report folders")->capture_default_str();
    sub->add_option("--seed", ctx->seed, "Random seed")->check(kNoMinus)->capture_default_str();
    sub->add_option("--threads", ctx->threads, "Threads (0: all cores, or OMP_NUM_THREADS if set)")->capture_default_str()
        ->check(kThreadCount);
    sub->add_option("--precision", ctx->precision, "MPFR/MPFI precision in bits")->capture_default_str()
        ->check(CLI::Range(53u, 100000u));
    sub->add_option("--data-root", ctx->data_root,
                    "Reports conversion and deep: the folder holding mnist/ and fashion-mnist/ (scripts/fetch-data.sh)")
        ->capture_default_str();
    sub->add_flag("--full", ctx->full,
                  "Reports conversion and deep: the paper's design (conversion: 4 training seeds, 2 trials, 1000 test "
                  "images, full grid; deep: full-width VGG-11, 4 seeds, 8 trials; hours on 2 cores) instead of the "
                  "reduced default");
    sub->add_flag("--plan", ctx->plan,
                  "Reports conversion and deep: train and fit only, and write the sweeps as Slurm job arrays "
                  "(sweep_commands.sh) to run on a cluster");
    sub->add_option("--cifar", ctx->cifar_dir,
                    "Report deep: a CIFAR-10 binary folder (data_batch_1.bin ... test_batch.bin) for its CIFAR-10 "
                    "section");
    sub->add_option("--sweeps", ctx->sweeps_dir,
                    "Reports conversion and deep: take each sweep whose document is in this folder (merged from a "
                    "cluster run of sweep_commands.sh) instead of running it");
  };
  auto run_one = [ctx](const reports::ReportDef& def) {
    ctx->command_line = command_line();
    // --threads for this report's parallel regions, the caller's count after it.
    const ctmc::ThreadScope threads(ctx->threads);
    fmt::print(stderr, "report {}: {}\n", def.name, def.description);
    return def.run(*ctx);
  };
  // The output location is checked once, before any report runs (a bad --out
  // is bad input, exit 2, not an internal error after minutes of work).
  auto check_out = [ctx] { reports::check_output_root(ctx->out_root); };
  // A report replaces its folder <out>/<name> whole: an input folder at or
  // below it (--sweeps, --data-root) would go with it.
  auto check_inputs = [ctx](const std::string& name) {
    const std::string folder = (std::filesystem::path(ctx->out_root.empty() ? "." : ctx->out_root) / name).string();
    ctmc::io::refuse_inputs_in_replaced_folder(folder, "report " + name, "--out",
                                               {{"--sweeps", ctx->sweeps_dir}, {"--data-root", ctx->data_root}, {"--cifar", ctx->cifar_dir}});
  };
  for (const auto& def : reports::all_reports()) {
    auto* sub = report->add_subcommand(def.name, def.description);
    add_common(sub);
    sub->callback([run_one, check_out, check_inputs, &def] {
      check_inputs(def.name);
      check_out();
      int rc = run_one(def);
      if (rc != 0) throw ExitStatus{rc};
    });
  }
  auto* all = report->add_subcommand("all", "Run every report");
  add_common(all);
  // One report's failure must not hide the others: run them all, say which
  // failed, and exit with the worst status (1 a check failed, 2 bad input,
  // 3 internal error).
  all->callback([run_one, check_out, check_inputs] {
    for (const auto& def : reports::all_reports()) check_inputs(def.name);
    check_out();
    int worst = 0;
    std::vector<std::string> failed;
    for (const auto& def : reports::all_reports()) {
      int rc = 0;
      try {
        rc = run_one(def);
      } catch (const InputError& e) {
        fmt::print(stderr, "ctmc-snn: report {}: {}\n", def.name, commands::option_message(e));
        rc = 2;
      } catch (const CheckFailed& e) {
        fmt::print(stderr, "ctmc-snn: report {}: check failed: {}\n", def.name, e.what());
        rc = 1;
      } catch (const std::bad_alloc&) {
        fmt::print(stderr, "ctmc-snn: report {}: out of memory\n", def.name);
        rc = 3;
      } catch (const std::exception& e) {
        fmt::print(stderr, "ctmc-snn: report {}: internal error: {}\n", def.name, e.what());
        rc = 3;
      }
      if (rc != 0) failed.push_back(def.name + " (exit " + std::to_string(rc) + ")");
      worst = std::max(worst, rc);
    }
    if (!failed.empty()) {
      std::string list;
      for (const auto& f : failed) list += (list.empty() ? "" : ", ") + f;
      fmt::print(stderr, "ctmc-snn: reports that did not pass: {}\n", list);
      throw ExitStatus{worst};
    }
  });
});

}  // namespace
}  // namespace ctmc::cli
