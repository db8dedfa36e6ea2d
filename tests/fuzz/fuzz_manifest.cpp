// Network manifest (sim/nets/manifest.hpp): load_network on the input as a
// manifest, in a folder that also holds the test fixtures' weights files
// (tiny_mlp.safetensors, tiny_mlp_half.safetensors) for it to refer to.
#include <nlohmann/json.hpp>

#include "ctmc/sim/nets/manifest.hpp"
#include "fuzz_common.hpp"

using namespace ctmc;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  namespace fs = std::filesystem;
  for (const char* w : {"tiny_mlp.safetensors", "tiny_mlp_half.safetensors"})
    fs::copy_file(fs::path(CTMC_FIXTURES_DIR) / w, fuzz::work_dir() / w, fs::copy_options::overwrite_existing);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_file("net.json", data, size);
  fuzz::reject_only("load_network", [&] {
    nlohmann::json meta;
    (void)sim::load_network(path, &meta);
  });
  return 0;
}
