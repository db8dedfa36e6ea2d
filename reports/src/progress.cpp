#include "progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace ctmc::reports {

namespace {
std::string duration_text(double s) {
  if (s < 60) return fmt::format("{:.0f}s", s);
  if (s < 3600) return fmt::format("{:.0f}m{:02.0f}s", std::floor(s / 60), std::fmod(s, 60));
  return fmt::format("{:.0f}h{:02.0f}m", std::floor(s / 3600), std::fmod(s / 60, 60));
}
}  // namespace

Progress::Progress(std::string name) : name_(std::move(name)), tty_(isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() { done(); }

void Progress::phase(const std::string& what, std::size_t total) {
  std::lock_guard<std::mutex> lock(mutex_);
  what_ = what;
  done_ = 0;
  total_ = total;
  start_ = std::chrono::steady_clock::now();
  draw();
}

void Progress::step() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  draw();
}

void Progress::done() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (tty_ && drawn_) std::fputs("\r\033[K", stderr);
  drawn_ = false;
}

void Progress::draw() {
  if (!tty_) return;
  std::string line = fmt::format("{}: {} {}/{}", name_, what_, done_, total_);
  if (done_ > 0 && done_ < total_) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    line += fmt::format(", {} left", duration_text(elapsed / double(done_) * double(total_ - done_)));
  }
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace ctmc::reports
