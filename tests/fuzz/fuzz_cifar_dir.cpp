// CIFAR-10 folders (sim/formats/cifar.hpp): load_cifar_dir on a folder the input
// describes, with batch files of kRecords records (CTMC_SNN_CIFAR_BATCH_RECORDS,
// so that a whole folder is a few KB). The six files data_batch_1.bin ...
// data_batch_5.bin, test_batch.bin are described in turn, each by a kind byte
//   0 absent, 1 a regular file, 2 a named pipe (must be refused unopened, or
//   the run hangs into libFuzzer's timeout), 3 a folder, 4 a link to /dev/zero
//   (must be refused before it is read), 5 a gzip file,
// and, for 1 and 5, a 2-byte little-endian length and that many bytes of
// content (fewer where the input ends; a gzip file holds them deflated).
// An accepted folder must be the full set: 5 x kRecords training images and
// kRecords test images, 3 x 32 x 32 pixels in [0, 1], labels 0..9.
// Seeds: tests/fuzz/make_cifar_dir_seeds.py.
#include <sys/stat.h>
#include <zlib.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "ctmc/sim/formats/cifar.hpp"
#include "fuzz_common.hpp"

using namespace ctmc;

namespace {

constexpr int kRecords = 2;

std::vector<std::uint8_t> gzip(const std::uint8_t* data, std::size_t size) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  std::vector<std::uint8_t> out(deflateBound(&zs, static_cast<uLong>(size)) + 64);
  zs.next_in = const_cast<Bytef*>(data);
  zs.avail_in = static_cast<uInt>(size);
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::setenv("CTMC_SNN_CIFAR_BATCH_RECORDS", std::to_string(kRecords).c_str(), 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace fs = std::filesystem;
  const fs::path dir = fuzz::work_dir() / "cifar";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  static const std::array<const char*, 6> kNames = {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                                    "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"};
  std::size_t at = 0;
  for (const char* name : kNames) {
    const fs::path p = dir / name;
    const int kind = at < size ? data[at++] % 6 : 1;
    if (kind == 1 || kind == 5) {
      std::size_t n = 0;
      if (at + 2 <= size) n = data[at] | (std::size_t(data[at + 1]) << 8), at += 2;
      n = std::min(n, size - at);
      const std::string rel = "cifar/" + std::string(name);
      if (kind == 1) {
        fuzz::write_file(rel, data + at, n);
      } else {
        const auto z = gzip(data + at, n);
        fuzz::write_file(rel, z.data(), z.size());
      }
      at += n;
    } else if (kind == 2) {
      ::mkfifo(p.c_str(), 0600);
    } else if (kind == 3) {
      fs::create_directory(p, ec);
    } else if (kind == 4) {
      fs::create_symlink("/dev/zero", p, ec);
    }
  }
  sim::DatasetSplit split;
  if (!fuzz::reject_only("load_cifar_dir", [&] { split = sim::load_cifar_dir(dir.string()); })) return 0;
  if (split.train.size() != sim::kCifarTrainBatches * kRecords || split.test.size() != kRecords)
    fuzz::finding("an accepted folder is not the full set of batches");
  for (const sim::Dataset* d : {&split.train, &split.test}) {
    if (d->features() != sim::kCifarRecordBytes - 1 || d->channels != 3 || d->rows != 32 || d->cols != 32)
      fuzz::finding("an accepted folder's images are not 3 x 32 x 32");
    for (int y : d->labels)
      if (y < 0 || y > 9) fuzz::finding("an accepted label is not in 0..9");
    if (d->images.size() > 0 && (d->images.minCoeff() < 0 || d->images.maxCoeff() > 1))
      fuzz::finding("an accepted pixel is not in [0, 1]");
  }
  return 0;
}
