// ctmc-snn train --data DIR --activation NAME --hidden 256,128 --epochs 15 --seed S --output NET.json [--threads N]
// ctmc-snn train --arch vgg11 [--width W] --data DIR ... (train_net.hpp: the VGG-11 variant the images' shape calls for)
// ctmc-snn evaluate --net NET.json --data DIR | --test-images F --test-labels F [--clip K,...]
//     [--predictions FILE] [--json]
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "data_options.hpp"
#include "ctmc/io/same_file.hpp"
#include "ctmc/sim/atomic_write.hpp"
#include "ctmc/sim/net.hpp"
#include "ctmc/sim/tensor_inputs.hpp"
#include "ctmc/activations/activation.hpp"
#include "ctmc/sim/dataset.hpp"
#include "ctmc/sim/manifest.hpp"
#include "ctmc/sim/train.hpp"
#include "ctmc/sim/train_net.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/number_text.hpp"

namespace ctmc::cli {
namespace {

// Bounds on the network shape: a width or depth beyond these is a typo, and
// would only end in std::bad_alloc or hours of work.
constexpr int kMaxWidth = 65536;
constexpr std::size_t kMaxLayers = 1024;

std::vector<int> parse_widths(const std::string& text) {
  std::vector<int> out;
  for (const auto& item : ctmc::split_input_list(text, "--hidden")) {
    try {
      std::size_t used = 0;
      const int v = std::stoi(item, &used);
      if (used != item.size() || v < 1) throw std::invalid_argument("");
      out.push_back(v);
    } catch (const std::exception&) {
      throw InputError("--hidden: '" + item + "' is not a positive integer (expected e.g. 256,128)");
    }
    if (out.back() > kMaxWidth)
      throw InputError(fmt::format("--hidden: width {} is too large (at most {} per layer)", out.back(), kMaxWidth));
  }
  if (out.empty()) throw InputError("--hidden: give at least one hidden layer width");
  if (out.size() > kMaxLayers)
    throw InputError(fmt::format("--hidden: {} hidden layers is too many (at most {})", out.size(), kMaxLayers));
  return out;
}

std::vector<float> parse_clips(const std::string& text) {
  std::vector<float> out;
  for (const auto& item : ctmc::split_input_list(text, "--clip")) {
    if (item == "inf" || item == "none") {
      out.push_back(0.0f);
      continue;
    }
    try {
      std::size_t used = 0;
      const float v = std::stof(item, &used);
      if (used != item.size() || !(v > 0) || !std::isfinite(v)) throw std::invalid_argument("");
      out.push_back(v);
    } catch (const std::exception&) {
      throw InputError("--clip: '" + item + "' is not a positive number or 'inf'");
    }
  }
  return out;
}

struct TrainOptions {
  std::string data, output, hidden = "256,128", arch = "mlp";
  double width = 1;
  int train_limit = 0;
  bool hidden_given = false, width_given = false;
  sim::TrainConfig cfg;
  bool json = false;
};

// Options that belong to one architecture are refused with the other.
void check_arch_options(const TrainOptions& o) {
  if (o.arch != "mlp" && o.arch != "vgg11")
    throw InputError("--arch", fmt::format("'{}' is not an architecture this command trains (mlp or vgg11)", o.arch));
  if (o.arch == "vgg11" && o.hidden_given)
    throw InputError("--hidden", "sets the MLP's widths; --arch vgg11 has VGG-11's channels (scale them with --width)");
  if (o.arch == "mlp" && o.width_given) throw InputError("--width", "scales VGG-11's channels; give it with --arch vgg11");
  if (!(o.width > 0 && o.width <= 16)) throw InputError("--width", fmt::format("must be in (0, 16], got {:g}", o.width));
}

// The fraction of d a network classifies correctly, a few hundred images at
// a time (one sample's result does not depend on the others; the layers of
// a whole train split would not fit in memory at once).
double accuracy_in_chunks(const sim::Net& net, const sim::Dataset& d) {
  constexpr int kChunk = 500;
  long long correct = 0;
  for (int start = 0; start < d.size(); start += kChunk) {
    const int n = std::min(kChunk, d.size() - start);
    const auto pred = net.predict(d.images.middleCols(start, n));
    for (int k = 0; k < n; ++k) correct += pred[std::size_t(k)] == d.labels[std::size_t(start + k)];
  }
  return d.size() == 0 ? 0.0 : double(correct) / d.size();
}

struct Trained {
  double seconds = 0, train_acc = 0, test_acc = 0;
  std::vector<sim::EpochStats> epochs;
};

Trained train_and_save_mlp(const TrainOptions& o, const sim::DatasetSplit& split, nlohmann::json meta) {
  const auto res = sim::train_mlp(split.train, o.cfg);
  Trained t{res.seconds, res.net.accuracy(split.train), res.net.accuracy(split.test), res.epochs};
  meta.update({{"hidden", o.cfg.hidden}});
  meta.update({{"train_accuracy", t.train_acc}, {"test_accuracy", t.test_acc}, {"command", command_line()}});
  sim::save_network(o.output, res.net, meta);
  return t;
}

// VGG-11 (train_net.hpp): the variant the images call for. The accuracies
// are those of the network as written and read back (BatchNorm folded, eval
// mode); the test accuracy is computed as `evaluate` computes it.
Trained train_and_save_vgg(const TrainOptions& o, const sim::DatasetSplit& split, nlohmann::json meta) {
  const sim::Shape3 shape{split.train.channels, split.train.rows, split.train.cols, false};
  sim::TrainNet net;
  try {
    net = sim::vgg11(shape, o.width, o.cfg.activation);
  } catch (const InputError& e) {
    if (e.input() == "arch") throw InputError("--arch", e.detail() + " (--data " + o.data + ")");
    throw;
  }
  if (!o.json) {
    const auto ch = sim::vgg11_channels(o.width);
    fmt::print("{} on {}: channels {} ({} layers with weights)\n", net.arch, shape.text(), fmt::join(ch, ","),
               std::count_if(net.layers.begin(), net.layers.end(),
                             [](const sim::TrainLayer& L) { return L.op == sim::TrainOp::Conv2d || L.op == sim::TrainOp::Linear; }));
  }
  const auto res = sim::train_net(split.train, net, o.cfg);
  const sim::Net loaded = sim::train_net_as_loaded(res.net);
  Trained t{res.seconds, accuracy_in_chunks(loaded, split.train), loaded.accuracy(split.test), res.epochs};
  meta.update({{"arch", "vgg11"}, {"variant", res.net.arch}, {"width", o.width}, {"channels", sim::vgg11_channels(o.width)}});
  meta.update({{"train_accuracy", t.train_acc}, {"test_accuracy", t.test_acc}, {"command", command_line()}});
  sim::save_train_net(o.output, res.net, meta);
  return t;
}

void run_train(TrainOptions& o) {
  check_arch_options(o);
  if (o.arch == "mlp") o.cfg.hidden = parse_widths(o.hidden);
  (void)activations::parse_activation(o.cfg.activation);  // fail fast, naming --activation
  o.cfg.progress = !o.json && isatty(STDERR_FILENO);
  sim::check_network_output(o.output, "--output");  // before the training, not after
  // The manifest and the weights beside it, neither one of the data files.
  io::refuse_outputs_over_inputs(io::named_outputs("--output", sim::network_output_files(o.output)), {o.data});
  // The weights go beside the manifest as <stem>.safetensors: a manifest
  // written through a device or pipe (--output /dev/null) would put a weights
  // file into /dev, where nothing reads it. (A symbolic link is followed.)
  struct stat st {};
  if (::stat(o.output.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
    throw InputError(fmt::format("--output: '{}' is not a regular file (train writes the weights beside the manifest "
                                 "as <stem>.safetensors)",
                                 o.output));
  auto split = sim::load_dataset_dir(o.data);
  if (o.train_limit > 0) split.train = split.train.head(o.train_limit);
  // Before training: the test accuracy of no images would read as 0%.
  if (split.test.size() == 0) throw InputError(fmt::format("--data: {} has no test images", o.data));
  nlohmann::json meta = {{"activation", o.cfg.activation},
                         {"epochs", o.cfg.epochs},
                         {"batch_size", o.cfg.batch_size},
                         {"learning_rate", o.cfg.learning_rate},
                         {"optimizer", "adam"},
                         {"seed", o.cfg.seed},
                         {"data", o.data},
                         {"train_images", split.train.size()},
                         {"test_images", split.test.size()}};
  const Trained t = o.arch == "mlp" ? train_and_save_mlp(o, split, meta) : train_and_save_vgg(o, split, meta);
  nlohmann::ordered_json out = {{"output", o.output}, {"arch", o.arch}, {"seconds", t.seconds}, {"train_accuracy", t.train_acc},
                                {"test_accuracy", t.test_acc}};
  nlohmann::ordered_json ep = nlohmann::ordered_json::array();
  for (const auto& e : t.epochs) ep.push_back({{"epoch", e.epoch}, {"loss", e.mean_loss}, {"train_accuracy", e.train_accuracy}});
  out["epochs"] = ep;
  if (o.json) {
    fmt::print("{}\n", out.dump(2));
    return;
  }
  for (const auto& e : t.epochs) fmt::print("epoch {:3d}  loss {:.4f}  running train accuracy {:.2f}%\n", e.epoch, e.mean_loss, 100 * e.train_accuracy);
  fmt::print("trained in {:.2f} s; train accuracy {:.2f}%, test accuracy {:.2f}%; wrote {}\n", t.seconds, 100 * t.train_acc,
             100 * t.test_acc, o.output);
}

struct EvalOptions {
  std::string net, predictions, clips = "inf";
  sim::DataSource data;
  bool json = false;
};

// An image-shaped data set must have the network's image shape, not only its
// number of values (a 3x32x32 CIFAR image read as 32x32x3 would pass the count).
void check_image_shape(const sim::Dataset& d, const sim::Shape3& in) {
  if (in.flat || d.rows <= 1 || d.cols <= 1 || d.channels * d.rows * d.cols != d.features()) return;
  if (d.channels != in.c || d.rows != in.h || d.cols != in.w)
    throw InputError("data", fmt::format("images are [{}, {}, {}] (C, H, W), the network takes {}", d.channels, d.rows, d.cols,
                                         in.text()));
}

void run_evaluate(const EvalOptions& o) {
  const auto clips = parse_clips(o.clips);  // bad input before any loading
  if (!o.predictions.empty() && clips.size() != 1)
    throw InputError("--predictions", "give one --clip level with --predictions (one prediction per image)");
  // Before the work, not after it.
  std::error_code ec;
  if (!o.predictions.empty() && std::filesystem::is_directory(o.predictions, ec))
    throw InputError("--predictions", fmt::format("'{}' is a folder, not a file", o.predictions));
  {
    auto inputs = sim::network_input_files(o.net);
    const auto data = sim::data_source_files(o.data);
    inputs.insert(inputs.end(), data.begin(), data.end());
    io::refuse_outputs_over_inputs({{"--predictions", o.predictions}}, inputs);
  }
  const auto net = sim::load_net(o.net);
  const auto split = sim::load_data(o.data);
  // No test images is an error (their accuracy read as 0%), as in simulate network.
  const auto test = sim::simulation_subset(split.test, 0, net.input_size(), net.output_size());
  check_image_shape(test, net.input);
  if (net.batchnorm_folded > 0)
    fmt::print(o.json ? stderr : stdout, "batchnorm folded into {} convolution(s): max relative error {:.3g} (limit {:g})\n",
               net.batchnorm_folded, net.batchnorm_fold_error, sim::kMaxBatchnormFoldError);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (float k : clips) {
    const auto pred = net.predict(test.images, k);
    int correct = 0;
    for (std::size_t i = 0; i < pred.size(); ++i) correct += pred[i] == test.labels[i];
    const double acc = double(correct) / double(pred.size());
    rows.push_back({{"clip", k > 0 ? nlohmann::ordered_json(k) : nlohmann::ordered_json("inf")}, {"test_accuracy", acc}});
    if (!o.json) fmt::print("clip {:>6}  test accuracy {:.2f}%  ({} images)\n", k > 0 ? fmt::format("{:g}", k) : "inf", 100 * acc, test.size());
    if (!o.predictions.empty()) {
      std::string text;
      for (int p : pred) text += std::to_string(p) + "\n";
      sim::write_files_atomically({{o.predictions, std::vector<std::uint8_t>(text.begin(), text.end())}});
      if (!o.json) fmt::print("wrote {} predictions to {}\n", pred.size(), o.predictions);
    }
  }
  if (o.json) fmt::print("{}\n", rows.dump(2));
}

Register reg([](CLI::App& root) {
  auto o = std::make_shared<TrainOptions>();
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
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--epochs", o->cfg.epochs, "Training epochs")->capture_default_str()->check(CLI::Range(1, 100000));
  cmd->add_option("--batch", o->cfg.batch_size, "Mini-batch size")->capture_default_str()->check(CLI::Range(1, 1000000));
  cmd->add_option("--lr", o->cfg.learning_rate, "Adam learning rate")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--seed", o->cfg.seed, "Random seed (weights and batch order)")->check(kNoMinus)->capture_default_str();
  cmd->add_option("--threads", o->cfg.threads, "Threads (0: all cores, or OMP_NUM_THREADS if set); results do not depend on it")->capture_default_str()->check(
      kThreadCount);
  cmd->add_flag("--json", o->json, "Machine-readable output (no progress bar)");
  cmd->callback([o, cmd] {
    o->hidden_given = cmd->count("--hidden") > 0;
    o->width_given = cmd->count("--width") > 0;
    run_train(*o);
  });

  auto e = std::make_shared<EvalOptions>();
  auto* ev = root.add_subcommand("evaluate", "Test accuracy of a network manifest (dense or convolutional), optionally with "
                                             "clip-on-forward [0, K] hidden activations");
  ev->add_option("--net", e->net, "Network manifest JSON")->required();
  add_data_options(ev, e->data);
  ev->add_option("--clip", e->clips, "Comma-separated clip levels K (inf: no clipping)")->capture_default_str();
  ev->add_option("--predictions", e->predictions,
                 "Write the predicted class of every test image, one per line in order (one --clip level)");
  ev->add_flag("--json", e->json, "Machine-readable output");
  ev->callback([e] { run_evaluate(*e); });
});

}  // namespace
}  // namespace ctmc::cli
