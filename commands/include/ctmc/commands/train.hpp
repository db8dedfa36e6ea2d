// train --data DIR --output NET.json [--arch mlp|vgg11] ...: a source MLP or
// VGG-11 (sim/nets/train.hpp, sim/nets/train_net.hpp), written as a manifest and its
// safetensors weights; evaluate --net NET.json --data ...: the test accuracy
// of a manifest at clip levels K (clip-on-forward [0, K] hidden activations).
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ctmc/commands/document.hpp"
#include "ctmc/sim/formats/tensor_inputs.hpp"
#include "ctmc/sim/nets/train.hpp"

namespace ctmc::commands {

// --max-memory GIB as bytes: 0 (the default) is the machine's physical
// memory; a value outside (0, 1e6] is an InputError naming the option.
std::uint64_t memory_limit_bytes(double gib);

// The ranges of train's epochs and batch size (run_train checks them, and
// the learning rate's sign, for the CLI and the Python module alike).
inline constexpr int kMaxEpochs = 100000, kMaxBatch = 1000000;

struct TrainCommandOptions {
  std::string data, output;
  std::string arch = "mlp";        // mlp or vgg11
  std::string hidden = "256,128";  // the MLP's hidden widths (arch mlp)
  double width = 1;                // scale of VGG-11's channel counts (arch vgg11), in (0, 16]
  int train_limit = 0;             // the first N training images (0: all)
  // Whether hidden / width were given: each belongs to one architecture.
  bool hidden_given = false, width_given = false;
  sim::TrainConfig cfg;      // activation, epochs, batch, learning rate, seed, threads, progress bar
  std::string command_line;  // recorded in the manifest's meta
  double max_memory_gib = 0;  // refuse a training estimated to need more (GiB); 0: the machine's memory
};

// The VGG-11 variant chosen for the images, before its training starts.
struct TrainArchitecture {
  std::string variant, input;  // the variant's name and the image shape (C x H x W)
  std::vector<int> channels;
  long weight_layers = 0;      // convolutions and dense layers
};

struct TrainCommandResult {
  std::string output, arch;
  double seconds = 0;                      // wall time of the training
  double train_accuracy = 0, test_accuracy = 0;  // fractions in [0, 1]
  std::vector<sim::EpochStats> epochs;
};

// `on_architecture` is called (VGG-11 only) once the variant is chosen.
TrainCommandResult run_train(TrainCommandOptions o,
                             const std::function<void(const TrainArchitecture&)>& on_architecture = {});
void write(DocumentWriter& w, const TrainCommandResult& r);
nlohmann::ordered_json to_json(const TrainCommandResult& r);

struct EvaluateCommandOptions {
  std::string net;
  sim::DataSource data;
  std::string clips = "inf";  // comma-separated K > 0, or inf / none (no clipping)
  std::string predictions;    // file of the predicted classes (one clip level); empty: none
  double max_memory_gib = 0;  // refuse a forward pass estimated to need more (GiB); 0: the machine's memory
};
struct EvaluateRow {
  float clip = 0;  // 0: no clipping (inf)
  double test_accuracy = 0;  // fraction in [0, 1]
  std::vector<int> predictions;  // per test image, in order
};
struct EvaluateCommandResult {
  int images = 0;
  int batchnorm_folded = 0;         // BatchNorm layers folded into convolutions at load
  double batchnorm_fold_error = 0;  // their largest relative error
  std::vector<EvaluateRow> rows;    // one per clip level
};
// Computes the accuracies; writes nothing (write_predictions does).
EvaluateCommandResult run_evaluate(const EvaluateCommandOptions& o);
// The predictions of the (one) row to o.predictions, one per line.
void write_predictions(const EvaluateCommandOptions& o, const EvaluateRow& row);
void write(DocumentWriter& w, const EvaluateCommandResult& r);
nlohmann::ordered_json to_json(const EvaluateCommandResult& r);

}  // namespace ctmc::commands
