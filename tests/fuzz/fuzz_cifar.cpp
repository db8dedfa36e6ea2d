// CIFAR-10 binary batches (sim/formats/cifar.hpp): read_cifar_batch on the input
// (raw records, or gzip when it starts with 1f 8b).
#include "ctmc/sim/formats/cifar.hpp"
#include "fuzz_common.hpp"

using namespace ctmc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_file("data_batch_1.bin", data, size);
  fuzz::reject_only("read_cifar_batch", [&] { (void)sim::read_cifar_batch(path); });
  return 0;
}
