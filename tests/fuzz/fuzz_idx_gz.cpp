// IDX files through gzip (sim/formats/idx.hpp): the input is the uncompressed IDX
// content, which the target gzips (one member) before the reader inflates it,
// so mutations reach the IDX header and data behind the decompressor.
#include <zlib.h>

#include <vector>

#include "ctmc/sim/formats/idx.hpp"
#include "fuzz_common.hpp"

using namespace ctmc;

namespace {
std::vector<std::uint8_t> gzip(const std::uint8_t* data, std::size_t size) {
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  std::vector<std::uint8_t> out(deflateBound(&z, size) + 32);
  z.next_in = const_cast<Bytef*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> gz = gzip(data, size);
  const std::string path = fuzz::write_file("data-idx.gz", gz.data(), gz.size());
  fuzz::reject_only("read_idx", [&] { (void)sim::read_idx(path); });
  fuzz::reject_only("read_idx_images", [&] { (void)sim::read_idx_images(path); });
  fuzz::reject_only("read_idx_labels", [&] { (void)sim::read_idx_labels(path); });
  return 0;
}
