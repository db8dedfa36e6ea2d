// Network files (DESIGN.md section 8): weights in safetensors (what
// safetensors.torch.save_file writes) plus a small JSON manifest:
//
//   {"format": "ctmc-snn-mlp", "version": 1,
//    "weights": "net.safetensors",           // relative to the manifest's folder
//    "weights_sha256": "9f86d0...",          // optional: SHA-256 (hex) of the weights file;
//                                            // save_network writes it, load_network checks it
//    "layers": [
//      {"type": "dense", "weight": "fc1.weight", "bias": "fc1.bias",
//       "in": 784, "out": 256, "activation": "relu"},
//      ...,
//      {"type": "dense", "weight": "fc3.weight", "bias": "fc3.bias",
//       "in": 128, "out": 10, "activation": "linear"}],
//    "meta": {...}}                          // free-form: training settings, accuracy
//
// Weights are [out, in] row-major (PyTorch nn.Linear's layout), F32, F64, F16
// or BF16; "bias" may be omitted (zero bias). Tensors the manifest does not
// name are not read (a whole state_dict may be given).
//
// Layer graphs (net.hpp) use the same format with more layer types, each
// with an optional "name" (shown in messages) and, for the ones with an
// operation, an optional "activation" (default "linear"); PyTorch's names
// and defaults:
//
//    "input": [1, 28, 28],                   // C, H, W of one sample (needed unless the first layer is dense)
//    {"type": "conv2d", "weight": "features.0.weight", "bias": "features.0.bias",
//     "in_channels": 1, "out_channels": 16, "kernel_size": 3, "stride": 1, "padding": 1},
//    {"type": "batchnorm2d", "weight": "features.1.weight", "bias": "features.1.bias",
//     "running_mean": "features.1.running_mean", "running_var": "features.1.running_var",
//     "num_features": 16, "eps": 1e-5},      // directly after a conv2d, folded into it
//    {"type": "relu"},                       // any activation name as a type, or
//    {"type": "activation", "activation": "cliprelu_6"},
//    {"type": "avgpool2d", "kernel_size": 2, "stride": 2, "padding": 0, "count_include_pad": true},
//    {"type": "maxpool2d", "kernel_size": 2},  // stride defaults to kernel_size
//    {"type": "flatten"},
//    {"type": "linear", "weight": "classifier.weight", "bias": "classifier.bias", "in": 784, "out": 10}
//
// kernel_size, stride and padding are a number or [h, w]; conv2d weights are
// [out_channels, in_channels, kh, kw]; batchnorm2d tensors are [num_features].
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ctmc/sim/nets/mlp.hpp"
#include "ctmc/sim/nets/net.hpp"
#include "ctmc/sim/formats/safetensors.hpp"

namespace ctmc::sim {

// Reads a manifest and its safetensors file. Throws ctmc::InputError naming
// the manifest or the weights file for a malformed file, a missing tensor, a
// wrong dtype, or a shape that disagrees with the manifest.
// A manifest with layers other than "dense" is read as a layer graph and must
// be dense-only (Net::to_mlp: its message names the first other layer).
Mlp load_network(const std::string& manifest_path, nlohmann::json* meta_out = nullptr);

// Any manifest as a layer graph, BatchNorm folded (its error in
// Net::batchnorm_fold_error; InputError naming the layer beyond
// kMaxBatchnormFoldError). Errors name the manifest or weights file and the
// layer: a tensor whose shape disagrees with the manifest, shapes that do not
// chain (Net::infer_shapes), a batchnorm2d not directly after a conv2d.
Net load_net(const std::string& manifest_path, nlohmann::json* meta_out = nullptr);
// A manifest as the engines take it, read once: a dense one as an Mlp (the
// dense engine, bit for bit as before layer graphs), any other
// (convolutions, pooling) as a layer graph. Its layers declare which: dense
// layers only, without an "input" shape, go to the dense reader (and keep
// its messages); any other manifest is read as a layer graph, and is an Mlp
// when only flattens and activations join its dense layers.
struct AnyNetwork {
  std::optional<Mlp> mlp;
  std::optional<Net> graph;
  template <class F>
  decltype(auto) visit(F&& f) const {
    return mlp ? f(*mlp) : f(*graph);
  }
};
AnyNetwork load_any_network(const std::string& manifest_path);
// The choice between two readers of one network whose kind is not declared
// (a net built in memory by the Python module, with no graph reader: `graph`
// empty): the dense reader first; the graph where the dense reader refuses
// and the graph is not dense, else the dense reader's message.
AnyNetwork load_any_network(const std::function<Mlp()>& dense, const std::function<Net()>& graph);
// The same from a parsed manifest and its tensors (e.g. before writing them).
Net net_from_manifest(const nlohmann::json& manifest, const SafetensorsFile& weights, const std::string& manifest_path,
                      const std::string& weights_path);

// Writes <manifest_path> and, beside it, <stem>.safetensors (F32), both or
// neither (write_files_atomically). Tensor names are fc<l>.weight / fc<l>.bias.
void save_network(const std::string& manifest_path, const Mlp& net, const nlohmann::json& meta = nlohmann::json::object());
// Writes `manifest` with its "weights" and "weights_sha256" set to
// <stem>.safetensors holding `weights`, beside it; both or neither.
void save_manifest(const std::string& manifest_path, nlohmann::json manifest, const SafetensorsFile& weights);
// What save_network will find at manifest_path, checked up front (before a
// long training): InputError naming `option` if the manifest or its weights
// file <stem>.safetensors is a folder, or the path names no file.
void check_network_output(const std::string& manifest_path, const std::string& option);

// The two files save_network and save_manifest write: the manifest and
// <stem>.safetensors beside it.
std::vector<std::string> network_output_files(const std::string& manifest_path);

// The files a manifest stands for: itself and, where it names one, its
// weights file (what an output must not be; a manifest that cannot be read
// stands for itself alone, and its reader reports it).
std::vector<std::string> network_input_files(const std::string& manifest_path);

}  // namespace ctmc::sim
