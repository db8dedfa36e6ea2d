// What every command shares: a model given as a file or as JSON text, the
// scalar a command computes in, and the range of --precision.
//
// The command layer (commands/*.hpp): per command an Options struct whose
// members carry the command's defaults (the CLI's option parser and the
// Python module's keywords both start from a default-constructed one), a run
// function that checks what the CLI's parser alone would not and calls the
// libraries, a typed Result, and to_json(Result), the document that
// `ctmc-snn <command> --json` prints with dump(2). The CLI prints its text
// from the Result; the Python module converts the Result to Python objects.
// Errors are InputError: the checks here name the CLI's options ("--H:
// ..."); the libraries' errors name their parameters ("trials: ..."), which
// option_message (command_text.hpp) shows under the option ("--trials: ...").
#pragma once
#include <string>

#include "ctmc/solvers/model.hpp"

namespace ctmc::commands {

// A model given as a file path (read as MODEL.json is, messages naming the
// path) or as JSON text (`source` names it in messages and output).
struct ModelInput {
  std::string text;    // path when is_path, else JSON text
  std::string source;  // name in messages and output
  bool is_path = false;
};
solvers::Model load_model(const ModelInput& in);
inline ModelInput model_file(const std::string& path) { return ModelInput{path, path, true}; }

// The scalar a command computes in: MPFR at a precision (the default),
// exact rationals, or IEEE double.
enum class Arithmetic { Mpfr, Exact, Double };

// CLI11's Range(53, 100000) on --precision, for callers without that parser.
unsigned checked_precision(unsigned precision);

}  // namespace ctmc::commands
