// Shared by the libFuzzer targets of tests/fuzz (README "Fuzzing and
// sanitizers"). Every reader takes a path, so each run writes the input to a
// file in a folder private to the process (removed at exit) and calls the
// public reader on it.
//
// Expected rejection: ctmc::InputError (the project's "bad input, exit 2").
// Anything else that leaves a reader -- another exception, which the CLI
// turns into "internal error" (exit 3) -- is a finding: reject_only() prints
// it and aborts, so libFuzzer saves the input as a crash artifact. Crashes,
// leaks, out-of-memory, timeouts and sanitizer reports are findings through
// libFuzzer and the sanitizers themselves.
#pragma once
#include <cxxabi.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <typeinfo>

#include "ctmc/core/errors.hpp"

namespace ctmc::fuzz {

inline const std::filesystem::path& work_dir() {
  namespace fs = std::filesystem;
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("ctmc_fuzz_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  static const struct Cleanup {
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup;
  return dir;
}

// Writes bytes to work_dir()/name (replacing it) and returns the path.
inline std::string write_file(const std::string& name, const std::uint8_t* data, std::size_t size) {
  const std::string path = (work_dir() / name).string();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::perror(path.c_str());
    std::abort();
  }
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

inline std::string write_file(const std::string& name, const std::string& text) {
  return write_file(name, reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
}

// A check of the target itself (e.g. a round trip) that does not hold.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "FUZZ FINDING: %s\n", what.c_str());
  std::abort();
}

// Runs f; an InputError is the expected rejection (returns false), any other
// exception is a finding.
template <class F>
bool reject_only(const char* what, F&& f) {
  try {
    f();
    return true;
  } catch (const ctmc::InputError&) {
    return false;
  } catch (const std::exception& e) {
    int status = 0;
    char* type = abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status);
    const std::string name = status == 0 && type ? type : typeid(e).name();
    std::free(type);
    finding(std::string(what) + ": unexpected " + name + ": " + e.what());
  } catch (...) {
    finding(std::string(what) + ": unexpected non-std exception");
  }
}

}  // namespace ctmc::fuzz
