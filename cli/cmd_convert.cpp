// ctmc-snn convert --net NET.json (--data DIR | --train-images F --train-labels F ...)
//     --output-dir DIR [--fit-images N] [--samples N] [--starts N]
//     [--output-activation NAME] [--seed S] [--threads N]
//
// One CTMC neuron per spiking layer of a trained net, fitted where the
// layer's inputs lie, and the commands that run the spiking net
// (commands/include/ctmc/commands/convert.hpp).
#include <fmt/format.h>

#include "command.hpp"
#include "data_options.hpp"
#include "ctmc/commands/convert.hpp"

namespace ctmc::cli {
namespace {

Register reg([](CLI::App& root) {
  auto o = std::make_shared<commands::ConvertOptions>();
  auto* cmd = root.add_subcommand(
      "convert", "Fit one CTMC neuron per spiking layer of a trained net on its preactivations, and write the "
                 "simulate network / sweep commands that run it");
  cmd->add_option("--net", o->net, "Network manifest (dense or a layer graph, e.g. from import onnx)")->required();
  add_data_options(cmd, o->data);
  cmd->add_option("--output-dir", o->output_dir,
                  "Folder to write (whole or not at all): neuron-L<l>.json, samples-L<l>.txt, layers.csv, "
                  "commands.sh, report.md")
      ->required();
  cmd->add_option("--fit-images", o->fit_images, "Training images whose preactivations are sampled")
      ->capture_default_str();
  cmd->add_option("--samples", o->samples, "Preactivation quantiles per layer (the fit's points)")
      ->capture_default_str();
  cmd->add_option("--starts", o->starts, "Multistart starts per fit")->capture_default_str();
  cmd->add_option("--output-activation", o->output_activation,
                  "Target of the output layer's neurons (default: relu after relu or cliprelu_K hidden layers, "
                  "else the last hidden activation)");
  cmd->add_option("--seed", o->seed, "Seed of the fits")->check(kNoMinus)->capture_default_str();
  cmd->add_option("--threads", o->threads, "Threads (0: all cores); results do not depend on it")
      ->capture_default_str()
      ->check(kThreadCount);
  cmd->callback([o] {
    o->command_line = command_line();
    const commands::ConvertResult r = commands::run_convert(*o);
    fmt::print("{} spiking layers, written to {}:\n", r.layers.size(), r.folder);
    for (std::size_t l = 0; l < r.layers.size(); ++l) {
      const auto& c = r.layers[l];
      fmt::print("  layer {:>2}: {:>7} units, {} fitted to {} on [{:.4g}, {:.4g}] ({} images): MSE {:.3e}, max error "
                 "{:.3e} -> {}\n",
                 l + 1, c.units, c.family, c.target, c.lo, c.hi, c.images, c.mse, c.max_abs_error, c.neuron_file);
    }
    fmt::print("\nnext:\n{}\n{}\n", r.simulate_command, r.sweep_command);
  });
});

}  // namespace
}  // namespace ctmc::cli
