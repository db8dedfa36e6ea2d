// ctmc-snn: verify, fit and simulate CTMC neurons (see README.md).
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <new>

#include "command.hpp"
#include "ctmc/reports/command_text.hpp"
#include "ctmc/core/errors.hpp"

namespace ctmc::cli {
namespace {
std::string g_command_line;
}
const std::string& command_line() { return g_command_line; }

namespace {
// CLI11 answers an unknown command word with "A subcommand is required";
// name the word and the commands that exist instead. Follows the command
// words of argv down the groups that need a subcommand (ctmc-snn, report,
// simulate, data); "" when they are all known.
std::string unknown_command(CLI::App& app, int argc, char** argv) {
  CLI::App* at = &app;
  std::string path = "ctmc-snn";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') return "";  // options: leave them to CLI11
    const auto subs = at->get_subcommands([](CLI::App*) { return true; });
    if (subs.empty() || at->get_require_subcommand_min() == 0) return "";
    CLI::App* next = nullptr;
    std::string known;
    for (auto* sub : subs) {
      if (sub->get_name() == word) next = sub;
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (!next) return path + ": unknown command '" + word + "' (known: " + known + ")";
    at = next;
    path += " " + word;
  }
  return "";
}

// Every option that takes a value refuses an empty one: each command reads
// "" as "not given", so an empty --output, --from or --out would silently
// mean the default (no file, the stationary start, the current folder).
// Options whose value may be left out (CLI11 expected_min 0) keep "" as "no
// value"; no command declares one today. A transform, because CLI11 runs
// transforms before the checks, so "--threads ''" says "empty value" and not
// that "" is out of range.
void refuse_empty_values(CLI::App& app) {
  const CLI::Validator not_empty(
      [](std::string& value) { return value.empty() ? std::string("empty value") : std::string(); }, "", "");
  for (CLI::Option* opt : app.get_options())
    if (opt->get_items_expected_min() > 0) opt->transform(not_empty);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) refuse_empty_values(*sub);
}

int fail(int status, const std::string& message) {
  std::cerr << ctmc::reports::one_line(message) << "\n";
  return status;
}
}  // namespace
}  // namespace ctmc::cli

int main(int argc, char** argv) {
  using namespace ctmc::cli;
  for (int i = 0; i < argc; ++i) {
    if (i) g_command_line += ' ';
    g_command_line += i == 0 ? std::string("ctmc-snn") : std::string(argv[i]);
  }
  // Once, before any command runs: every later omp_get_max_threads() (the
  // default of --threads 0 in the libraries) sees the capped value.
  if (omp_get_max_threads() > kMaxThreads) omp_set_num_threads(kMaxThreads);
  CLI::App app{"ctmc-snn: verify, fit and simulate finite-state CTMC neurons for ANN-to-SNN conversion"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every command");
  for (auto& setup : registry()) setup(app);
  refuse_empty_values(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string unknown = unknown_command(app, argc, argv);
    if (!unknown.empty()) return fail(2, unknown);
    return fail(2, std::string("ctmc-snn: ") + e.what() + " (see --help)");
  } catch (const ExitStatus& s) {
    return s.code;
  } catch (const ctmc::InputError& e) {
    return fail(2, "ctmc-snn: " + ctmc::reports::option_message(e));
  } catch (const ctmc::CheckFailed& e) {
    return fail(1, std::string("ctmc-snn: check failed: ") + e.what());
  } catch (const std::bad_alloc&) {
    // Sizes are bounded where the CLI knows them; what still runs out of
    // memory is an input too large for this machine, not a bug.
    return fail(2, "ctmc-snn: out of memory: the input is too large for this machine");
  } catch (const std::exception& e) {
    return fail(3, std::string("ctmc-snn: internal error: ") + e.what());
  }
  return 0;
}
