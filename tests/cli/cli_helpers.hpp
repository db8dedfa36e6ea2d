#pragma once
// Shared by the end-to-end tests: run the ctmc-snn executable and capture its
// exit status and output; a per-process temporary folder removed at exit.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
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

inline std::string fixture(const std::string& name) { return std::string(CTMC_FIXTURES_DIR) + "/" + name; }

}  // namespace ctmc_cli_test
