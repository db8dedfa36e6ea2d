// ONNX models as torch.onnx.export writes them (opset 13 and later, IR
// version 7 and later), turned into a network manifest and its safetensors
// file (manifest.hpp) so that every command reads them as it reads a
// hand-written manifest.
//
// The graph must be a chain: each node takes the output of the node before it
// (the graph input for the first), its other inputs initializers or Constant
// nodes. Operators and what they become:
//   Conv (group 1, dilation 1, symmetric pads)    conv2d
//   BatchNormalization (inference)                 batchnorm2d (folded at load)
//   Relu, Sigmoid, Softplus                        relu, sigmoid, softplus
//   Clip with min 0 and max K                      cliprelu_K
//   AveragePool, MaxPool (ceil_mode 0)             avgpool2d, maxpool2d
//   Flatten (axis 1), Reshape to [N, -1] or [N, K] flatten
//   Gemm (transA 0), MatMul [+ Add]                linear (W alpha, bias beta C)
//   Identity, Dropout                              nothing
//   Pad (zeros on H and W, both sides alike)       the next Conv's or
//                                                  AveragePool's padding
// An Identity of an initializer (torch.onnx.export's alias of a shared
// parameter) is that initializer under its output's name.
// Initializers are FLOAT or DOUBLE, in raw_data or the typed fields; tensors
// keep their initializer names where their values are unchanged.
//
// Errors (ctmc::InputError naming the file and, for a node, its name and op
// type): not an ONNX model, an IR version or opset below the above, an
// unsupported operator or attribute, a branch, a weight that is not an
// initializer, data stored outside the file, and every manifest error of the
// result (net_from_manifest), reported against the ONNX file.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "ctmc/sim/nets/net.hpp"
#include "ctmc/sim/formats/safetensors.hpp"

namespace ctmc::sim {

struct OnnxImport {
  nlohmann::json manifest;  // without "weights" / "weights_sha256" (save_manifest adds them)
  SafetensorsFile weights;
  Net net;                  // the manifest as loaded (its BatchNorm fold error included)
  std::int64_t opset = 0;   // the model's ai.onnx opset (also in the manifest's meta)
};

// An ONNX model is refused beyond 2 GiB, protobuf's limit for one message.
inline constexpr std::uint64_t kMaxOnnxBytes = std::uint64_t(2) << 30;

OnnxImport import_onnx(const std::string& onnx_path);

}  // namespace ctmc::sim
