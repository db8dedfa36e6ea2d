// ctmc-snn train --data DIR --activation NAME --hidden 256,128 --epochs 15 --seed S --output NET.json [--threads N]
// ctmc-snn train --arch vgg11 [--width W] --data DIR ... (train_net.hpp: the VGG-11 variant the images' shape calls for)
//     [--max-memory GIB]
// ctmc-snn evaluate --net NET.json --data DIR | --test-images F --test-labels F [--clip K,...]
//     [--predictions FILE] [--max-memory GIB] [--json]
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <memory>

#include "command.hpp"
#include "data_options.hpp"
#include "ctmc/activations/activation.hpp"
#include "ctmc/commands/train.hpp"
#include "ctmc/sim/nets/net.hpp"

namespace ctmc::cli {
namespace {

void train(commands::TrainCommandOptions& o, bool json) {
  o.cfg.progress = !json && isatty(STDERR_FILENO);
  o.command_line = command_line();
  const auto print_architecture = [](const commands::TrainArchitecture& a) {
    fmt::print("{} on {}: channels {} ({} layers with weights)\n", a.variant, a.input, fmt::join(a.channels, ","),
               a.weight_layers);
  };
  const auto t = json ? commands::run_train(o) : commands::run_train(o, print_architecture);
  if (json) {
    fmt::print("{}\n", commands::to_json(t).dump(2));
    return;
  }
  for (const auto& e : t.epochs) fmt::print("epoch {:3d}  loss {:.4f}  running train accuracy {:.2f}%\n", e.epoch, e.mean_loss, 100 * e.train_accuracy);
  fmt::print("trained in {:.2f} s; train accuracy {:.2f}%, test accuracy {:.2f}%; wrote {}\n", t.seconds, 100 * t.train_accuracy,
             100 * t.test_accuracy, t.output);
}

void evaluate(const commands::EvaluateCommandOptions& o, bool json) {
  const auto r = commands::run_evaluate(o);
  if (r.batchnorm_folded > 0)
    fmt::print(json ? stderr : stdout, "batchnorm folded into {} convolution(s): max relative error {:.3g} (limit {:g})\n",
               r.batchnorm_folded, r.batchnorm_fold_error, sim::kMaxBatchnormFoldError);
  for (const auto& row : r.rows) {
    if (!json)
      fmt::print("clip {:>6}  test accuracy {:.2f}%  ({} images)\n", row.clip > 0 ? fmt::format("{:g}", row.clip) : "inf",
                 100 * row.test_accuracy, r.images);
    if (!o.predictions.empty()) {
      commands::write_predictions(o, row);
      if (!json) fmt::print("wrote {} predictions to {}\n", row.predictions.size(), o.predictions);
    }
  }
  if (json) fmt::print("{}\n", commands::to_json(r).dump(2));
}

Register reg([](CLI::App& root) {
  auto o = std::make_shared<commands::TrainCommandOptions>();
  auto json = std::make_shared<bool>(false);
  auto* cmd = root.add_subcommand("train", "Train a source MLP or VGG-11 (softmax cross-entropy, Adam); writes a manifest and "
                                           "safetensors weights");
  cmd->add_option("--data", o->data, "Data folder (IDX or CIFAR-10 binary), e.g. data/mnist")->required();
  cmd->add_option("--output", o->output, "Manifest to write (weights go beside it as <stem>.safetensors)")->required();
  cmd->add_option("--activation", o->cfg.activation, "Hidden activation: " + activations::activation_names_help())->capture_default_str();
  cmd->add_option("--arch", o->arch,
                  "mlp, or vgg11: VGG-11 with BatchNorm, strided 3x3 convolutions in place of pooling for 28x28 images, "
                  "2x2 average pooling for 32x32x3 (CIFAR-10)")
      ->capture_default_str();
  cmd->add_option("--hidden", o->hidden, "Hidden layer widths, comma-separated (--arch mlp)")->capture_default_str();
  cmd->add_option("--width", o->width, "Scale of VGG-11's channel counts 64..512 (--arch vgg11; 0.125 gives 8..64, at least 1)")
      ->capture_default_str();
  cmd->add_option("--train-limit", o->train_limit, "Train on the first N training images (0: all)")
      ->capture_default_str()
      ->check(kNoMinus);
  // Their ranges are run_train's to check (commands::kMaxEpochs, kMaxBatch, --lr > 0).
  cmd->add_option("--epochs", o->cfg.epochs, "Training epochs")->capture_default_str();
  cmd->add_option("--batch", o->cfg.batch_size, "Mini-batch size")->capture_default_str();
  cmd->add_option("--lr", o->cfg.learning_rate, "Adam learning rate")->capture_default_str();
  cmd->add_option("--seed", o->cfg.seed, "Random seed (weights and batch order)")->check(kNoMinus)->capture_default_str();
  cmd->add_option("--threads", o->cfg.threads, "Threads (0: all cores, or OMP_NUM_THREADS if set); results do not depend on it")->capture_default_str()->check(
      kThreadCount);
  cmd->add_option("--max-memory", o->max_memory_gib,
                  "Refuse a training estimated to need more memory than this (GiB; 0: the machine's memory)")
      ->capture_default_str();
  cmd->add_flag("--json", *json, "Machine-readable output (no progress bar)");
  cmd->callback([o, json, cmd] {
    o->hidden_given = cmd->count("--hidden") > 0;
    o->width_given = cmd->count("--width") > 0;
    train(*o, *json);
  });

  auto e = std::make_shared<commands::EvaluateCommandOptions>();
  auto ejson = std::make_shared<bool>(false);
  auto* ev = root.add_subcommand("evaluate", "Test accuracy of a network manifest (dense or convolutional), optionally with "
                                             "clip-on-forward [0, K] hidden activations");
  ev->add_option("--net", e->net, "Network manifest JSON")->required();
  add_data_options(ev, e->data);
  ev->add_option("--clip", e->clips, "Comma-separated clip levels K (inf: no clipping)")->capture_default_str();
  ev->add_option("--predictions", e->predictions,
                 "Write the predicted class of every test image, one per line in order (one --clip level)");
  ev->add_option("--max-memory", e->max_memory_gib,
                 "Refuse a network whose forward pass needs more memory than this for one test image (GiB; 0: the "
                 "machine's memory)")
      ->capture_default_str();
  ev->add_flag("--json", *ejson, "Machine-readable output");
  ev->callback([e, ejson] { evaluate(*e, *ejson); });
});

}  // namespace
}  // namespace ctmc::cli
