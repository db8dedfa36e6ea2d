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
