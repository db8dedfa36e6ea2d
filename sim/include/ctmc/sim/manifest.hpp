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
// Weights are [out, in] row-major (PyTorch nn.Linear's layout), F32 or F64;
// "bias" may be omitted (zero bias).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "ctmc/sim/mlp.hpp"

namespace ctmc::sim {

// Reads a manifest and its safetensors file. Throws ctmc::InputError naming
// the manifest or the weights file for a malformed file, a missing tensor, a
// wrong dtype, or a shape that disagrees with the manifest.
Mlp load_network(const std::string& manifest_path, nlohmann::json* meta_out = nullptr);

// Writes <manifest_path> and, beside it, <stem>.safetensors (F32), both or
// neither (write_files_atomically). Tensor names are fc<l>.weight / fc<l>.bias.
void save_network(const std::string& manifest_path, const Mlp& net, const nlohmann::json& meta = nlohmann::json::object());
// What save_network will find at manifest_path, checked up front (before a
// long training): InputError naming `option` if the manifest or its weights
// file <stem>.safetensors is a folder, or the path names no file.
void check_network_output(const std::string& manifest_path, const std::string& option);

}  // namespace ctmc::sim
