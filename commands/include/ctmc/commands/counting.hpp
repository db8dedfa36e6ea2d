// counting MODEL --H h --T t [--from S] [--precision BITS | --double | --exact] [--json]:
// E[N(T)] and Var N(T) from the stationary distribution (or a state) by the
// Van Loan block exponential, and the asymptotic rate, variance rate and
// Fano factor of the Markovian arrival process (DESIGN.md section 5).
// --exact: the asymptotic quantities exact, the finite horizon in MPFR.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "ctmc/commands/document.hpp"
#include "ctmc/commands/model_input.hpp"

namespace ctmc::commands {

struct CountingOptions {
  std::string h_text, t_text, from;  // from: a state name; empty: stationary
  Arithmetic arithmetic = Arithmetic::Mpfr;
  unsigned precision = 256;
};

// Values as text (command_text.hpp show()); a Fano factor without spikes is
// "undefined (no spikes)".
struct CountingResult {
  std::string model, H, T, start;
  std::string mean, variance, fano_T;        // at the horizon T
  std::string rate, variance_rate, fano;     // T -> infinity
};

CountingResult run_counting(const solvers::Model& model, const std::string& source, const CountingOptions& o);
void write(DocumentWriter& w, const CountingResult& r);
nlohmann::ordered_json to_json(const CountingResult& r);

}  // namespace ctmc::commands
