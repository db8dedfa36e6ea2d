// ctmc-snn import onnx MODEL.onnx --output NET.json [--json]
//
// Writes the network manifest NET.json and its weights NET.safetensors from
// an ONNX model (commands/import_onnx.hpp).
#include <fmt/format.h>

#include <memory>

#include "command.hpp"
#include "ctmc/commands/import_onnx.hpp"
#include "ctmc/sim/nets/net.hpp"

namespace ctmc::cli {
namespace {

void print_import(const commands::ImportOnnxResult& r) {
  const sim::Net& net = r.net;
  fmt::print("imported {} (opset {}): input {}, {} layers, {} outputs\n", r.model, r.opset, net.input.text(),
             net.layers.size(), net.output_size());
  for (const auto& L : net.layers)
    fmt::print("  {:<10} {:<40} {} -> {}{}\n", sim::layer_kind_name(L.kind), L.name, L.in.text(), L.out.text(),
               L.activation == "linear" ? "" : ", " + L.activation);
  if (net.batchnorm_folded > 0)
    fmt::print("batchnorm folded into {} convolution(s): max relative error {:.3g} (limit {:g})\n", net.batchnorm_folded,
               net.batchnorm_fold_error, sim::kMaxBatchnormFoldError);
  fmt::print("wrote {} and its weights beside it\n", r.output);
}

Register reg([](CLI::App& root) {
  auto* group = subcommand_group(root, "import", "Import a network from another framework's file");
  auto o = std::make_shared<commands::ImportOnnxOptions>();
  auto json = std::make_shared<bool>(false);
  auto* cmd = group->add_subcommand("onnx", "ONNX model (torch.onnx.export, opset >= 13) -> network manifest + safetensors weights");
  cmd->add_option("model", o->model, "The .onnx file")->required();
  cmd->add_option("--output", o->output, "Manifest to write (weights go beside it as <stem>.safetensors)")->required();
  cmd->add_flag("--json", *json, "Machine-readable output");
  cmd->callback([o, json] {
    o->command_line = command_line();
    const auto r = commands::run_import_onnx(*o);
    if (*json)
      fmt::print("{}\n", commands::to_json(r).dump(2));
    else
      print_import(r);
  });
});

}  // namespace
}  // namespace ctmc::cli
