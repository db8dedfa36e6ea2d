// IDX files as stored (sim/formats/idx.hpp): the input is the file's bytes, raw or,
// when it starts with 1f 8b, gzip (the corpus has both). Read as any IDX
// array, as images and as labels.
#include "ctmc/sim/formats/idx.hpp"
#include "fuzz_common.hpp"

using namespace ctmc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_file("data-idx", data, size);
  fuzz::reject_only("read_idx", [&] { (void)sim::read_idx(path); });
  fuzz::reject_only("read_idx_images", [&] { (void)sim::read_idx_images(path); });
  fuzz::reject_only("read_idx_labels", [&] { (void)sim::read_idx_labels(path); });
  return 0;
}
