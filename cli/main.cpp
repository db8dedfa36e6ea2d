// ctmc-snn: verify, fit and simulate CTMC neurons (see README.md).
#include <cstdio>
#include <iostream>
#include <new>

#include "command.hpp"
#include "ctmc/solvers/errors.hpp"

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
}  // namespace
}  // namespace ctmc::cli

int main(int argc, char** argv) {
  using namespace ctmc::cli;
  for (int i = 0; i < argc; ++i) {
    if (i) g_command_line += ' ';
    g_command_line += i == 0 ? std::string("ctmc-snn") : std::string(argv[i]);
  }
  CLI::App app{"ctmc-snn: verify, fit and simulate finite-state CTMC neurons for ANN-to-SNN conversion"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every command");
  for (auto& setup : registry()) setup(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string unknown = unknown_command(app, argc, argv);
    if (!unknown.empty()) {
      std::cerr << unknown << "\n";
      return 2;
    }
    std::cerr << "ctmc-snn: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const ExitStatus& s) {
    return s.code;
  } catch (const ctmc::InputError& e) {
    std::cerr << "ctmc-snn: " << e.what() << "\n";
    return 2;
  } catch (const ctmc::CheckFailed& e) {
    std::cerr << "ctmc-snn: check failed: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    // Sizes are bounded where the CLI knows them; what still runs out of
    // memory is an input too large for this machine, not a bug.
    std::cerr << "ctmc-snn: out of memory: the input is too large for this machine\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ctmc-snn: internal error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
