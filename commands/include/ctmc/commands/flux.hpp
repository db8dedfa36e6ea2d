// flux MODEL --H LIST [--precision BITS | --exact | --double] [--json]:
// the stationary distribution and spike flux at each H (GTH, DESIGN.md
// section 5) and, for a model of a known family, the family's closed form
// (paper eq. 2 for three-state) at the same exact rates.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ctmc/commands/document.hpp"
#include "ctmc/commands/model_input.hpp"

namespace ctmc::commands {

struct FluxOptions {
  std::string h_list;  // comma-separated, exact decimals or p/q
  Arithmetic arithmetic = Arithmetic::Mpfr;
  unsigned precision = 256;
};

// One H. Values are text: exact for rationals, 17 digits for double, the
// precision's digits for MPFR (command_text.hpp show()).
struct FluxRow {
  std::string H;
  std::vector<std::pair<std::string, std::string>> pi;  // (state, pi) in state order
  std::string flux;
  // With a family (meta.family): the closed form's text, or why there is none.
  std::optional<std::string> family;
  std::string closed_form;
  std::optional<std::string> closed_form_value;
  std::optional<std::string> difference;           // exact mode: flux - closed form
  std::optional<double> relative_difference;       // other modes, with correct_bits
  double correct_bits = 0;
};
struct FluxResult {
  std::vector<FluxRow> rows;
};

// Every H is solved before the result is returned: a bad H throws with
// nothing half-built.
FluxResult run_flux(const solvers::Model& model, const std::string& source, const FluxOptions& o);
// The rows as `flux --json` prints them (an array).
void write(DocumentWriter& w, const FluxResult& r);
nlohmann::ordered_json to_json(const FluxResult& r);

}  // namespace ctmc::commands
