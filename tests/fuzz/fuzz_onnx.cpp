// ONNX models (sim/nets/onnx_import.hpp, `ctmc-snn import onnx`): import_onnx on
// the input. An accepted model must give a manifest whose weights encode as
// a safetensors file and load again (net_from_manifest) to a network of the
// same input size, output size and layer count as the import's.
#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/sim/nets/onnx_import.hpp"
#include "fuzz_common.hpp"

using namespace ctmc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_file("model.onnx", data, size);
  sim::OnnxImport imp;
  if (!fuzz::reject_only("import_onnx", [&] { imp = sim::import_onnx(path); })) return 0;
  const std::string weights = (fuzz::work_dir() / "model.safetensors").string();
  const auto bytes = sim::encode_safetensors(weights, imp.weights);
  const std::string again = fuzz::write_file("again.safetensors", bytes.data(), bytes.size());
  sim::Net net;
  if (!fuzz::reject_only("net_from_manifest (imported)", [&] {
        net = sim::net_from_manifest(imp.manifest, sim::read_safetensors(again), "imported", "imported weights");
      }))
    fuzz::finding("the imported manifest does not load again");
  if (net.layers.size() != imp.net.layers.size() || net.input.size() != imp.net.input.size())
    fuzz::finding("the imported manifest loads to another network");
  return 0;
}
