// Shared by the sim reader/writer tests: f must throw a one-line InputError
// that starts with the file's name and contains `fragment`.
#pragma once
#include <doctest/doctest.h>

#include <string>

#include "ctmc/core/errors.hpp"

namespace ctmc::sim::testing {

template <class F>
void check_input_error(F&& f, const std::string& file, const std::string& fragment) {
  try {
    f();
    FAIL("no InputError for " << file);
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK_MESSAGE(msg.rfind(file, 0) == 0, msg);
    CHECK_MESSAGE(msg.find(fragment) != std::string::npos, msg);
    CHECK(msg.find('\n') == std::string::npos);
  }
}

}  // namespace ctmc::sim::testing
