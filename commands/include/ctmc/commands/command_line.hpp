// A command's Options as the `ctmc-snn ...` command line that runs it: what
// the reports print beside every file they write (train, fit, import,
// evaluate, check, simulate network, sweep) and what `convert` writes into
// commands.sh. The option names are the CLI's (cli/cmd_*.cpp), so a printed
// line is one the CLI reads back into the same Options.
//
// What a line shows: the inputs and outputs, the numbers that define the
// run (each renderer says which), always; any other option only where it
// differs from the Options' default, so that a line stays as short as the
// run allows. --threads is never shown: no result depends on it. Words are
// shell-quoted where they need it (shell_word), numbers printed as the
// shortest text that reads back to the same double ({} of fmt).
#pragma once
#include <concepts>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ctmc/commands/check.hpp"
#include "ctmc/commands/fit.hpp"
#include "ctmc/commands/import_onnx.hpp"
#include "ctmc/commands/simulate_network.hpp"
#include "ctmc/commands/sweep.hpp"
#include "ctmc/commands/train.hpp"
#include "ctmc/sim/formats/dataset.hpp"

namespace ctmc::commands {

// `s` as one word of a POSIX shell command line: as it is when it holds only
// letters, digits and / . _ - , : = +, else in single quotes (a ' inside as
// '\'').
std::string shell_word(std::string_view s);

// A command line built option by option: "ctmc-snn <command>", then each
// argument as " <word>" and each option as " <name> <value>".
class CommandLine {
 public:
  explicit CommandLine(std::string_view command);

  CommandLine& arg(std::string_view value);  // a positional argument
  CommandLine& option(std::string_view name, std::string_view value);
  CommandLine& option(std::string_view name, const std::string& value) { return option(name, std::string_view(value)); }
  CommandLine& option(std::string_view name, const char* value) { return option(name, std::string_view(value)); }
  template <class T>
    requires std::integral<T> || std::floating_point<T>
  CommandLine& option(std::string_view name, T value) {
    return raw(name, fmt::format("{}", value));
  }
  // A list option: the items, each a word, joined by commas.
  CommandLine& option(std::string_view name, const std::vector<std::string>& items);
  CommandLine& option(std::string_view name, const std::vector<double>& items);
  CommandLine& flag(std::string_view name);
  // The data options that are set, in the CLI's order: --data,
  // --test-images, --test-labels, --train-images, --train-labels,
  // --normalize.
  CommandLine& data(const sim::DataSource& d);

  const std::string& text() const { return text_; }  // "ctmc-snn <command> ..."
  // What follows "ctmc-snn <command> " (the options a wrapper passes on,
  // e.g. scripts/slurm/submit-sweep.sh).
  std::string options() const { return text_.substr(head_); }

 private:
  CommandLine& raw(std::string_view name, const std::string& value);
  std::string text_;
  std::size_t head_ = 0;
};

// "(cd DIR && COMMAND)": a command whose relative paths name files in DIR.
std::string run_in(const std::string& dir, const CommandLine& command);

// train: --arch and --width (arch other than mlp), --data, --activation,
// --hidden (arch mlp), --epochs, --seed, --train-limit (when > 0), --batch,
// --lr and --max-memory (when not the defaults), --output.
CommandLine train_command_line(const TrainCommandOptions& o);

// evaluate: --net, the data options, --clip (other than inf), --predictions
// (when given), --max-memory (when > 0).
CommandLine evaluate_command_line(const EvaluateCommandOptions& o);

// import onnx MODEL --output NET.
CommandLine import_onnx_command_line(const ImportOnnxOptions& o);

// fit: --activation, --domain (when given), --family, --states, --points
// (when not the defaults), --samples and --weights (when given),
// --rate-bound, --min-rate (when not the default), --no-widen (when the
// search does not widen), --starts, --seed, then --alpha, --gradient,
// --precision, --max-iterations (when not the defaults), --certify,
// --output (when given). A warm start or a scored model (--warm-start,
// --score) is shown by its file when it was given as one.
CommandLine fit_command_line(const FitCommandOptions& o);

// check CLAIMS: --seed, then --precision and --max-seconds (when not the
// defaults), --allow-outside-paths, --allow-unchecked.
CommandLine check_command_line(const std::string& claims, const CheckOptions& o);

// simulate network: its files beside the Options, which hold the numbers
// and conventions only (the front ends read the files).
struct SimulateNetworkCommand {
  std::string net;
  sim::DataSource data;
  std::vector<std::string> neurons;
  NetworkCommandOptions options;
};
// --net, the data options, --neurons, --T, --tau, --rate, --dt (when not
// the default), --trials, --seed, then each convention (--sampler,
// --kernel, --conv-path, --readout, --scale, --limit, --subset,
// --trace-weight, --output-scale, --layer-alpha) and the IF baseline's
// options (--if, --v0, --if-steps) when not the defaults.
CommandLine simulate_network_command_line(const SimulateNetworkCommand& c);

// sweep: --net, the data options, --neurons, --tau, --rate, --T,
// --trials, --seed, --out (when given), and the grid's conventions
// (--sampler, --kernel, --dt, --readout, --trace-weight, --output-scale,
// --subset, --limit, in that order between them) where they are not the
// defaults, or all of them with SweepConventions::Every (the reports: a
// reader sees every convention of the sweep a document records without
// looking the defaults up); then --criterion, --scale, --layer-alpha,
// --shard and the limits (--max-runs, --max-neuron-steps, --max-memory)
// when not the defaults, and --dry-run.
enum class SweepConventions { Changed, Every };
CommandLine sweep_command_line(const SweepCommandOptions& o, SweepConventions shown = SweepConventions::Changed);

}  // namespace ctmc::commands
