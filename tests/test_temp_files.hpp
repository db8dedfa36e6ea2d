// Files written by the tests go to one temporary folder per test process
// (removed at exit), never into the working directory. Shared by the analysis
// and CLI tests.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ctmc::testing {

inline const std::filesystem::path& temp_dir() {
  namespace fs = std::filesystem;
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("ctmc_test_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  static const struct Cleanup {
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup;
  return dir;
}

inline std::string write_temp_file(const std::string& name, const std::string& body) {
  const auto p = temp_dir() / name;
  std::ofstream(p, std::ios::binary) << body;
  return p.string();
}

}  // namespace ctmc::testing
