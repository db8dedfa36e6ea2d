// ctmc-snn: verify, fit and simulate CTMC neurons (see README.md).
#include <fmt/format.h>
#include <omp.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <new>

#include "command.hpp"
#include "ctmc/analysis/solver_logging.hpp"
#include "ctmc/commands/command_text.hpp"
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
  std::cerr << ctmc::commands::one_line(message) << "\n";
  return status;
}

void* idle_thread(void*) { return nullptr; }

// OpenMP's worker stack size, from OMP_STACKSIZE or GOMP_STACKSIZE as libgomp
// reads them (a whole number, optionally a B, K, M or G suffix; K when none):
// a value it cannot create a thread with made libgomp print its own message
// and exit 1, which reads as "a check failed". Checked before any command
// runs: InputError naming the variable when the size is more than the
// machine's memory or a thread with it cannot be created. A value libgomp
// would not parse is left to it (it warns and ignores it).
void check_stack_size_variables() {
  for (const char* name : {"OMP_STACKSIZE", "GOMP_STACKSIZE"}) {
    const char* text = std::getenv(name);
    if (!text) continue;
    const std::string v(text);
    std::size_t i = v.find_first_not_of(" \t");
    if (i == std::string::npos) continue;
    const std::size_t digits_end = v.find_first_not_of("0123456789", i);
    if (digits_end == i) continue;
    const std::string digits = v.substr(i, digits_end == std::string::npos ? std::string::npos : digits_end - i);
    std::size_t j = digits_end == std::string::npos ? v.size() : v.find_first_not_of(" \t", digits_end);
    if (j == std::string::npos) j = v.size();
    double unit = 1024;
    if (j < v.size()) {
      switch (std::tolower(static_cast<unsigned char>(v[j]))) {
        case 'b': unit = 1; break;
        case 'k': unit = 1024; break;
        case 'm': unit = 1024.0 * 1024; break;
        case 'g': unit = 1024.0 * 1024 * 1024; break;
        default: continue;
      }
      if (v.find_first_not_of(" \t", j + 1) != std::string::npos) continue;
    }
    const double bytes =
        (digits.size() > 30 ? std::numeric_limits<double>::infinity() : std::stod(digits)) * unit;
    const double memory = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
    if (memory > 0 && bytes > memory)
      throw ctmc::InputError(fmt::format("{}={}: a stack of {:.3g} bytes for each OpenMP thread is more than this "
                                         "machine's {:.3g} bytes of memory; unset it or give a size such as 64M",
                                         name, v, bytes, memory));
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    int rc = pthread_attr_setstacksize(&attr, static_cast<std::size_t>(std::max(bytes, 65536.0)));
    pthread_t t;
    if (rc == 0) rc = pthread_create(&t, &attr, idle_thread, nullptr);
    pthread_attr_destroy(&attr);
    if (rc != 0)
      throw ctmc::InputError(fmt::format("{}={}: cannot create a thread with that stack size ({}); unset it or give a "
                                         "smaller size such as 64M",
                                         name, v, std::strerror(rc)));
    pthread_join(t, nullptr);
  }
}
}  // namespace
}  // namespace ctmc::cli

int main(int argc, char** argv) {
  using namespace ctmc::cli;
  ctmc::analysis::quiet_solver_logging();  // the fits' solver: FATAL messages only
  for (int i = 0; i < argc; ++i) {
    if (i) g_command_line += ' ';
    g_command_line += i == 0 ? std::string("ctmc-snn") : std::string(argv[i]);
  }
  // The environment OpenMP reads, before its first thread is made (libgomp
  // ends the process itself when it cannot make one).
  try {
    check_stack_size_variables();
  } catch (const ctmc::InputError& e) {
    return fail(2, std::string("ctmc-snn: ") + e.what());
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
    return fail(2, "ctmc-snn: " + ctmc::commands::option_message(e));
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
