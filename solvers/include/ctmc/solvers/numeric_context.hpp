// Scoped numeric settings. Two settings of the process are global: the
// default precision of Boost's Mpfr and Interval numbers (what a newly
// created value gets, scalar.hpp) and OpenMP's thread count for the next
// parallel region. Library code that needs another value changes them only
// through these scopes, which restore the previous value (exactly: Boost's
// digit counts, OpenMP's nthreads-var) when they end, so no library function
// leaves a setting changed. Programs (main, tests) may set the process's
// defaults once with set_precision_bits / omp_set_num_threads.
//
// Both settings are process-wide (Boost 1.74 keeps one default precision, not
// one per thread), so a scope is opened on the thread that runs the
// computation and not while other threads create Mpfr values.
#pragma once
#include <omp.h>  // ThreadScope: its users link OpenMP (OpenMP::OpenMP_CXX)

namespace ctmc::solvers {

// Mpfr and Interval values created during the scope's lifetime get at least
// `bits` bits (precision_bits() says how many exactly).
class PrecisionScope {
 public:
  explicit PrecisionScope(unsigned bits);
  ~PrecisionScope();
  PrecisionScope(const PrecisionScope&) = delete;
  PrecisionScope& operator=(const PrecisionScope&) = delete;

 private:
  unsigned mpfr_digits10_;
  unsigned interval_digits10_;
};

// The precision_bits() that PrecisionScope(bits) gives (Boost rounds up to
// whole decimal digits), without leaving it set.
unsigned scoped_precision_bits(unsigned bits);

// Parallel regions started during the scope's lifetime use `threads`
// threads; threads <= 0 keeps the current count.
class ThreadScope {
 public:
  explicit ThreadScope(int threads) : saved_(omp_get_max_threads()) {
    if (threads > 0) omp_set_num_threads(threads);
  }
  ~ThreadScope() { omp_set_num_threads(saved_); }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int saved_;
};

}  // namespace ctmc::solvers
