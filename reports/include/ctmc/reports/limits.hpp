// Limits on command options, the same for the CLI and the Python module.
#pragma once

namespace ctmc::reports {

// The most threads any command runs: --threads is refused above it, and the
// OpenMP default taken from OMP_NUM_THREADS is cut down to it at start-up;
// libgomp crashes (SIGSEGV) when asked for 100000 threads.
inline constexpr int kMaxThreads = 1024;

}  // namespace ctmc::reports
