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
#include "ctmc/commands/flux.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/solvers/scalar.hpp"

namespace ctmc::cli {
namespace {

struct FluxCli {
  std::string model_path;
  commands::FluxOptions opt;
  bool exact = false;
  bool use_double = false;
  bool json = false;
};

void run_flux(FluxCli& o) {
  o.opt.arithmetic = o.exact ? commands::Arithmetic::Exact
                     : o.use_double ? commands::Arithmetic::Double
                                    : commands::Arithmetic::Mpfr;
  const auto model = solvers::read_model_file(o.model_path);
  const auto out = commands::run_flux(model, o.model_path, o.opt);
  const unsigned bits = o.use_double ? 53 : ctmc::scoped_precision_bits(o.opt.precision);
  if (o.json) {
    fmt::print("{}\n", commands::to_json(out).dump(2));
    return;
  }
  for (const auto& row : out.rows) {
    fmt::print("H = {}\n  flux = {}\n", row.H, row.flux);
    if (row.closed_form_value) {
      fmt::print("  closed form ({}: {}) = {}\n", *row.family, row.closed_form, *row.closed_form_value);
      if (row.difference)
        fmt::print("  difference (exact) = {}\n", *row.difference);
      else
        fmt::print("  relative difference = {:.3e} ({:.1f} correct bits of {})\n", *row.relative_difference,
                   row.correct_bits, bits);
    } else if (row.family) {
      fmt::print("  closed form: {}\n", row.closed_form);
    }
    for (const auto& [state, pi] : row.pi) fmt::print("  pi[{}] = {}\n", state, pi);
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
