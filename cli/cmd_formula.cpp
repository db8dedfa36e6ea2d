// ctmc-snn formula MODEL.json [--latex] [--json]
//
// Prints a model's stationary-flux formula derived by the Markov chain tree
// theorem (solvers/tree_theorem.hpp): one symbol per transition, a legend
// mapping each symbol to its rectified affine rate max(0, p + s H), the
// stationary numerators (tree sums) and F = num / den, as text and LaTeX.
#include <fmt/format.h>

#include "command.hpp"
#include "ctmc/commands/formula.hpp"
#include "ctmc/solvers/latex_text.hpp"
#include "ctmc/solvers/model.hpp"

namespace ctmc::cli {
namespace {

struct FormulaOptions {
  std::string model_path;
  bool latex = false;
  bool json = false;
};

void run_formula(const FormulaOptions& o) {
  const auto model = solvers::read_model_file(o.model_path);
  const auto f = commands::run_formula(model, o.model_path);
  if (o.json) {
    fmt::print("{}\n", commands::to_json(f).dump(2));
    return;
  }
  if (o.latex) {
    // Symbols, then the formula, as LaTeX lines ready to paste. State names
    // are the user's text: escaped, even in the comment lines (a newline in
    // a name would end the comment).
    for (const auto& s : f.symbols)
      fmt::print("% {} : {} -> {}{} = {}\n", s.latex, solvers::latex_text(s.from), solvers::latex_text(s.to),
                 s.spike ? " (spike)" : "", s.rate);
    for (std::size_t i = 0; i < f.states.size(); ++i)
      fmt::print("w_{{\\mathrm{{{}}}}} = {}\n", solvers::latex_text(f.states[i]), f.tree_sums_latex[i]);
    fmt::print("{}\n", f.latex);
    return;
  }
  fmt::print("model: {} ({} states, {} transitions)\n", o.model_path, f.states.size(), f.transitions);
  fmt::print("symbols:\n");
  for (const auto& s : f.symbols)
    fmt::print("  {} = {}   [{} -> {}{}]\n", s.symbol, s.rate, s.from, s.to, s.spike ? ", spike" : "");
  fmt::print("stationary numerators (pi_i = w_i / sum_j w_j; {} spanning in-trees):\n", f.spanning_trees);
  for (std::size_t i = 0; i < f.states.size(); ++i) fmt::print("  w_{} = {}\n", f.states[i], f.tree_sums[i]);
  fmt::print("stationary flux:\n  {}\n", f.text);
  fmt::print("LaTeX:\n  {}\n", f.latex);
}

Register reg([](CLI::App& root) {
  auto o = std::make_shared<FormulaOptions>();
  auto* cmd = root.add_subcommand(
      "formula", "Print a model's stationary-flux formula (Markov chain tree theorem, up to 7 states)");
  cmd->add_option("model", o->model_path, "Model JSON file")->required();
  auto* latex = cmd->add_flag("--latex", o->latex, "Print LaTeX only");
  cmd->add_flag("--json", o->json, "Machine-readable output")->excludes(latex);
  cmd->callback([o] { run_formula(*o); });
});

}  // namespace
}  // namespace ctmc::cli
