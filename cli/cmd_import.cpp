// ctmc-snn import onnx MODEL.onnx --output NET.json [--json]
//
// Writes the network manifest NET.json and its weights NET.safetensors from
// an ONNX model (sim/onnx_import.hpp), both or neither, after loading them as
// every command will.
#include <fmt/format.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "ctmc/io/same_file.hpp"
#include "ctmc/sim/manifest.hpp"
#include "ctmc/sim/onnx_import.hpp"
#include "ctmc/core/errors.hpp"

namespace ctmc::cli {
namespace {

struct ImportOptions {
  std::string model, output;
  bool json = false;
};

void run_import(const ImportOptions& o) {
  sim::check_network_output(o.output, "--output");
  io::refuse_outputs_over_inputs(io::named_outputs("--output", sim::network_output_files(o.output)), {o.model});
  struct stat st {};
  if (::stat(o.output.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw InputError(fmt::format("--output: '{}' is not a regular file (the weights go beside the manifest as <stem>.safetensors)",
                                 o.output));
  sim::OnnxImport imp = sim::import_onnx(o.model);
  imp.manifest["meta"]["command"] = command_line();
  sim::save_manifest(o.output, imp.manifest, imp.weights);
  const sim::Net& net = imp.net;
  nlohmann::ordered_json out = {{"output", o.output},
                                {"input", net.input.text()},
                                {"layers", net.layers.size()},
                                {"outputs", net.output_size()},
                                {"batchnorm_folded", net.batchnorm_folded},
                                {"batchnorm_fold_max_relative_error", net.batchnorm_fold_error}};
  if (o.json) {
    fmt::print("{}\n", out.dump(2));
    return;
  }
  fmt::print("imported {} (opset {}): input {}, {} layers, {} outputs\n", o.model, imp.manifest["meta"]["opset"].get<std::int64_t>(),
             net.input.text(), net.layers.size(), net.output_size());
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const auto& L = net.layers[l];
    fmt::print("  {:<10} {:<40} {} -> {}{}\n", sim::layer_kind_name(L.kind), L.name, L.in.text(), L.out.text(),
               L.activation == "linear" ? "" : ", " + L.activation);
  }
  if (net.batchnorm_folded > 0)
    fmt::print("batchnorm folded into {} convolution(s): max relative error {:.3g} (limit {:g})\n", net.batchnorm_folded,
               net.batchnorm_fold_error, sim::kMaxBatchnormFoldError);
  fmt::print("wrote {} and its weights beside it\n", o.output);
}

Register reg([](CLI::App& root) {
  auto* group = subcommand_group(root, "import", "Import a network from another framework's file");
  auto o = std::make_shared<ImportOptions>();
  auto* cmd = group->add_subcommand("onnx", "ONNX model (torch.onnx.export, opset >= 13) -> network manifest + safetensors weights");
  cmd->add_option("model", o->model, "The .onnx file")->required();
  cmd->add_option("--output", o->output, "Manifest to write (weights go beside it as <stem>.safetensors)")->required();
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o] { run_import(*o); });
});

}  // namespace
}  // namespace ctmc::cli
