// check CLAIMS.json: the claims checker of commands/check.hpp, with the report
// folder of commands/check_report.hpp, as `ctmc-snn check` runs it.
#include <fmt/format.h>

#include "core.hpp"
#include "ctmc/commands/check_report.hpp"
#include "ctmc/commands/limits.hpp"
#include "ctmc/commands/model_input.hpp"
#include "ctmc/core/errors.hpp"

namespace ctmc::python {

commands::CheckResult check(const std::string& claims_path, const std::string& out_root, unsigned long long seed,
                           int threads, unsigned precision, const std::string& base_dir, bool allow_outside_paths,
                           bool allow_unchecked, double max_seconds, int* status) {
  // The CLI's ranges for --threads and --precision.
  commands::checked_threads(threads);
  commands::checked_precision(precision);
  commands::ReportFolderContext ctx;
  ctx.seed = seed;
  ctx.threads = threads;
  ctx.precision = precision;
  ctx.command_line = "ctmc_snn.check";
  commands::CheckOptions options;  // replaced_folder: check_claims_report sets it
  options.base_dir = base_dir;
  options.allow_outside_paths = allow_outside_paths;
  options.allow_unchecked = allow_unchecked;
  options.max_seconds = max_seconds;
  options = commands::with_context(options, ctx);
  if (out_root.empty()) {
    auto r = commands::run_check(claims_path, options);
    *status = commands::check_exit_status(r, options);
    return r;
  }
  ctx.out_root = out_root;
  commands::CheckResult r;
  *status = commands::check_claims_report(claims_path, ctx, r, options);
  return r;
}

}  // namespace ctmc::python
