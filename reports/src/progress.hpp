// Progress of a long report on a terminal: one status line on stderr,
// rewritten in place ("report fits: certificates 12/50, 1m20s left"), only
// when stderr is a terminal; quiet otherwise (logs, CI, pipes). Internal
// header of reports (not installed), included as "progress.hpp".
#pragma once
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace ctmc::reports {

class Progress {
 public:
  explicit Progress(std::string name);
  ~Progress();
  // A new phase of `total` steps (its time left is estimated from its own pace).
  void phase(const std::string& what, std::size_t total);
  void step();  // thread-safe
  void done();  // ends the line

 private:
  void draw();
  std::string name_, what_;
  std::size_t done_ = 0, total_ = 0;
  std::chrono::steady_clock::time_point start_;
  bool tty_ = false, drawn_ = false;
  std::mutex mutex_;
};

}  // namespace ctmc::reports
