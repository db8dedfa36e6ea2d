// Input files written by the analysis tests go to one temporary folder per
// test process (removed at exit), never into the working directory.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ctmc::analysis::testing {

inline std::string write_temp_file(const std::string& name, const std::string& body) {
  namespace fs = std::filesystem;
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("ctmc_analysis_test_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  static const struct Cleanup {
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup;
  const fs::path p = dir / name;
  std::ofstream(p, std::ios::binary) << body;
  return p.string();
}

}  // namespace ctmc::analysis::testing
