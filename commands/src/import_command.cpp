// import onnx.
#include <fmt/format.h>
#include <sys/stat.h>

#include "ctmc/commands/import_onnx.hpp"
#include "ctmc/commands/output_path.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/io/same_file.hpp"
#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/sim/nets/onnx_import.hpp"

namespace ctmc::commands {

ImportOnnxResult run_import_onnx(const ImportOnnxOptions& o) {
  check_output_path(o.output, "--output");  // its folder exists: never created here
  sim::check_network_output(o.output, "--output");
  io::refuse_outputs_over_inputs(io::named_outputs("--output", sim::network_output_files(o.output)), {o.model});
  struct stat st {};
  if (::stat(o.output.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw InputError(fmt::format(
        "--output: '{}' is not a regular file (the weights go beside the manifest as <stem>.safetensors)", o.output));
  sim::OnnxImport imp = sim::import_onnx(o.model);
  imp.manifest["meta"]["command"] = o.command_line;
  sim::save_manifest(o.output, imp.manifest, imp.weights);
  return {o.model, o.output, imp.opset, std::move(imp.net)};
}

void write(DocumentWriter& w, const ImportOnnxResult& r) {
  const Object doc(w, "");
  put(w, "output", r.output);
  put(w, "input", r.net.input.text());
  put(w, "layers", r.net.layers.size());
  put(w, "outputs", r.net.output_size());
  put(w, "batchnorm_folded", r.net.batchnorm_folded);
  put(w, "batchnorm_fold_max_relative_error", r.net.batchnorm_fold_error);
}

nlohmann::ordered_json to_json(const ImportOnnxResult& r) { return json_of(r); }

}  // namespace ctmc::commands
