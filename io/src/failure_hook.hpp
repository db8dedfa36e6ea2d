// Internal header of io (not installed): the test seam of the all-or-nothing
// writer (ctmc/io/atomic_write.hpp). The io library and the tests that drive
// its failure paths include it as "failure_hook.hpp" (tests/CMakeLists.txt
// gives them io/src).
#pragma once
#include <string>

namespace ctmc::io {

namespace detail {
// Test seam for the failure paths, whose files have unpredictable names: when
// set, write_files_atomically calls it before creating a file's temporary
// (step "temporary"), before keeping a copy of an existing target (step
// "copy") and before each rename (step "rename"); true makes that step fail
// as if the system call had (EIO). Tests only (not thread-safe); nullptr
// turns it off.
using FailureHook = bool (*)(const std::string& step, const std::string& path);
void set_failure_hook(FailureHook hook);
}  // namespace detail

}  // namespace ctmc::io
