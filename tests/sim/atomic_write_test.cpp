// All-or-nothing output (atomic_write.hpp) through the writers that use it:
// a failed write is an InputError naming the file (exit 2), leaves no
// temporary file, and never installs part of a multi-file output.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

#include "input_error_check.hpp"
#include "ctmc/sim/atomic_write.hpp"
#include "ctmc/sim/idx.hpp"
#include "ctmc/sim/manifest.hpp"
#include "ctmc/sim/safetensors.hpp"
#include "ctmc/solvers/errors.hpp"

namespace fs = std::filesystem;
using ctmc::InputError;
using namespace ctmc::sim;
using ctmc::sim::testing::check_input_error;

namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("ctmc_atomic_" + std::to_string(::getpid()));
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Names in dir ending in ".tmp" (left-over temporary or moved-aside files).
int tmp_files(const fs::path& dir, const fs::path& except = {}) {
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().extension() == ".tmp" && e.path() != except) ++n;
  return n;
}


Mlp tiny_net() {
  Mlp net;
  DenseLayer d;
  d.W = Eigen::MatrixXf::Constant(2, 3, 0.5f);
  d.b = Eigen::VectorXf::Zero(2);
  d.activation = "linear";
  net.layers.push_back(d);
  return net;
}

Dataset tiny_data() {
  Dataset d;
  d.rows = 1;
  d.cols = 2;
  d.images = Eigen::MatrixXf::Constant(2, 3, 0.5f);
  d.labels = {0, 1, 2};
  return d;
}

}  // namespace

TEST_CASE("a write error seen only when the stream is flushed is an InputError, nothing installed") {
  // /dev/full accepts open() and buffered writes and fails at flush: the
  // temporary file is a link to it, so only the flush/close check sees the error.
  if (!fs::exists("/dev/full")) return;
  TempDir t;
  const std::string out = (t.path / "w.safetensors").string();
  fs::create_symlink("/dev/full", out + ".tmp");
  SafetensorsFile f;
  f.tensors["x"] = Tensor{"F32", {2}, {1.0, 2.0}};
  check_input_error([&] { write_safetensors(out, f); }, out, "write failed");
  CHECK(!fs::exists(fs::symlink_status(out)));
  CHECK(!fs::exists(fs::symlink_status(out + ".tmp")));

  const std::string idx = (t.path / "a.idx").string();
  fs::create_symlink("/dev/full", idx + ".tmp");
  IdxArray a;
  a.dims = {2};
  a.data = {1, 2};
  check_input_error([&] { write_idx(idx, a); }, idx, "write failed");
  CHECK(!fs::exists(fs::symlink_status(idx)));

  const std::string m = (t.path / "n.json").string();
  fs::create_symlink("/dev/full", m + ".tmp");
  check_input_error([&] { save_network(m, tiny_net()); }, m, "write failed");
  CHECK(!fs::exists(t.path / "n.safetensors"));  // the weights were not installed either
  CHECK(tmp_files(t.path) == 0);
}

TEST_CASE("save_network: weights and manifest together or not at all") {
  TempDir t;
  const fs::path m = t.path / "n.json", w = t.path / "n.safetensors";
  std::ofstream(m) << "old manifest";
  std::ofstream(w) << "old weights";

  SUBCASE("the manifest's temporary file cannot be opened") {
    fs::create_directories(t.path / "n.json.tmp" / "x");
    check_input_error([&] { save_network(m.string(), tiny_net()); }, m.string(), "cannot open");
    CHECK(fs::is_directory(t.path / "n.json.tmp"));  // not ours: left alone
    CHECK(tmp_files(t.path, t.path / "n.json.tmp") == 0);
  }
  SUBCASE("no copy of the old manifest can be kept after the weights were installed: rolled back") {
    fs::create_directories(t.path / "n.json.bak.tmp" / "x");
    check_input_error([&] { save_network(m.string(), tiny_net()); }, m.string(), "cannot keep a copy of the existing file");
    CHECK(tmp_files(t.path, t.path / "n.json.bak.tmp") == 0);
  }
  CHECK(slurp(m) == "old manifest");
  CHECK(slurp(w) == "old weights");
}

TEST_CASE("save_network replaces both files and leaves nothing behind") {
  TempDir t;
  const fs::path m = t.path / "n.json";
  std::ofstream(m) << "old manifest";
  std::ofstream(t.path / "n.safetensors") << "old weights";
  save_network(m.string(), tiny_net());
  CHECK(load_network(m.string()).layers[0].W == tiny_net().layers[0].W);
  CHECK(tmp_files(t.path) == 0);
}

TEST_CASE("filesystem failures are InputErrors naming the path, not filesystem_error") {
  TempDir t;
  std::ofstream(t.path / "file") << "x";
  // The output folder cannot be created: a regular file is in the way.
  const std::string m = (t.path / "file" / "sub" / "n.json").string();
  check_input_error([&] { save_network(m, tiny_net()); }, (t.path / "file" / "sub" / "n.safetensors").string(), "cannot create folder");
  const std::string im = (t.path / "file" / "im").string();
  check_input_error([&] { write_idx_pair(im, (t.path / "lb").string(), tiny_data()); }, im, "cannot create folder");
  // The target is a folder: nothing is renamed over it.
  fs::create_directories(t.path / "st" / "keep");
  const std::string st = (t.path / "st").string();
  SafetensorsFile f;
  f.tensors["x"] = Tensor{"F32", {1}, {1.0}};
  check_input_error([&] { write_safetensors(st, f); }, st, "is a directory");
  CHECK(fs::is_directory(t.path / "st" / "keep"));
  // The second file of a pair fails: the first is not installed.
  fs::create_directories(t.path / "lb" / "keep");
  const std::string im2 = (t.path / "im").string(), lb = (t.path / "lb").string();
  check_input_error([&] { write_idx_pair(im2, lb, tiny_data()); }, lb, "is a directory");
  CHECK(!fs::exists(im2));
  CHECK(tmp_files(t.path) == 0);
}
