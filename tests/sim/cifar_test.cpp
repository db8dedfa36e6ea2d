// CIFAR-10 binary batches: a small batch generated here byte by byte from the
// format description (label byte, then 1024 R, 1024 G, 1024 B bytes); a
// folder is the full set of batch files, each of exactly its records.
#include <doctest/doctest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "ctmc/sim/formats/cifar.hpp"
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

// One gzip member holding `raw`.
std::vector<std::uint8_t> gzip(const std::vector<std::uint8_t>& raw) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::vector<std::uint8_t> out(deflateBound(&zs, static_cast<uLong>(raw.size())) + 64);
  zs.next_in = const_cast<Bytef*>(raw.data());
  zs.avail_in = static_cast<uInt>(raw.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace

TEST_CASE("CIFAR-10 batch reader: labels and channel-major pixels") {
  const fs::path dir = fs::temp_directory_path() / ("ctmc_cifar_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_bytes(dir / "data_batch_1.bin", batch_bytes(4));

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
  fs::remove_all(dir);
}

namespace {

// A folder of the binary version's layout with `records` records per file
// (record j of batch b is record 10 b + j of batch_bytes).
struct CifarFolder {
  fs::path dir = fs::temp_directory_path() / ("ctmc_cifar_dir_" + std::to_string(::getpid()));
  explicit CifarFolder(int records) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (int b = 1; b <= 6; ++b) write_bytes(dir / name(b), batch(b, records));
  }
  ~CifarFolder() { fs::remove_all(dir); }
  static std::string name(int b) { return b == 6 ? "test_batch.bin" : "data_batch_" + std::to_string(b) + ".bin"; }
  static std::vector<std::uint8_t> batch(int b, int records) {
    const auto all = batch_bytes(10 * b + records);
    return {all.begin() + std::ptrdiff_t(10 * b) * kCifarRecordBytes, all.end()};
  }
  std::string path(int b) const { return (dir / name(b)).string(); }
};

// Sets CTMC_SNN_CIFAR_BATCH_RECORDS for one scope.
struct RecordsPerBatch {
  explicit RecordsPerBatch(const char* value) {
    if (value) ::setenv("CTMC_SNN_CIFAR_BATCH_RECORDS", value, 1);
    else ::unsetenv("CTMC_SNN_CIFAR_BATCH_RECORDS");
  }
  ~RecordsPerBatch() { ::unsetenv("CTMC_SNN_CIFAR_BATCH_RECORDS"); }
};

std::string load_error(const std::string& dir) {
  try {
    (void)load_dataset_dir(dir);
  } catch (const ctmc::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a CIFAR-10 folder: the five training batches in order, then the test batch") {
  const RecordsPerBatch records("3");
  const CifarFolder f(3);
  const auto s = load_dataset_dir(f.dir.string());  // picks CIFAR by test_batch.bin
  REQUIRE(s.train.size() == 15);
  REQUIRE(s.test.size() == 3);
  for (int b = 1; b <= 5; ++b)
    for (int j = 0; j < 3; ++j) CHECK(s.train.labels[std::size_t(3 * (b - 1) + j)] == (3 * (10 * b + j)) % 10);
  CHECK(s.train.images(5, 14) == float((10 * 5 + 2 + 2 * 5) % 256) / 255.0f);  // batch 5, record 2, x = 5
  CHECK(s.test.labels == std::vector<int>{(3 * 60) % 10, (3 * 61) % 10, (3 * 62) % 10});
}

TEST_CASE("a CIFAR-10 folder is the full set, every file of exactly its records, or an InputError naming the file") {
  SUBCASE("the binary version's 10000 records, checked from the sizes before reading") {
    const RecordsPerBatch records(nullptr);
    const CifarFolder f(0);
    for (int b = 1; b <= 6; ++b) fs::resize_file(f.path(b), 30730000);  // sparse: nothing is read
    fs::resize_file(f.path(6), 15365000);                               // half a test batch
    CHECK(load_error(f.dir.string()) ==
          f.path(6) + ": 15365000 bytes; a CIFAR-10 batch file holds exactly 10000 records of 3073 bytes "
                      "(30730000 bytes), not 5000");
    fs::resize_file(f.path(6), 30730001);
    CHECK(load_error(f.dir.string()) ==
          f.path(6) + ": 30730001 bytes; a CIFAR-10 batch file holds exactly 10000 records of 3073 bytes (30730000 bytes)");
  }
  const RecordsPerBatch records("3");
  SUBCASE("a missing training batch (40000 training images read as a whole folder)") {
    const CifarFolder f(3);
    fs::remove(f.path(3));
    CHECK(load_error(f.dir.string()) ==
          f.dir.string() + ": not a complete CIFAR-10 binary folder (missing data_batch_3.bin; it holds data_batch_1.bin "
                           "... data_batch_5.bin and test_batch.bin)");
    fs::remove(f.path(1));
    CHECK(load_error(f.dir.string()).find("(missing data_batch_1.bin, data_batch_3.bin;") != std::string::npos);
  }
  SUBCASE("a batch of one record too few, raw or gzip") {
    const CifarFolder f(3);
    write_bytes(f.path(2), CifarFolder::batch(2, 2));
    CHECK(load_error(f.dir.string()) ==
          f.path(2) + ": 6146 bytes; a CIFAR-10 batch file holds exactly 3 records of 3073 bytes (9219 bytes), not 2");
    // gzip -n of two records of batch 2 (checked once inflated).
    write_bytes(f.path(2), gzip(CifarFolder::batch(2, 2)));
    CHECK(load_error(f.dir.string()) ==
          f.path(2) + ": 2 records; a CIFAR-10 batch file holds exactly 3 records of 3073 bytes (9219 bytes)");
    write_bytes(f.path(2), gzip(CifarFolder::batch(2, 3)));
    CHECK(load_dataset_dir(f.dir.string()).train.size() == 15);
  }
  SUBCASE("a folder where a batch file should be") {
    const CifarFolder f(3);
    fs::remove(f.path(6));
    fs::create_directory(f.path(6));
    CHECK(load_error(f.dir.string()).find(f.path(6) + ": is a folder") == 0);
  }
}

TEST_CASE("CTMC_SNN_CIFAR_BATCH_RECORDS: a whole number from 1 to 10000, or an InputError naming it") {
  for (const char* bad : {"0", "10001", "x", "-3", ""}) {
    const RecordsPerBatch records(bad);
    CHECK_THROWS_WITH_AS(cifar_batch_records(), doctest::Contains("is not a whole number from 1 to 10000"), ctmc::InputError);
  }
  const RecordsPerBatch records("7");
  CHECK(cifar_batch_records() == 7);
}
