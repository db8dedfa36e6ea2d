// All-or-nothing output (atomic_write.hpp) through the writers that use it:
// a failed write is an InputError naming the file (exit 2), leaves no
// temporary file, and never installs part of a multi-file output.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "input_error_check.hpp"
#include "ctmc/sim/formats/atomic_write.hpp"
#include "failure_hook.hpp"  // io/src (internal): the writer's test seam
#include "ctmc/sim/formats/idx.hpp"
#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/sim/formats/safetensors.hpp"
#include "ctmc/core/errors.hpp"

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

// The writer's temporaries and kept copies left in dir: "<name>.tmp.<pid>.<hex>"
// and "<name>.bak.<pid>.<hex>".
int tmp_files(const fs::path& dir) {
  static const std::regex ours(R"(.*\.(tmp|bak)\.[0-9]+\.[0-9a-f]{8})");
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) n += std::regex_match(e.path().filename().string(), ours);
  return n;
}

// Files may grow to at most `bytes` while it lives (a write beyond fails with
// EFBIG, SIGXFSZ ignored): a real write failure without a full disk.
struct FileSizeLimit {
  rlimit saved{};
  void (*saved_handler)(int);
  explicit FileSizeLimit(rlim_t bytes) {
    saved_handler = std::signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &saved);
    rlimit r = saved;
    r.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &r);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, saved_handler);
  }
};

// Fails the writer's step `Step` for targets whose name ends in `Suffix`.
struct Injected {
  static inline std::string step, suffix;
  Injected(std::string st, std::string su) {
    step = std::move(st);
    suffix = std::move(su);
    ctmc::io::detail::set_failure_hook([](const std::string& s, const std::string& path) {
      return s == step && path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
    });
  }
  ~Injected() { ctmc::io::detail::set_failure_hook(nullptr); }
};


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

TEST_CASE("a failed write is an InputError, nothing installed, no temporary left") {
  TempDir t;
  // Files may not grow past 64 bytes: every file below is longer.
  FileSizeLimit limit(64);
  const std::string out = (t.path / "w.safetensors").string();
  SafetensorsFile f;
  f.tensors["x"] = Tensor{"F32", {32}, std::vector<double>(32, 1.0)};
  check_input_error([&] { write_safetensors(out, f); }, out, "cannot write (File too large)");
  CHECK(!fs::exists(fs::symlink_status(out)));

  const std::string idx = (t.path / "a.idx").string();
  IdxArray a;
  a.dims = {100};
  a.data.assign(100, 1);
  check_input_error([&] { write_idx(idx, a); }, idx, "cannot write (File too large)");
  CHECK(!fs::exists(fs::symlink_status(idx)));

  const std::string m = (t.path / "n.json").string();
  check_input_error([&] { save_network(m, tiny_net()); }, (t.path / "n.safetensors").string(), "cannot write (File too large)");
  CHECK(!fs::exists(t.path / "n.safetensors"));  // neither file was installed
  CHECK(!fs::exists(m));
  CHECK(tmp_files(t.path) == 0);
}

TEST_CASE("files of the user's named like the old temporaries are left alone") {
  TempDir t;
  const fs::path m = t.path / "n.json";
  std::ofstream(t.path / "n.json.tmp") << "user's file";
  std::ofstream(t.path / "n.json.bak.tmp") << "another";
  std::ofstream(m) << "old manifest";
  save_network(m.string(), tiny_net());
  CHECK(slurp(t.path / "n.json.tmp") == "user's file");
  CHECK(slurp(t.path / "n.json.bak.tmp") == "another");
  CHECK(load_network(m.string()).layers[0].W == tiny_net().layers[0].W);
  CHECK(tmp_files(t.path) == 0);
}

TEST_CASE("save_network: weights and manifest together or not at all") {
  TempDir t;
  const fs::path m = t.path / "n.json", w = t.path / "n.safetensors";
  std::ofstream(m) << "old manifest";
  std::ofstream(w) << "old weights";

  SUBCASE("the manifest's temporary file cannot be created") {
    Injected fail("temporary", "n.json");
    check_input_error([&] { save_network(m.string(), tiny_net()); }, m.string(), "cannot create a temporary file");
    CHECK(tmp_files(t.path) == 0);
  }
  SUBCASE("no copy of the old manifest can be kept after the weights were installed: rolled back") {
    Injected fail("copy", "n.json");
    check_input_error([&] { save_network(m.string(), tiny_net()); }, m.string(), "cannot keep a copy of the existing file");
    CHECK(tmp_files(t.path) == 0);
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
  check_input_error([&] { write_safetensors(st, f); }, st, "is a folder, not a file");
  CHECK(fs::is_directory(t.path / "st" / "keep"));
  // The second file of a pair fails: the first is not installed.
  fs::create_directories(t.path / "lb" / "keep");
  const std::string im2 = (t.path / "im").string(), lb = (t.path / "lb").string();
  check_input_error([&] { write_idx_pair(im2, lb, tiny_data()); }, lb, "is a folder, not a file");
  CHECK(!fs::exists(im2));
  CHECK(tmp_files(t.path) == 0);
}

namespace {
Mlp other_net() {
  Mlp net = tiny_net();
  net.layers[0].W(0, 0) = -2.0f;
  return net;
}
}  // namespace

TEST_CASE("save_network: a kill between the two renames leaves a mix that load_network refuses, naming both files") {
  TempDir t;
  const fs::path m = t.path / "n.json", w = t.path / "n.safetensors";
  save_network(m.string(), tiny_net());
  // A child writes another network and is killed (here: _exit) after the
  // weights were renamed into place, before the manifest is: the step that
  // keeps a copy of the old manifest comes right before its rename.
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ctmc::io::detail::set_failure_hook([](const std::string& step, const std::string& path) -> bool {
      if (step == "copy" && path.size() >= 6 && path.compare(path.size() - 6, 6, "n.json") == 0) ::_exit(0);
      return false;
    });
    try {
      save_network(m.string(), other_net());
    } catch (...) {
    }
    ::_exit(1);  // not reached when the hook ran
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  // New weights beside the old manifest: refused, both files named.
  try {
    load_network(m.string());
    FAIL("the mix was accepted");
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK_MESSAGE(msg.rfind(m.string() + ": ", 0) == 0, msg);
    CHECK_MESSAGE(msg.find(w.string()) != std::string::npos, msg);
    CHECK_MESSAGE(msg.find("weights_sha256") != std::string::npos, msg);
    CHECK(msg.find('\n') == std::string::npos);
  }
  // The killed run's temporary and kept copy are recognisably ours, and the
  // next successful write of the same output removes them.
  CHECK(tmp_files(t.path) == 2);
  save_network(m.string(), other_net());
  CHECK(tmp_files(t.path) == 0);
  CHECK(load_network(m.string()).layers[0].W == other_net().layers[0].W);
}

TEST_CASE("load_network: weights_sha256 is optional, and checked when present") {
  TempDir t;
  const fs::path m = t.path / "n.json";
  save_network(m.string(), tiny_net());
  nlohmann::json j = nlohmann::json::parse(slurp(m));
  REQUIRE(j.contains("weights_sha256"));
  // A hand-written manifest (PyTorch weights) has no hash: accepted.
  j.erase("weights_sha256");
  std::ofstream(m) << j.dump();
  CHECK(load_network(m.string()).layers[0].W == tiny_net().layers[0].W);
  // Not 64 hex digits: refused naming the key.
  j["weights_sha256"] = "abc";
  std::ofstream(m) << j.dump();
  check_input_error([&] { load_network(m.string()); }, m.string(), "\"weights_sha256\" must be 64 lower-case hex digits");
  j["weights_sha256"] = std::string(64, '0');
  std::ofstream(m) << j.dump();
  check_input_error([&] { load_network(m.string()); }, m.string(), "is not the one this manifest was written with");
}
