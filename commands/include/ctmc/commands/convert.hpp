// ctmc-snn convert: a user's trained network (any manifest: dense or a layer
// graph with convolutions) made ready to run as a spiking network, in one
// command. For every spiking layer (each nonlinear layer, then the output
// layer, readout spike) it samples the layer's preactivations on the first
// training images, writes their quantiles as a samples file, fits one CTMC
// neuron of the paper's family for the layer's target on them (as `report
// conversion` does: layer_fit.hpp), and writes the `simulate network` and
// `sweep` commands that run the net with those neurons.
//
// Output: the folder DIR (--output-dir), written whole or not at all, as a
// report folder (report_writer.hpp: report.md, meta.json; a folder this
// tool did not write is never replaced): neuron-L<l>.json and
// samples-L<l>.txt per spiking layer, layers.csv, commands.sh (the lines
// of command_line.hpp).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "ctmc/commands/document.hpp"
#include "ctmc/sim/formats/dataset.hpp"
#include "ctmc/sim/engines/net_synapse.hpp"
#include "ctmc/sim/formats/tensor_inputs.hpp"

namespace ctmc::commands {

struct ConvertOptions {
  std::string net;         // manifest
  sim::DataSource data;    // its train split gives the preactivations
  std::string output_dir;  // the folder written
  std::string command_line;
  int fit_images = 1000;      // first N training images (fewer for a layer graph whose layers are large, see below)
  std::size_t samples = 2000; // quantiles per layer: the fit's points
  int starts = 32;            // multistart starts per fit
  // The output layer's target; empty: relu after rectified-linear hidden
  // layers (the logits' positive part), else the last hidden activation.
  std::string output_activation;
  unsigned long long seed = 1;
  int threads = 0;
};

// At most this many preactivations are held per layer (64 MiB of floats):
// a layer of U units samples min(fit_images, this / U) images.
inline constexpr std::size_t kMaxConvertValues = std::size_t(1) << 24;

struct ConvertLayer {
  std::string target, family, neuron_file, samples_file;
  std::size_t units = 0, values = 0;  // values: units x images sampled
  int images = 0;
  double lo = 0, hi = 0;              // the fit's domain: the smallest and largest quantile
  double mse = 0, max_abs_error = 0;  // of the fit on its samples
};

struct ConvertResult {
  std::string folder;  // where the files are
  std::vector<ConvertLayer> layers;
  std::string simulate_command, sweep_command;
};

// The pieces of convert that `report deep` runs on its own nets.
class ReportWriter;

// The targets of the spiking layers: each nonlinear layer's activation, then
// the output layer's (output_activation; empty: relu after rectified-linear
// hidden layers, else the last hidden activation).
std::vector<std::string> layer_targets(const sim::Net& net, const std::vector<sim::NetStage>& stages,
                                       const std::string& output_activation);
// The training images whose preactivations each spiking layer samples: the
// first min(fit_images, train_images, kMaxConvertValues / units) (at least 1).
std::vector<int> preactivation_images(const sim::Net& net, const std::vector<sim::NetStage>& stages, int fit_images,
                                      int train_images);
// Each spiking layer's preactivations (z before the activation; the logits
// for the output layer) on the first images[l] training images.
std::vector<std::vector<float>> sample_preactivations(const sim::Net& net, const sim::Dataset& train,
                                                      const std::vector<int>& images);
// Layer l's neuron: quantiles of `values` (of `images` images) written to
// samples-<tag>-L<l>.txt, the fit to neuron-<tag>-L<l>.json (no "<tag>-"
// when the tag is empty) in the writer's folder.
struct SpikingLayerFit {
  std::string tag;     // file-name key
  std::string source;  // the net, as the samples file's header names it
  std::size_t samples = 2000;
  int starts = 32;
  unsigned long long seed = 1;
  int threads = 0;
};
ConvertLayer fit_spiking_layer(ReportWriter& w, const SpikingLayerFit& f, std::size_t l, const std::string& target,
                               std::vector<float> values, int images);

// InputError naming the option: a manifest that does not load, data without
// a train split, a net the spiking engines refuse (max pooling), an
// activation no family fits, fit_images, samples or starts below 1, an
// output folder that is not one this tool wrote.
ConvertResult run_convert(const ConvertOptions& o);

// The result as a document (the Python module's convert()): {"folder",
// "layers": [{"target", "family", "neuron_file", "samples_file", "units",
// "values", "images", "lo", "hi", "mse", "max_abs_error"}],
// "simulate_command", "sweep_command"}.
void write(commands::DocumentWriter& w, const ConvertResult& r);

}  // namespace ctmc::commands
