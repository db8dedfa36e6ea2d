// The C++ side of the Python module ctmc_snn (python/): argument conversion
// over the command layer (commands/*.hpp), the bodies the CLI runs, so that
// Python and the CLI give the same numbers bit for bit. Only module.cpp and
// to_python.cpp include pybind11; these files compile as plain C++.
//
// Errors are the libraries' own: ctmc::InputError with the CLI's one-line
// message (module.cpp turns it into ValueError, parameters shown as the
// CLI's options by commands::option_message). Option names in messages are
// the CLI's ("--H: ..."), so one message reads the same from both.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ctmc/commands/counting.hpp"
#include "ctmc/commands/flux.hpp"
#include "ctmc/commands/formula.hpp"
#include "ctmc/commands/model_input.hpp"
#include "ctmc/commands/simulate_network.hpp"
#include "ctmc/commands/check_report.hpp"

namespace ctmc::python {

// A model as the Python layer passes it: a file path or JSON text.
using commands::load_model;
using commands::ModelInput;

// flux MODEL --H h1,h2,... [--exact | --double | --precision p]
commands::FluxResult flux(const ModelInput& model, const std::vector<std::string>& hs, const std::string& mode,
                          unsigned precision);
// The double flux alone at each H (the same solve as flux's --double rows).
std::vector<double> flux_double(const ModelInput& model, const std::vector<std::string>& hs);
// counting MODEL --H h --T t [--from S] [--exact | --double | --precision p]
commands::CountingResult counting(const ModelInput& model, const std::string& h, const std::string& t,
                                  const std::string& from, const std::string& mode, unsigned precision);

// A tensor handed over from Python (float64 values, any dtype read exactly
// there; shape row-major).
struct TensorArg {
  std::vector<std::int64_t> shape;
  std::vector<double> values;
  std::string name;
};
struct LayerArg {
  TensorArg weight;  // [out, in]
  std::optional<TensorArg> bias;
  std::string activation;
};
struct NetworkArgs {
  std::string net_path;         // a manifest, or "" with layers
  std::vector<LayerArg> layers;  // in-memory weights (a state_dict)
  std::string net_name;         // "net" field of the output
  // Data: a folder and/or file specs as the CLI options, or arrays.
  std::string dir, test_images_spec, test_labels_spec, train_images_spec, train_labels_spec, normalization;
  std::optional<TensorArg> test_images, test_labels, train_images, train_labels;
  std::string data_name;        // "data" field for arrays
  std::vector<ModelInput> neurons;
  // The command's options (the IF baseline runs when options.if_norm is set).
  commands::NetworkCommandOptions options;
};
// simulate network ... [--if ...]
commands::NetworkCommandResult simulate_network(const NetworkArgs& a);

// check CLAIMS.json: the results; with out_root, also the report folder
// <out_root>/check/; *status the exit status (0 or 1,
// commands::check_exit_status). base_dir, allow_outside_paths,
// allow_unchecked and max_seconds as commands::CheckOptions.
commands::CheckResult check(const std::string& claims_path, const std::string& out_root, unsigned long long seed,
                           int threads, unsigned precision, const std::string& base_dir, bool allow_outside_paths,
                           bool allow_unchecked, double max_seconds, int* status);

}  // namespace ctmc::python
