// ctmc-snn counting MODEL.json --H h --T t [--from STATE] [--precision BITS | --double | --exact] [--json]
//
// Spike-count statistics of a model at a constant input H (DESIGN.md
// section 5): E[N(T)] and Var N(T) at the finite horizon T from the
// stationary distribution (or from a given state), by the Van Loan block
// exponential; the asymptotic rate lambda, variance rate lim Var N(T)/T and
// Fano factor from the Markovian-arrival-process formulas. --exact gives the
// asymptotic quantities exactly (the finite-T part then runs in MPFR at
// --precision bits).
#include <fmt/format.h>

#include <string>

#include "command.hpp"
#include "ctmc/commands/counting.hpp"
#include "ctmc/solvers/model.hpp"

namespace ctmc::cli {
namespace {

struct CountingCli {
  std::string model_path;
  commands::CountingOptions opt;
  bool use_double = false;
  bool exact = false;
  bool json = false;
};

void run_counting(CountingCli& o) {
  o.opt.arithmetic = o.use_double ? commands::Arithmetic::Double
                     : o.exact    ? commands::Arithmetic::Exact
                                  : commands::Arithmetic::Mpfr;
  const auto model = solvers::read_model_file(o.model_path);
  const auto c = commands::run_counting(model, o.model_path, o.opt);
  if (o.json) {
    fmt::print("{}\n", commands::to_json(c).dump(2));
    return;
  }
  fmt::print("model {} at H = {}, T = {}, start: {}\n", o.model_path, c.H, c.T, c.start);
  fmt::print("  E[N(T)]            = {}\n", c.mean);
  fmt::print("  Var N(T)           = {}\n", c.variance);
  fmt::print("  Var N(T) / E[N(T)] = {}\n", c.fano_T);
  fmt::print("  rate lambda        = {}\n", c.rate);
  fmt::print("  variance rate      = {}\n", c.variance_rate);
  fmt::print("  Fano factor        = {}\n", c.fano);
}

Register reg([](CLI::App& root) {
  auto o = std::make_shared<CountingCli>();
  auto* cmd = root.add_subcommand("counting", "Spike-count mean, variance and Fano factor of a model at input H");
  cmd->add_option("model", o->model_path, "Model JSON file")->required();
  cmd->add_option("--H", o->opt.h_text, "Input value (exact decimal or p/q)")->required();
  cmd->add_option("--T", o->opt.t_text, "Time horizon T > 0 (exact decimal or p/q)")->required();
  cmd->add_option("--from", o->opt.from, "Start in this state (default: the stationary distribution)");
  auto* prec = cmd->add_option("--precision", o->opt.precision, "MPFR precision in bits")->capture_default_str()
                   ->check(CLI::Range(53u, 100000u));
  auto* dbl = cmd->add_flag("--double", o->use_double, "IEEE double arithmetic")->excludes(prec);
  cmd->add_flag("--exact", o->exact, "Exact rational asymptotic rate/variance rate (finite T in MPFR)")->excludes(dbl);
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o] { run_counting(*o); });
});

}  // namespace
}  // namespace ctmc::cli
