// Subcommand registration for the ctmc-snn executable. Each cli/*.cpp defines
// a static `Register` whose function adds its subcommand(s) to the root app;
// the CLI stays thin: option parsing here, logic in the libraries.
//
// Exit statuses (DESIGN.md section 9): 0 ran and every check held; 1 a check
// failed (throw ExitStatus{1} or ctmc::CheckFailed); 2 bad usage or input
// (throw ctmc::InputError with a one-line message naming the input).
#pragma once
#include <CLI/CLI.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "ctmc/commands/limits.hpp"

namespace ctmc::cli {

using Setup = std::function<void(CLI::App& root)>;

inline std::vector<Setup>& registry() {
  static std::vector<Setup> r;
  return r;
}

struct Register {
  explicit Register(Setup s) { registry().push_back(std::move(s)); }
};

// A command group shared by several files (e.g. "simulate neuron" and
// "simulate network"): returns the existing subcommand or creates it.
inline CLI::App* subcommand_group(CLI::App& root, const std::string& name, const std::string& description) {
  for (auto* sub : root.get_subcommands([](CLI::App*) { return true; }))
    if (sub->get_name() == name) return sub;
  auto* g = root.add_subcommand(name, description);
  g->require_subcommand(1);
  return g;
}

// For unsigned options (seeds, counts): CLI11 wraps "-1" to 2^64 - 1 and
// clamps a decimal beyond 2^64 - 1 to it, so both are rejected here.
inline const CLI::Validator kNoMinus(
    [](std::string& text) {
      const auto b = text.find_first_not_of(" \t");
      if (b != std::string::npos && text[b] == '-') return std::string("need a number >= 0, got '" + text + "'");
      const auto e = text.find_last_not_of(" \t");
      if (b == std::string::npos || text.find_first_not_of("0123456789", b) <= e) return std::string();
      unsigned long long v = 0;
      for (std::size_t i = b; i <= e; ++i) {
        const unsigned d = static_cast<unsigned>(text[i] - '0');
        if (v > (~0ULL - d) / 10) return std::string("'" + text + "' is beyond 18446744073709551615 (2^64 - 1)");
        v = v * 10 + d;
      }
      return std::string();
    },
    "", "NO_MINUS");

// A number > 0 and finite, with a message of one short line (CLI11's
// PositiveNumber prints its range up to DBL_MAX in 309 digits); text that is
// not a number is left to CLI11's conversion, which names it.
inline const CLI::Validator kPositive(
    [](std::string& text) {
      double v = 0;
      if (!CLI::detail::lexical_cast(text, v)) return std::string();
      if (!(v > 0) || !std::isfinite(v)) return std::string("need a positive finite number, got '" + text + "'");
      return std::string();
    },
    "POSITIVE");

// The most threads any command runs (main.cpp cuts OMP_NUM_THREADS down to it).
using commands::kMaxThreads;

// --threads: commands::checked_threads as the option's check (text that is not
// a whole number is left to CLI11's conversion, which names it).
inline const CLI::Validator kThreadCount(
    [](std::string& text) {
      int threads = 0;
      if (!CLI::detail::lexical_cast(text, threads)) return std::string();
      try {
        commands::checked_threads(threads);
      } catch (const InputError& e) {
        return e.detail();
      }
      return std::string();
    },
    "", "THREADS");

// Thrown from a command callback to end with a given exit status.
struct ExitStatus {
  int code;
};

// The command line as typed, for report headers.
const std::string& command_line();

}  // namespace ctmc::cli
