// Exact decimal parsing and printing benchmark: a rate "0.000...1" with a
// million zeros after the point (a 1 MB model value). parse_exact forms the
// power of ten by GMP powering and exact_text divides out the powers of 2 and
// 5 in one step each, so both are close to linear in the digit count; a
// per-digit loop would be quadratic (minutes for a 3 MB value). Target: well
// under a second for both together on one core.
#include <fmt/format.h>

#include <chrono>
#include <string>

#include "ctmc/solvers/exact.hpp"

int main() {
  using ctmc::solvers::exact_text;
  using ctmc::solvers::parse_exact;
  for (std::size_t zeros : {10000u, 100000u, 1000000u}) {
    const std::string text = "0." + std::string(zeros, '0') + "1";
    const auto t0 = std::chrono::steady_clock::now();
    const auto q = parse_exact(text);
    const auto t1 = std::chrono::steady_clock::now();
    const std::string back = q ? exact_text(*q) : std::string();
    const auto t2 = std::chrono::steady_clock::now();
    fmt::print("{:>8} zeros: parse_exact {:.3f} s, exact_text {:.3f} s ({} characters)\n", zeros,
               std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count(),
               back.size());
  }
}
