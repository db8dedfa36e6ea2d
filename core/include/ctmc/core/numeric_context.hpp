// Scoped numeric settings. The working precision of Boost's Mpfr and
// Interval numbers (what a newly created value gets, scalar.hpp) is a
// setting of the thread (Boost 1.81 keeps one default precision per thread);
// OpenMP's thread count for the next parallel region is one too; Eigen's
// thread count for its own parallel matrix products is one of the process.
// Library code that needs another value changes them only through these
// scopes, which restore the previous value (exactly: Boost's digit counts,
// OpenMP's nthreads-var, Eigen's fixed count or its following OpenMP's) when
// they end, so no library function leaves a setting changed.
// PrecisionScope is the only setter of the working precision: programs and
// tests open one for as long as they need a precision, on the thread that
// computes. Computations on several threads at once may each hold their own
// precision; a thread that has opened no scope works at Boost's default (50
// decimal digits), so work handed to other threads opens its own scope there.
// An operation's result takes the largest precision of its operands and the
// thread's working precision (Boost's preserve_related_precision); copies
// keep their source's precision.
#pragma once
#include <omp.h>  // ThreadScope, EigenThreadScope: their users link OpenMP (OpenMP::OpenMP_CXX)

#include <Eigen/Core>

namespace ctmc {

// Mpfr and Interval values this thread creates during the scope's lifetime
// get at least `bits` bits (precision_bits() says how many exactly: Boost
// counts precision in decimal digits, so it may be one or two bits more).
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

// The actual bits of Mpfr values created now.
unsigned precision_bits();

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

// Eigen's thread setting: the count fixed by Eigen::setNbThreads, or 0 while
// Eigen follows OpenMP's count (its default: Eigen::nbThreads() is then
// omp_get_max_threads()). Where the two counts agree, one more OpenMP thread
// for a moment tells which it is (OpenMP's count is restored exactly, as by
// ThreadScope); called outside parallel regions. Eigen::setNbThreads(0)
// returns Eigen to following OpenMP.
inline int eigen_thread_setting() {
  const int omp = omp_get_max_threads();
  const int eigen = Eigen::nbThreads();
  if (eigen != omp) return eigen;
  omp_set_num_threads(omp + 1);
  const bool follows_openmp = Eigen::nbThreads() == omp + 1;
  omp_set_num_threads(omp);
  return follows_openmp ? 0 : eigen;
}

// Eigen's own parallel products (Eigen::nbThreads) use `threads` threads
// during the scope's lifetime; threads <= 0 keeps the current setting. The
// previous setting (eigen_thread_setting) is restored when the scope ends.
// Opened inside an active parallel region it changes nothing: the setting is
// process-wide, and Eigen starts no threads of its own there.
class EigenThreadScope {
 public:
  explicit EigenThreadScope(int threads)
      : active_(threads > 0 && !omp_in_parallel()), saved_(active_ ? eigen_thread_setting() : 0) {
    if (active_) Eigen::setNbThreads(threads);
  }
  ~EigenThreadScope() {
    if (active_) Eigen::setNbThreads(saved_);
  }
  EigenThreadScope(const EigenThreadScope&) = delete;
  EigenThreadScope& operator=(const EigenThreadScope&) = delete;

 private:
  bool active_;
  int saved_;
};

}  // namespace ctmc
