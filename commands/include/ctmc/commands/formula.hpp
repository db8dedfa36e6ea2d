// formula MODEL [--latex] [--json]: a model's stationary-flux formula by the
// Markov chain tree theorem (solvers/tree_theorem.hpp).
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ctmc/commands/document.hpp"
#include "ctmc/commands/model_input.hpp"

namespace ctmc::commands {

// One rate symbol: its name, LaTeX, the transition and the rate max(0, p + s H).
struct FormulaSymbol {
  std::string symbol, latex, from, to;
  bool spike = false;
  std::string rate;
};

struct FormulaResult {
  std::string model;
  std::vector<std::string> states;
  std::size_t transitions = 0;
  std::vector<FormulaSymbol> symbols;
  // The stationary numerators w_i (pi_i = w_i / sum_j w_j), per state.
  std::vector<std::string> tree_sums, tree_sums_latex;
  std::size_t spanning_trees = 0;
  std::string numerator, denominator;  // F = numerator / denominator
  std::string text, latex;             // F with the common factors cancelled
};

FormulaResult run_formula(const solvers::Model& model, const std::string& source);
void write(DocumentWriter& w, const FormulaResult& r);
nlohmann::ordered_json to_json(const FormulaResult& r);

}  // namespace ctmc::commands
