// Limits on command options, the same for the CLI and the Python module.
#pragma once
#include <fmt/format.h>

#include "ctmc/core/errors.hpp"

namespace ctmc::commands {

// The most threads any command runs: --threads is refused above it, and the
// OpenMP default taken from OMP_NUM_THREADS is cut down to it at start-up;
// libgomp crashes (SIGSEGV) when asked for 100000 threads.
inline constexpr int kMaxThreads = 1024;

// A thread count as the commands take it (0: all cores): the one check of it,
// for every command, the CLI's option parser and the Python module.
// InputError("threads", ...) outside 0..kMaxThreads.
inline int checked_threads(int threads) {
  if (threads < 0 || threads > kMaxThreads)
    throw InputError("threads", fmt::format("need 0..{} (0: all cores), got {}", kMaxThreads, threads));
  return threads;
}

}  // namespace ctmc::commands
