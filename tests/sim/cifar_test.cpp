// CIFAR-10 binary batches: a small batch generated here byte by byte from the
// format description (label byte, then 1024 R, 1024 G, 1024 B bytes).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "ctmc/sim/cifar.hpp"
#include "ctmc/core/errors.hpp"

namespace fs = std::filesystem;
using namespace ctmc::sim;

namespace {

// Record j: label (3*j) % 10; byte of channel c, row y, column x = (j + 7c + y + 2x) % 256.
std::vector<std::uint8_t> batch_bytes(int n) {
  std::vector<std::uint8_t> b;
  for (int j = 0; j < n; ++j) {
    b.push_back(std::uint8_t((3 * j) % 10));
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < 32; ++y)
        for (int x = 0; x < 32; ++x) b.push_back(std::uint8_t((j + 7 * c + y + 2 * x) % 256));
  }
  return b;
}

void write_bytes(const fs::path& p, const std::vector<std::uint8_t>& b) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

}  // namespace

TEST_CASE("CIFAR-10 batch reader: labels and channel-major pixels") {
  const fs::path dir = fs::temp_directory_path() / ("ctmc_cifar_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_bytes(dir / "data_batch_1.bin", batch_bytes(4));
  write_bytes(dir / "data_batch_2.bin", batch_bytes(2));
  write_bytes(dir / "test_batch.bin", batch_bytes(3));

  const Dataset d = read_cifar_batch((dir / "data_batch_1.bin").string());
  CHECK(d.size() == 4);
  CHECK(d.features() == 3072);
  CHECK(d.channels == 3);
  CHECK(d.rows == 32);
  CHECK(d.labels == std::vector<int>{0, 3, 6, 9});
  for (int j : {0, 3})
    for (int c : {0, 2})
      for (int y : {0, 31})
        for (int x : {1, 30}) CHECK(d.images(c * 1024 + y * 32 + x, j) == float((j + 7 * c + y + 2 * x) % 256) / 255.0f);

  const auto s = load_dataset_dir(dir.string());  // picks CIFAR by test_batch.bin
  CHECK(s.train.size() == 6);                      // batches 1 and 2 concatenated
  CHECK(s.train.labels[4] == 0);
  CHECK(s.test.size() == 3);

  auto bad = batch_bytes(2);
  bad.pop_back();
  write_bytes(dir / "bad.bin", bad);
  CHECK_THROWS_WITH_AS(read_cifar_batch((dir / "bad.bin").string()), doctest::Contains("truncated CIFAR-10 batch"), ctmc::InputError);
  bad = batch_bytes(2);
  bad[3073] = 10;  // label of record 1
  write_bytes(dir / "bad.bin", bad);
  CHECK_THROWS_WITH_AS(read_cifar_batch((dir / "bad.bin").string()), doctest::Contains("label 10 in record 1"), ctmc::InputError);
  write_bytes(dir / "bad.bin", {});
  CHECK_THROWS_AS(read_cifar_batch((dir / "bad.bin").string()), ctmc::InputError);
  fs::remove(dir / "data_batch_1.bin");
  CHECK_THROWS_WITH_AS(load_cifar_dir(dir.string()), doctest::Contains("not a CIFAR-10 binary directory"), ctmc::InputError);
  fs::remove_all(dir);
}
