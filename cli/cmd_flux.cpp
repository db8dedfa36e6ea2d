// ctmc-snn flux MODEL.json --H LIST [--precision BITS | --exact | --double] [--json]
//
// Prints the stationary distribution and spike flux at each input H (GTH,
// DESIGN.md section 5). For a model whose meta.family names a known family
// (and whose structure matches it) it also prints the family's closed form
// (paper eq. 2 for three-state) evaluated at the same exact rates, and the
// difference: exactly in --exact mode, as a relative difference and correct
// bits otherwise.
#include <fmt/format.h>

#include "command.hpp"
#include "ctmc/reports/commands.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/solvers/scalar.hpp"

namespace ctmc::cli {
namespace {

struct FluxCli {
  std::string model_path;
  reports::FluxOptions opt;
  bool exact = false;
  bool use_double = false;
  bool json = false;
};

void run_flux(FluxCli& o) {
  o.opt.arithmetic = o.exact ? reports::Arithmetic::Exact
                     : o.use_double ? reports::Arithmetic::Double
                                    : reports::Arithmetic::Mpfr;
  const auto model = solvers::read_model_file(o.model_path);
  const auto out = reports::flux_json(model, o.model_path, o.opt);
  const unsigned bits = o.use_double ? 53 : ctmc::scoped_precision_bits(o.opt.precision);
  if (o.json) {
    fmt::print("{}\n", out.dump(2));
    return;
  }
  for (const auto& row : out) {
    fmt::print("H = {}\n  flux = {}\n", row["H"].get<std::string>(), row["flux"].get<std::string>());
    if (row.contains("closed_form_value")) {
      fmt::print("  closed form ({}: {}) = {}\n", row["family"].get<std::string>(), row["closed_form"].get<std::string>(),
                 row["closed_form_value"].get<std::string>());
      if (row.contains("difference"))
        fmt::print("  difference (exact) = {}\n", row["difference"].get<std::string>());
      else
        fmt::print("  relative difference = {:.3e} ({:.1f} correct bits of {})\n",
                   row["relative_difference"].get<double>(), row["correct_bits"].get<double>(), bits);
    } else if (row.contains("closed_form")) {
      fmt::print("  closed form: {}\n", row["closed_form"].get<std::string>());
    }
    // In state order (an ordered object); a lookup by name would be a linear scan per state.
    for (const auto& p : row["pi"].items()) fmt::print("  pi[{}] = {}\n", p.key(), p.value().get<std::string>());
  }
}

Register reg([](CLI::App& root) {
  auto o = std::make_shared<FluxCli>();
  auto* cmd = root.add_subcommand(
      "flux", "Stationary distribution and spike flux of a model at inputs H (with the closed form of a known family)");
  cmd->add_option("model", o->model_path, "Model JSON file")->required();
  cmd->add_option("--H", o->opt.h_list, "Comma-separated inputs (exact decimals or p/q)")->required();
  auto* prec = cmd->add_option("--precision", o->opt.precision, "MPFR precision in bits")->capture_default_str()
                   ->check(CLI::Range(53u, 100000u));
  auto* exact = cmd->add_flag("--exact", o->exact, "Exact rational arithmetic")->excludes(prec);
  cmd->add_flag("--double", o->use_double, "IEEE double arithmetic")->excludes(prec)->excludes(exact);
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o] { run_flux(*o); });
});

}  // namespace
}  // namespace ctmc::cli
