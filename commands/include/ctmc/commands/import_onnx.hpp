// import onnx MODEL.onnx --output NET.json: the network manifest and its
// weights beside it (<stem>.safetensors) from an ONNX model
// (sim/nets/onnx_import.hpp), both or neither, after loading them as every
// command will.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "ctmc/commands/document.hpp"
#include "ctmc/sim/nets/net.hpp"

namespace ctmc::commands {

struct ImportOnnxOptions {
  std::string model, output;
  std::string command_line;  // recorded in the manifest's meta
};
struct ImportOnnxResult {
  std::string model, output;
  std::int64_t opset = 0;
  sim::Net net;  // as loaded (layers, BatchNorm folds and their largest relative error)
};
ImportOnnxResult run_import_onnx(const ImportOnnxOptions& o);
void write(DocumentWriter& w, const ImportOnnxResult& r);
nlohmann::ordered_json to_json(const ImportOnnxResult& r);

}  // namespace ctmc::commands
