// safetensors (sim/formats/safetensors.hpp): read_safetensors on the input; a file it
// accepts holding only F32/F64 tensors (the written dtypes) must encode again.
#include "ctmc/sim/formats/safetensors.hpp"
#include "fuzz_common.hpp"

using namespace ctmc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_file("w.safetensors", data, size);
  sim::SafetensorsFile f;
  if (!fuzz::reject_only("read_safetensors", [&] { f = sim::read_safetensors(path); })) return 0;
  for (const auto& [name, t] : f.tensors)
    if (t.dtype != "F32" && t.dtype != "F64") return 0;
  if (!fuzz::reject_only("encode_safetensors", [&] { (void)sim::encode_safetensors(path, f); }))
    fuzz::finding("encode_safetensors rejects a file read_safetensors accepted");
  return 0;
}
