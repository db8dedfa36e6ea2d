// The C++ side of the Python module ctmc_snn (python/): one function per
// command, each over the body the CLI command runs (reports/commands.hpp),
// returning the JSON document that the command prints with --json
// (serialized; the Python layer parses it), so that Python and the CLI give
// the same numbers bit for bit. Only module.cpp includes pybind11; these
// files compile as plain C++.
//
// Errors are the libraries' own: ctmc::InputError with the CLI's one-line
// message (module.cpp turns it into ValueError, parameters shown as the
// CLI's options by reports::option_message). Option names in messages are
// the CLI's ("--H: ..."), so one message reads the same from both.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ctmc/reports/commands.hpp"
#include "ctmc/solvers/model.hpp"

namespace ctmc::python {

// A model as the Python layer passes it: a file path or JSON text.
using reports::load_model;
using reports::ModelInput;

// flux MODEL --H h1,h2,... [--exact | --double | --precision p] --json
std::string flux_json(const ModelInput& model, const std::vector<std::string>& hs, const std::string& mode,
                      unsigned precision);
// The double flux alone at each H (the same solve as flux_json's --double rows).
std::vector<double> flux_double(const ModelInput& model, const std::vector<std::string>& hs);
// counting MODEL --H h --T t [--from S] [--exact | --double | --precision p] --json
std::string counting_json(const ModelInput& model, const std::string& h, const std::string& t, const std::string& from,
                          const std::string& mode, unsigned precision);
// formula MODEL --json
std::string formula_json(const ModelInput& model);

using BernsteinArgs = reports::BernsteinOptions;
// bernstein ... --json (the CLI's exit 1 on a refuted claim is the "refuted" count here)
std::string bernstein_json(const BernsteinArgs& a);

// fit / fit --score: the options of cli/cmd_fit.cpp, defaults as there.
using FitArgs = reports::FitCommandOptions;
// fit ... --json: the fitted model JSON with its meta, plus under "result"
// the figures the CLI prints in text mode (parameters, MSE, hops, ...).
std::string fit_json(const FitArgs& a);
// fit --score MODEL ... --json
std::string score_json(const FitArgs& a);

using NeuronArgs = reports::NeuronSimOptions;
// simulate neuron MODEL ... --json
std::string simulate_neuron_json(const ModelInput& model, const NeuronArgs& a);

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
  // The command's options, defaults as the CLI's (the IF baseline runs when
  // options.if_norm is set).
  reports::NetworkCommandOptions options;
};
// simulate network ... [--if ...] --json
std::string simulate_network_json(const NetworkArgs& a);

// check CLAIMS.json --json: the results document; with out_root, also the
// report folder <out_root>/check/; *status the exit status (0 or 1,
// reports::check_exit_status). base_dir, allow_outside_paths and
// allow_unchecked as reports::CheckOptions.
std::string check_json(const std::string& claims_path, const std::string& out_root, unsigned long long seed,
                       int threads, unsigned precision, const std::string& base_dir, bool allow_outside_paths,
                       bool allow_unchecked, int* status);

}  // namespace ctmc::python
