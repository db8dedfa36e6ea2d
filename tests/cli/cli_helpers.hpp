#pragma once
// Shared by the end-to-end tests: run the ctmc-snn executable and capture its
// exit status and output; a per-process temporary folder removed at exit.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "../test_temp_files.hpp"

namespace ctmc_cli_test {

namespace fs = std::filesystem;

struct RunResult {
  int status = -1;
  std::string output;  // stdout and stderr together
};

// `shell_prefix` runs before the command in the same shell (e.g. "ulimit -v N; ").
inline RunResult run_cli(const std::string& args, const std::string& shell_prefix = "") {
  const std::string cmd = shell_prefix + "\"" + CTMC_CLI_PATH + "\" " + args + " 2>&1";
  RunResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

// The per-process temporary folder (removed at exit) and files in it.
using ctmc::testing::temp_dir;
inline std::string write_file(const std::string& name, const std::string& text) {
  return ctmc::testing::write_temp_file(name, text);
}

// A file's bytes ("" when it cannot be read).
inline std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline std::string fixture(const std::string& name) { return std::string(CTMC_FIXTURES_DIR) + "/" + name; }

// A data folder of the four IDX files (raw bytes given), under temp_dir().
inline fs::path write_idx_dir(const std::string& name, const std::string& train_img, const std::string& train_lab,
                              const std::string& test_img, const std::string& test_lab) {
  const auto dir = temp_dir() / name;
  fs::create_directories(dir);
  std::ofstream(dir / "train-images-idx3-ubyte", std::ios::binary) << train_img;
  std::ofstream(dir / "train-labels-idx1-ubyte", std::ios::binary) << train_lab;
  std::ofstream(dir / "t10k-images-idx3-ubyte", std::ios::binary) << test_img;
  std::ofstream(dir / "t10k-labels-idx1-ubyte", std::ios::binary) << test_lab;
  return dir;
}

// IDX bytes: `pixels.size() / (rows * cols)` images (magic 0x0803), and labels (0x0801).
inline std::string idx_images(const std::string& pixels, unsigned rows, unsigned cols) {
  const auto be32 = [](std::uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                       static_cast<char>(v)};
  };
  return std::string("\x00\x00\x08\x03", 4) + be32(static_cast<std::uint32_t>(pixels.size() / (rows * cols))) +
         be32(rows) + be32(cols) + pixels;
}
inline std::string idx_labels(const std::string& labels) {
  const auto n = static_cast<std::uint32_t>(labels.size());
  return std::string("\x00\x00\x08\x01", 4) +
         std::string{static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                     static_cast<char>(n)} +
         labels;
}

// The command a report printed under "# <what>" in its report.md (the
// reports' reproduction blocks).
inline std::string printed_command(const std::string& report, const std::string& what) {
  const std::string key = "# " + what + "\n";
  const auto at = report.find(key);
  REQUIRE_MESSAGE(at != std::string::npos, what);
  const auto start = at + key.size();
  return report.substr(start, report.find('\n', start) - start);
}

}  // namespace ctmc_cli_test
