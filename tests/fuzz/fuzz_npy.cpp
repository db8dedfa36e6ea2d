// .npy test images (sim/formats/tensor_inputs.hpp): read_npy on the input; an array it
// accepts whose values are all float32 or all float64 must encode and read
// back to the same shape and values.
#include <cmath>

#include "ctmc/sim/formats/tensor_inputs.hpp"
#include "fuzz_common.hpp"

using namespace ctmc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_file("x.npy", data, size);
  sim::Tensor t;
  if (!fuzz::reject_only("read_npy", [&] { t = sim::read_npy(path); })) return 0;
  std::size_t count = 1;
  for (std::int64_t d : t.shape) count *= static_cast<std::size_t>(d);
  if (count != t.values.size()) fuzz::finding("read_npy: shape and value count disagree");
  t.dtype = "F64";
  const auto bytes = sim::encode_npy(t);
  const std::string again = fuzz::write_file("y.npy", bytes.data(), bytes.size());
  sim::Tensor u;
  if (!fuzz::reject_only("read_npy (encoded)", [&] { u = sim::read_npy(again); }))
    fuzz::finding("read_npy rejects what encode_npy wrote");
  if (u.shape != t.shape || u.values.size() != t.values.size()) fuzz::finding("encode_npy changed the shape");
  for (std::size_t k = 0; k < t.values.size(); ++k)
    if (!(u.values[k] == t.values[k] || (std::isnan(u.values[k]) && std::isnan(t.values[k]))))
      fuzz::finding("encode_npy changed a value");
  return 0;
}
