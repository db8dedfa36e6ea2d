// safetensors + manifest: a fixture written by an independent writer
// (tests/fixtures/make_safetensors_fixture.py, Python standard library only),
// the network it describes evaluated against hand arithmetic, our writer's
// round trip, and every malformed case raising InputError.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/sim/formats/safetensors.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/sim/formats/tensor_inputs.hpp"

namespace fs = std::filesystem;
using namespace ctmc::sim;
using ctmc::InputError;

namespace {

const std::string kFixture = std::string(CTMC_FIXTURES_DIR) + "/tiny_mlp.safetensors";
const std::string kManifest = std::string(CTMC_FIXTURES_DIR) + "/tiny_mlp.json";

std::vector<std::uint8_t> read_bytes(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}
void write_bytes(const fs::path& p, const std::vector<std::uint8_t>& b) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("ctmc_st_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

// Replaces the first occurrence of `from` by `to` (same length) in the bytes.
std::vector<std::uint8_t> patch(std::vector<std::uint8_t> b, const std::string& from, const std::string& to) {
  REQUIRE(from.size() == to.size());
  const std::string s(b.begin(), b.end());
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  std::copy(to.begin(), to.end(), b.begin() + static_cast<std::ptrdiff_t>(at));
  return b;
}

// A safetensors file laid out by hand: each tensor (name, dtype, shape as
// JSON, raw little-endian bytes) after the previous one in the buffer.
struct RawTensor {
  std::string name, dtype, shape, bytes;
};
std::vector<std::uint8_t> safetensors_by_hand(const std::vector<RawTensor>& tensors) {
  std::string header = "{", data;
  for (const auto& t : tensors) {
    header += (header.size() > 1 ? "," : "") + ("\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":" + t.shape +
              ",\"data_offsets\":[" + std::to_string(data.size()) + "," + std::to_string(data.size() + t.bytes.size()) + "]}");
    data += t.bytes;
  }
  header += "}";
  std::vector<std::uint8_t> out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>((header.size() >> (8 * i)) & 0xff));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// n-byte little-endian two's complement of v.
std::string le(std::int64_t v, int n) {
  std::string b;
  for (int i = 0; i < n; ++i) b += static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff);
  return b;
}

}  // namespace

TEST_CASE("independent-writer fixture: tensors, dtypes, metadata") {
  const auto f = read_safetensors(kFixture);
  CHECK(f.metadata.at("format") == "pt");
  REQUIRE(f.tensors.size() == 4);
  const auto& w1 = f.tensors.at("fc1.weight");
  CHECK(w1.dtype == "F32");
  CHECK(w1.shape == std::vector<std::int64_t>{3, 2});
  CHECK(w1.values == std::vector<double>{1.0, -2.0, 0.5, 0.25, -1.0, 1.0});
  const auto& b2 = f.tensors.at("fc2.bias");
  CHECK(b2.dtype == "F64");
  CHECK(b2.values == std::vector<double>{0.25, -0.125});
}

TEST_CASE("independent-writer half fixture: F16 and BF16 values are read exactly") {
  const auto f = read_safetensors(std::string(CTMC_FIXTURES_DIR) + "/tiny_mlp_half.safetensors");
  const auto& w1 = f.tensors.at("fc1.weight");
  CHECK(w1.dtype == "F16");
  CHECK(w1.values == std::vector<double>{1.0, -2.0, 0.5, 0.25, -1.0, 1.0});
  const auto& b2 = f.tensors.at("fc2.bias");
  CHECK(b2.dtype == "BF16");
  CHECK(b2.values == std::vector<double>{0.25, -0.125});
  // Edges: F16 largest finite, smallest subnormal, the binary16 nearest -1/3
  // and -0; BF16 smallest normal and subnormal (those of binary32 and 2^-133)
  // and largest finite.
  const auto& p16 = f.tensors.at("probe.f16").values;
  REQUIRE(p16.size() == 4);
  CHECK(p16[0] == 65504.0);
  CHECK(p16[1] == std::ldexp(1.0, -24));
  CHECK(p16[2] == -0.333251953125);
  CHECK(p16[3] == 0.0);
  CHECK(std::signbit(p16[3]));
  const auto& pb = f.tensors.at("probe.bf16").values;
  REQUIRE(pb.size() == 3);
  CHECK(pb[0] == std::ldexp(1.0, -126));
  CHECK(pb[1] == std::ldexp(1.0, -133));
  CHECK(pb[2] == -std::ldexp(255.0, 120));  // -(2 - 2^-7) 2^127
  // Half tensors are read, not written.
  SafetensorsFile out;
  out.tensors["x"] = f.tensors.at("probe.f16");
  CHECK_THROWS_WITH_AS(encode_safetensors("half_out.safetensors", out), doctest::Contains("only F32, F64 and I64 are written"),
                       InputError);
}

TEST_CASE("I64 tensors (BatchNorm's num_batches_tracked) are written and read back exactly; a fraction is refused") {
  SafetensorsFile out;
  out.tensors["bn.num_batches_tracked"] = Tensor{"I64", {}, {std::ldexp(1.0, 40) + 3}};
  out.tensors["idx"] = Tensor{"I64", {2}, {-7, 0}};
  TempDir dir;
  const auto path = (dir.path / "i64_out.safetensors").string();
  write_safetensors(path, out);
  const auto back = read_safetensors(path);
  CHECK(back.tensors.at("bn.num_batches_tracked").dtype == "I64");
  CHECK(back.tensors.at("bn.num_batches_tracked").shape.empty());
  CHECK(back.tensors.at("bn.num_batches_tracked").values == std::vector<double>{std::ldexp(1.0, 40) + 3});
  CHECK(back.tensors.at("idx").values == std::vector<double>{-7, 0});
  out.tensors["idx"].values[1] = 0.5;
  CHECK_THROWS_WITH_AS(encode_safetensors("frac.safetensors", out), doctest::Contains("not a whole number"), InputError);
}

TEST_CASE("a network saved in F16 and BF16 computes what its F32/F64 twin does") {
  const Mlp full = load_network(kManifest);
  const Mlp half = load_network(std::string(CTMC_FIXTURES_DIR) + "/tiny_mlp_half.json");
  Eigen::MatrixXf x(2, 3);
  x << 1, -1, 0.75, 2, 0.5, -3;
  const Eigen::MatrixXf a = full.forward(x), b = half.forward(x);
  CHECK(a == b);
}

TEST_CASE("manifest + fixture: the network computes the hand-derived logits") {
  const Mlp net = load_network(kManifest);
  REQUIRE(net.layers.size() == 2);
  CHECK(net.layers[0].W(2, 0) == -1.0f);  // [out, in] row-major -> W(out, in)
  CHECK(net.layers[0].W(0, 1) == -2.0f);
  Eigen::MatrixXf x(2, 2);
  x << 1, -1, 2, 0.5;  // columns (1, 2) and (-1, 0.5)
  // Column 1: z1 = (1-4+0.5, 0.5+0.5-1, -1+2) = (-2.5, 0, 1), relu -> (0, 0, 1),
  //           z2 = (-1 + 0.25, 3 - 0.125) = (-0.75, 2.875).
  // Column 2: z1 = (-1-1+0.5, -0.5+0.125-1, 1+0.5) = (-1.5, -1.375, 1.5) -> (0, 0, 1.5),
  //           z2 = (-1.5 + 0.25, 4.5 - 0.125) = (-1.25, 4.375); with clip K = 1: (0, 0, 1) -> (-0.75, 2.875).
  const Eigen::MatrixXf z = net.forward(x);
  CHECK(z(0, 0) == -0.75f);
  CHECK(z(1, 0) == 2.875f);
  CHECK(z(0, 1) == -1.25f);
  CHECK(z(1, 1) == 4.375f);
  const Eigen::MatrixXf zc = net.forward(x, 1.0f);
  CHECK(zc(0, 1) == -0.75f);
  CHECK(zc(1, 1) == 2.875f);
}

TEST_CASE("our writer round-trips, with an 8-byte aligned header") {
  TempDir t;
  const Mlp net = load_network(kManifest);
  const std::string out = (t.path / "copy.json").string();
  save_network(out, net, {{"k", 1}});
  nlohmann::json meta;
  const Mlp back = load_network(out, &meta);
  CHECK(meta["k"] == 1);
  for (std::size_t l = 0; l < 2; ++l) {
    CHECK(back.layers[l].W == net.layers[l].W);
    CHECK(back.layers[l].b == net.layers[l].b);
    CHECK(back.layers[l].activation == net.layers[l].activation);
  }
  const auto bytes = read_bytes((t.path / "copy.safetensors").string());
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[std::size_t(i)];
  CHECK(n % 8 == 0);
  SafetensorsFile f;
  f.tensors["x"] = Tensor{"F64", {2}, {0.1, -3.0}};
  write_safetensors((t.path / "x.safetensors").string(), f);
  CHECK(read_safetensors((t.path / "x.safetensors").string()).tensors.at("x").values == std::vector<double>{0.1, -3.0});
  f.tensors["x"].dtype = "I32";
  CHECK_THROWS_AS(write_safetensors((t.path / "y.safetensors").string(), f), InputError);
  CHECK(!fs::exists(t.path / "y.safetensors"));
}

TEST_CASE("malformed safetensors and manifests are InputErrors naming the file") {
  TempDir t;
  const auto good = read_bytes(kFixture);
  const std::string bad = (t.path / "bad.safetensors").string();
  auto expect = [&](const std::string& fragment) {
    CHECK_THROWS_WITH_AS(read_safetensors(bad), doctest::Contains(fragment.c_str()), InputError);
    CHECK_THROWS_WITH_AS(read_safetensors(bad), doctest::Contains(bad.c_str()), InputError);
  };
  write_bytes(bad, {good.begin(), good.end() - 4});
  expect("outside");  // last tensor runs past the truncated buffer
  write_bytes(bad, {good.begin(), good.begin() + 5});
  expect("no 8-byte header length");
  auto b = good;
  b[3] = 0x7f;  // header length far beyond the file
  write_bytes(bad, b);
  expect("exceeds the file");
  write_bytes(bad, patch(good, "{\"__metadata__\"", "[\"__metadata__\""));
  expect("malformed safetensors header JSON");
  write_bytes(bad, patch(good, "\"F64\"", "\"I32\""));
  expect("need");  // a readable dtype of another size: the byte span disagrees
  write_bytes(bad, patch(good, "[3, 2]", "[2, 2]"));
  expect("need");  // byte span disagrees with the shape
  b = good;
  b.push_back(0);
  write_bytes(bad, b);
  expect("unused bytes");
  write_bytes(bad, patch(good, "\"dtype\"", "\"dtypo\""));
  expect("needs dtype");

  // Manifest errors: shape mismatch, missing tensor, bad activation, missing weights file.
  fs::copy_file(kFixture, t.path / "tiny_mlp.safetensors");
  auto manifest = nlohmann::json::parse(std::ifstream(kManifest));
  const std::string mpath = (t.path / "net.json").string();
  auto try_manifest = [&](const nlohmann::json& m, const std::string& fragment) {
    std::ofstream(mpath) << m.dump();
    CHECK_THROWS_WITH_AS(load_network(mpath), doctest::Contains(fragment.c_str()), InputError);
  };
  auto m = manifest;
  m["layers"][0]["in"] = 3;
  try_manifest(m, "has shape [3, 2], the manifest says [3, 3]");
  m = manifest;
  m["layers"][1]["bias"] = "fc9.bias";
  try_manifest(m, "no tensor named 'fc9.bias'");
  // A tensor the manifest names, present in a dtype that is not read: the
  // error gives the dtype, not "no tensor named".
  write_bytes((t.path / "tiny_mlp.safetensors").string(), patch(good, "\"F64\"", "\"C64\""));
  try_manifest(manifest, "(named in the manifest) has dtype 'C64', which is not read");
  fs::copy_file(kFixture, t.path / "tiny_mlp.safetensors", fs::copy_options::overwrite_existing);
  m = manifest;
  m["layers"][0]["activation"] = "nosuch";
  try_manifest(m, "layer 1: activation: unknown activation 'nosuch'");  // numbered from 1
  try {  // a field of the manifest, not the --activation option
    load_network(mpath);
    FAIL("no error for activation 'nosuch'");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("--activation") == std::string::npos);
  }
  m = manifest;
  m["layers"][1]["activation"] = "relu";
  try_manifest(m, "must be \"linear\"");
  // Unknown keys are errors: ignored, a misspelt "bias" would read as a zero
  // bias, and stray top-level keys and versions would pass unnoticed.
  m = manifest;
  m["layers"][0]["bais"] = m["layers"][0]["bias"];
  m["layers"][0].erase("bias");
  try_manifest(m, "layer 1 (layers[0]): unknown key 'bais' (expected type, weight, bias, in, out, activation)");
  m = manifest;
  m["wieghts"] = "x.safetensors";
  try_manifest(m, "unknown key 'wieghts'");
  m = manifest;
  m["version"] = 99;
  try_manifest(m, "\"version\" 99 is not supported");
  m = manifest;
  m["weights"] = "absent.safetensors";
  try_manifest(m, "cannot open");
  m = manifest;
  m["layers"][0].erase("out");
  try_manifest(m, "needs \"out\"");
  std::ofstream(mpath) << "{\"layers\": [";
  CHECK_THROWS_WITH_AS(load_network(mpath), doctest::Contains((mpath + ": malformed JSON").c_str()), InputError);
}

TEST_CASE("a folder where a manifest or weights file should be is an InputError naming it") {
  // An ifstream opens a folder and its first read throws std::ios_base::failure
  // ("basic_filebuf::underflow ... Is a directory"): the CLI printed
  // "internal error" and exited 3 for --net DIR or "weights": ".".
  TempDir t;
  const std::string folder = (t.path / "sub").string();
  fs::create_directories(folder);
  CHECK_THROWS_WITH_AS(read_safetensors(folder), doctest::Contains((folder + ": is a folder, not a safetensors file").c_str()), InputError);
  CHECK_THROWS_WITH_AS(load_network(folder), doctest::Contains((folder + ": is a folder, not a network manifest").c_str()), InputError);
  auto m = nlohmann::json::parse(std::ifstream(kManifest));
  m["weights"] = "sub";
  const std::string mpath = (t.path / "net.json").string();
  std::ofstream(mpath) << m.dump();
  CHECK_THROWS_WITH_AS(load_network(mpath), doctest::Contains("sub: is a folder, not a safetensors file"), InputError);
}

TEST_CASE("safetensors shapes whose element count overflows are rejected") {
  TempDir t;
  const std::string bad = (t.path / "huge.safetensors").string();
  // A header only (empty data buffer), so a wrapped element count of 0 would
  // have matched the empty byte span.
  auto header_only = [&](const std::string& shape) {
    std::string h = "{\"x\":{\"dtype\":\"F32\",\"shape\":" + shape + ",\"data_offsets\":[0,0]}}";
    std::vector<std::uint8_t> b(8, 0);
    for (int i = 0; i < 8; ++i) b[std::size_t(i)] = static_cast<std::uint8_t>((h.size() >> (8 * i)) & 0xff);
    b.insert(b.end(), h.begin(), h.end());
    write_bytes(bad, b);
  };
  header_only("[1099511627776,1099511627776,1099511627776]");  // (2^40)^3 = 2^120: int64 wraps to 0
  CHECK_THROWS_WITH_AS(read_safetensors(bad), doctest::Contains("more than the 0-byte data buffer"), InputError);
  header_only("[9223372036854775808]");  // 2^63: negative as int64
  CHECK_THROWS_WITH_AS(read_safetensors(bad), doctest::Contains("implausible dimension"), InputError);
  header_only("[18446744073709551615,0]");
  CHECK_THROWS_WITH_AS(read_safetensors(bad), doctest::Contains(bad.c_str()), InputError);
  header_only("[0,7]");  // an empty tensor is fine
  CHECK(read_safetensors(bad).tensors.at("x").values.empty());
  // numel is checked too (the writer compares it with the values given).
  CHECK(Tensor{"F32", {std::int64_t(1) << 40, std::int64_t(1) << 40}, {}}.numel() == -1);
  CHECK(Tensor{"F32", {-1}, {}}.numel() == -1);
  CHECK(Tensor{"F32", {3, 0}, {}}.numel() == 0);
}

TEST_CASE("manifest in/out beyond INT_MAX are rejected, not truncated") {
  TempDir t;
  fs::copy_file(kFixture, t.path / "tiny_mlp.safetensors");
  auto m = nlohmann::json::parse(std::ifstream(kManifest));
  const std::string mpath = (t.path / "net.json").string();
  m["layers"][0]["in"] = 4294967298ULL;  // get<int>() would read 2, the true value
  std::ofstream(mpath) << m.dump();
  CHECK_THROWS_WITH_AS(load_network(mpath), doctest::Contains("\"in\" (a positive integer at most 2147483647)"), InputError);
  m["layers"][0]["in"] = 2;
  m["layers"][0]["out"] = 9223372036854775808ULL;
  std::ofstream(mpath) << m.dump();
  CHECK_THROWS_WITH_AS(load_network(mpath), doctest::Contains("\"out\""), InputError);
}

TEST_CASE("integer and BOOL tensors are read exactly; a tensor of a dtype not read is refused only where used") {
  TempDir t;
  const std::string f32 = [] {
    std::string b;
    for (float x : {0.25f, 0.5f, -1.0f, 3.0f}) b.append(reinterpret_cast<const char*>(&x), 4);
    return b;
  }();
  const std::string path = (t.path / "mixed.safetensors").string();
  write_bytes(path, safetensors_by_hand({
                        {"images", "F32", "[2,2]", f32},
                        {"labels", "I64", "[2]", le(1, 8) + le(0, 8)},  // PyTorch's labels are int64
                        {"idx", "I64", "[3]", le(-1, 8) + le(std::int64_t(1) << 40, 8) + le(-(std::int64_t(1) << 53), 8)},
                        {"u8", "U8", "[3]", le(0, 1) + le(7, 1) + le(255, 1)},
                        {"i32", "I32", "[2]", le(-5, 4) + le(100000, 4)},
                        {"i8", "I8", "[2]", le(-128, 1) + le(127, 1)},
                        {"u64", "U64", "[1]", le(-1, 8)},  // 2^64 - 1, rounded to 2^64
                        {"mask", "BOOL", "[3]", le(0, 1) + le(1, 1) + le(2, 1)},
                        {"cplx", "C64", "[1]", le(0, 8)},
                        {"novel", "X9", "[3]", std::string(5, '\0')},  // a dtype unknown here: its size too
                    }));
  const SafetensorsFile f = read_safetensors(path);
  CHECK(f.tensors.at("labels").values == std::vector<double>{1, 0});
  CHECK(f.tensors.at("idx").values == std::vector<double>{-1, std::ldexp(1.0, 40), -std::ldexp(1.0, 53)});
  CHECK(f.tensors.at("u8").values == std::vector<double>{0, 7, 255});
  CHECK(f.tensors.at("i32").values == std::vector<double>{-5, 100000});
  CHECK(f.tensors.at("i8").values == std::vector<double>{-128, 127});
  CHECK(f.tensors.at("u64").values == std::vector<double>{std::ldexp(1.0, 64)});
  CHECK(f.tensors.at("mask").values == std::vector<double>{0, 1, 1});
  CHECK(f.tensors.at("images").values == std::vector<double>{0.25, 0.5, -1.0, 3.0});
  CHECK(f.tensors.count("cplx") == 0);
  CHECK(f.unusable.count("cplx") == 1);
  CHECK(f.unusable.count("novel") == 1);

  // Labels where labels are expected: the int64 tensor is a data set's labels.
  DataSource src;
  src.test_images = path + ":images";
  src.test_labels = path + ":labels";
  const DatasetSplit d = load_data(src);
  CHECK(d.test.labels == std::vector<int>{1, 0});
  CHECK(d.test.images(1, 1) == 3.0f);
  // The tensor that is used and unusable is refused, naming it and its dtype.
  CHECK_THROWS_WITH_AS(read_tensor_input(path + ":cplx", "test_images"), doctest::Contains("tensor 'cplx' has dtype 'C64'"),
                       InputError);
  CHECK_THROWS_WITH_AS(read_tensor_input(path + ":novel", "test_images"), doctest::Contains("'X9'"), InputError);
  CHECK_THROWS_WITH_AS(read_tensor_input(path + ":nothing", "test_images"), doctest::Contains("has no tensor 'nothing'"),
                       InputError);
  // A dtype of known size whose byte span disagrees is still a malformed file.
  write_bytes(path, safetensors_by_hand({{"labels", "I64", "[1]", le(1, 8) + le(0, 8)}}));
  CHECK_THROWS_WITH_AS(read_safetensors(path), doctest::Contains("spans 16 bytes but its shape and dtype need 8"), InputError);
}
