// CPU time of the calling thread: the machines these benchmarks run on are
// often shared, and "per core" means per CPU-second actually received, not
// wall time.
#pragma once
#include <time.h>

inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
