// Exceptions inside OpenMP parallel loops. An exception may not leave an
// OpenMP structured block (it would call std::terminate: exit 134 instead of
// the InputError's exit 2), so each iteration runs inside LoopErrors::run,
// which keeps the exception of the lowest iteration index -- the one a serial
// loop would have thrown first, so the message does not depend on the thread
// count or the schedule -- and rethrow() raises it after the loop.
// Iterations after a failure still run (OpenMP loops cannot be left early);
// skip() lets costly ones return at once, and the error is unaffected because
// only later indices are skipped.
#pragma once
#include <atomic>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>

namespace ctmc {

class LoopErrors {
 public:
  template <class F>
  void run(std::int64_t i, F&& f) noexcept {
    if (skip(i)) return;
    try {
      f();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (i < first_.load(std::memory_order_relaxed)) {
        first_.store(i, std::memory_order_relaxed);
        error_ = std::current_exception();
      }
    }
  }
  // True when an earlier iteration already failed.
  bool skip(std::int64_t i) const noexcept { return i > first_.load(std::memory_order_relaxed); }
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::atomic<std::int64_t> first_{std::numeric_limits<std::int64_t>::max()};
  std::exception_ptr error_;
};

}  // namespace ctmc
