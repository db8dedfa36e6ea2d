// train and evaluate: the options checked, the training or the accuracies,
// and the files they write.
#include <fmt/format.h>
#include <omp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "ctmc/activations/activation.hpp"
#include "ctmc/commands/train.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/io/same_file.hpp"
#include "ctmc/sim/formats/atomic_write.hpp"
#include "ctmc/sim/formats/dataset.hpp"
#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/sim/nets/net.hpp"
#include "ctmc/sim/nets/train_net.hpp"
#include "ctmc/solvers/number_text.hpp"

namespace ctmc::commands {
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

// "1.5 GiB", "300 MiB": a byte count for the memory messages.
std::string memory_text(double bytes) {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  return bytes >= kGiB ? fmt::format("{:.3g} GiB", bytes / kGiB) : fmt::format("{:.3g} MiB", bytes / (1024.0 * 1024));
}

// "--max-memory 2 GiB" or "--max-memory (the machine's 23 GiB)".
std::string limit_text(double gib, std::uint64_t limit) {
  return gib > 0 ? fmt::format("--max-memory {}", memory_text(double(limit)))
                 : fmt::format("--max-memory (the machine's {})", memory_text(double(limit)));
}

// A training estimated (sim::TrainMemory) beyond the limit is refused before
// anything is allocated; `shape` is the option that sizes the network.
void check_train_memory(const TrainCommandOptions& o, const sim::TrainMemory& m, int batch, const char* shape) {
  const std::uint64_t limit = memory_limit_bytes(o.max_memory_gib);
  if (m.bytes() <= double(limit)) return;
  throw InputError(fmt::format("train: needs about {} of memory ({:.3g} parameters: 16 to 28 bytes each for the weights, "
                               "their gradients, Adam's two moments and the files written; {} for a batch of {} "
                               "images), more than {}; lower {} or --batch, or raise --max-memory (GiB)",
                               memory_text(m.bytes()), m.parameters, memory_text(m.batch_bytes), batch,
                               limit_text(o.max_memory_gib, limit), shape));
}

// Options that belong to one architecture are refused with the other.
void check_arch_options(const TrainCommandOptions& o) {
  if (o.arch != "mlp" && o.arch != "vgg11")
    throw InputError("--arch", fmt::format("'{}' is not an architecture this command trains (mlp or vgg11)", o.arch));
  if (o.arch == "vgg11" && o.hidden_given)
    throw InputError("--hidden", "sets the MLP's widths; --arch vgg11 has VGG-11's channels (scale them with --width)");
  if (o.arch == "mlp" && o.width_given) throw InputError("--width", "scales VGG-11's channels; give it with --arch vgg11");
  if (!(o.width > 0 && o.width <= 16)) throw InputError("--width", fmt::format("must be in (0, 16], got {:g}", o.width));
}

// The numeric options' ranges: the one check of them, which the CLI's and
// the Python module's parsers leave to this command.
void check_ranges(const TrainCommandOptions& o) {
  if (o.cfg.epochs < 1 || o.cfg.epochs > kMaxEpochs)
    throw InputError("--epochs", fmt::format("{} is not in [1, {}]", o.cfg.epochs, kMaxEpochs));
  if (o.cfg.batch_size < 1 || o.cfg.batch_size > kMaxBatch)
    throw InputError("--batch", fmt::format("{} is not in [1, {}]", o.cfg.batch_size, kMaxBatch));
  if (!(o.cfg.learning_rate > 0) || !std::isfinite(o.cfg.learning_rate))
    throw InputError("--lr", fmt::format("{:g} is not a positive finite number", o.cfg.learning_rate));
  if (o.train_limit < 0) throw InputError("--train-limit", fmt::format("{} is negative (0: all images)", o.train_limit));
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

TrainCommandResult train_and_save_mlp(const TrainCommandOptions& o, const sim::DatasetSplit& split, nlohmann::json meta) {
  const int batch = std::max(1, std::min(o.cfg.batch_size, split.train.size()));
  check_train_memory(o,
                     sim::mlp_train_memory(split.train.features(), o.cfg.hidden, 10, batch,
                                           std::max(split.train.size(), split.test.size())),
                     batch, "--hidden");
  const auto res = sim::train_mlp(split.train, o.cfg);
  TrainCommandResult t{o.output, o.arch, res.seconds, res.net.accuracy(split.train), res.net.accuracy(split.test), res.epochs};
  meta.update({{"hidden", o.cfg.hidden}});
  meta.update({{"train_accuracy", t.train_accuracy}, {"test_accuracy", t.test_accuracy}, {"command", o.command_line}});
  sim::save_network(o.output, res.net, meta);
  return t;
}

// VGG-11 (train_net.hpp): the variant the images call for. The accuracies
// are those of the network as written and read back (BatchNorm folded, eval
// mode); the test accuracy is computed as `evaluate` computes it.
TrainCommandResult train_and_save_vgg(const TrainCommandOptions& o, const sim::DatasetSplit& split, nlohmann::json meta,
                                      const std::function<void(const TrainArchitecture&)>& on_architecture) {
  const sim::Shape3 shape{split.train.channels, split.train.rows, split.train.cols, false};
  sim::TrainNet net;
  try {
    net = sim::vgg11(shape, o.width, o.cfg.activation);
  } catch (const InputError& e) {
    if (e.input() == "arch") throw InputError("--arch", e.detail() + " (--data " + o.data + ")");
    throw;
  }
  const int batch = std::max(1, std::min(o.cfg.batch_size, split.train.size()));
  check_train_memory(o, sim::train_net_memory(net, batch, o.cfg.threads > 0 ? o.cfg.threads : omp_get_max_threads()), batch,
                     "--width");
  sim::check_some_batch_trains(net, split.train, o.cfg);
  if (on_architecture)
    on_architecture({net.arch, shape.text(), sim::vgg11_channels(o.width),
                     static_cast<long>(std::count_if(net.layers.begin(), net.layers.end(), [](const sim::TrainLayer& L) {
                       return L.op == sim::TrainOp::Conv2d || L.op == sim::TrainOp::Linear;
                     }))});
  const auto res = sim::train_net(split.train, net, o.cfg);
  const sim::Net loaded = sim::train_net_as_loaded(res.net);
  TrainCommandResult t{o.output, o.arch, res.seconds, accuracy_in_chunks(loaded, split.train), loaded.accuracy(split.test),
                       res.epochs};
  meta.update({{"arch", "vgg11"}, {"variant", res.net.arch}, {"width", o.width}, {"channels", sim::vgg11_channels(o.width)}});
  meta.update({{"train_accuracy", t.train_accuracy}, {"test_accuracy", t.test_accuracy}, {"command", o.command_line}});
  sim::save_train_net(o.output, res.net, meta);
  return t;
}

// An image-shaped data set must have the network's image shape, not only its
// number of values (a 3x32x32 CIFAR image read as 32x32x3 would pass the count).
void check_image_shape(const sim::Dataset& d, const sim::Shape3& in) {
  if (in.flat || d.rows <= 1 || d.cols <= 1 || d.channels * d.rows * d.cols != d.features()) return;
  if (d.channels != in.c || d.rows != in.h || d.cols != in.w)
    throw InputError("data", fmt::format("images are [{}, {}, {}] (C, H, W), the network takes {}", d.channels, d.rows, d.cols,
                                         in.text()));
}

// The test images one forward pass takes: up to 256 (as Net::predict), fewer
// where the pass would need more than the memory limit; refused, naming the
// network and its largest layer, when one image alone would.
Eigen::Index evaluation_chunk(const sim::Net& net, const EvaluateCommandOptions& o) {
  const std::uint64_t limit = memory_limit_bytes(o.max_memory_gib);
  const int threads = omp_get_max_threads();
  Eigen::Index chunk = 256;
  while (chunk > 1 && net.forward_bytes(chunk, threads) > double(limit)) chunk /= 2;
  std::size_t layer = 0;
  const double need = net.forward_bytes(chunk, threads, &layer);
  if (need > double(limit))
    throw InputError(fmt::format("--net: {}: {} needs about {} of memory for one test image (its input {} and output "
                                 "{}{}), more than {}; refusing",
                                 o.net, sim::layer_label(net, layer), memory_text(need), net.layers[layer].in.text(),
                                 net.layers[layer].out.text(),
                                 net.layers[layer].kind == sim::LayerKind::Conv2d ? " and its im2col patches" : "",
                                 limit_text(o.max_memory_gib, limit)));
  return chunk;
}

// The predictions of the test images at clip level k, a chunk at a time;
// logits that are not finite (inputs or weights beyond float's range) are
// refused, naming the first image and the first layer where they appear:
// an accuracy of inf and NaN logits means nothing.
std::vector<int> checked_predictions(const sim::Net& net, const sim::Dataset& test, float k, Eigen::Index chunk) {
  std::vector<int> out;
  out.reserve(std::size_t(test.size()));
  for (Eigen::Index first = 0; first < test.size(); first += chunk) {
    const Eigen::Index n = std::min<Eigen::Index>(chunk, test.size() - first);
    const Eigen::MatrixXf z = net.forward(test.images.middleCols(first, n), k);
    for (Eigen::Index j = 0; j < n; ++j) {
      if (!z.col(j).allFinite()) {
        const Eigen::VectorXf x = test.images.col(first + j);
        throw InputError("data", fmt::format("test image {} gives logits that are not finite (inf or NaN), first at {} "
                                             "(its largest input value in magnitude is {:g}); no accuracy is computed "
                                             "from them",
                                             first + j, net.first_non_finite_layer(x, k), x.cwiseAbs().maxCoeff()));
      }
      Eigen::Index best = 0;
      for (Eigen::Index i = 1; i < z.rows(); ++i)
        if (z(i, j) > z(best, j)) best = i;  // strict: ties go to the lowest index, as Net::predict
      out.push_back(static_cast<int>(best));
    }
  }
  return out;
}

}  // namespace

std::uint64_t memory_limit_bytes(double gib) {
  if (gib == 0) {
    const double pages = static_cast<double>(::sysconf(_SC_PHYS_PAGES)), size = static_cast<double>(::sysconf(_SC_PAGESIZE));
    return pages > 0 && size > 0 ? static_cast<std::uint64_t>(pages * size) : std::numeric_limits<std::uint64_t>::max();
  }
  if (!(gib > 0) || !(gib <= 1e6)) throw InputError(fmt::format("--max-memory: {} is not a number of GiB in (0, 1e6]", gib));
  return static_cast<std::uint64_t>(gib * static_cast<double>(std::uint64_t(1) << 30));
}

TrainCommandResult run_train(TrainCommandOptions o, const std::function<void(const TrainArchitecture&)>& on_architecture) {
  check_arch_options(o);
  check_ranges(o);
  (void)memory_limit_bytes(o.max_memory_gib);  // fail fast, naming --max-memory
  if (o.arch == "mlp") o.cfg.hidden = parse_widths(o.hidden);
  (void)activations::parse_activation(o.cfg.activation);  // fail fast, naming --activation
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
  return o.arch == "mlp" ? train_and_save_mlp(o, split, meta) : train_and_save_vgg(o, split, meta, on_architecture);
}

void write(DocumentWriter& w, const TrainCommandResult& r) {
  const Object doc(w, "");
  put(w, "output", r.output);
  put(w, "arch", r.arch);
  put(w, "seconds", r.seconds);
  put(w, "train_accuracy", r.train_accuracy);
  put(w, "test_accuracy", r.test_accuracy);
  const Array epochs(w, "epochs");
  for (const auto& e : r.epochs) {
    const Object epoch(w, "");
    put(w, "epoch", e.epoch);
    put(w, "loss", e.mean_loss);
    put(w, "train_accuracy", e.train_accuracy);
  }
}

nlohmann::ordered_json to_json(const TrainCommandResult& r) { return json_of(r); }

EvaluateCommandResult run_evaluate(const EvaluateCommandOptions& o) {
  const auto clips = parse_clips(o.clips);  // bad input before any loading
  (void)memory_limit_bytes(o.max_memory_gib);
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
  const Eigen::Index chunk = evaluation_chunk(net, o);  // before the data are read
  const auto split = sim::load_data(o.data);
  // No test images is an error (their accuracy read as 0%), as in simulate network.
  const auto test = sim::simulation_subset(split.test, 0, net.input_size(), net.output_size());
  check_image_shape(test, net.input);
  EvaluateCommandResult r{test.size(), net.batchnorm_folded, net.batchnorm_fold_error, {}};
  for (float k : clips) {
    auto pred = checked_predictions(net, test, k, chunk);
    int correct = 0;
    for (std::size_t i = 0; i < pred.size(); ++i) correct += pred[i] == test.labels[i];
    const double acc = double(correct) / double(pred.size());
    r.rows.push_back({k, acc, o.predictions.empty() ? std::vector<int>{} : std::move(pred)});
  }
  return r;
}

void write_predictions(const EvaluateCommandOptions& o, const EvaluateRow& row) {
  std::string text;
  for (int p : row.predictions) text += std::to_string(p) + "\n";
  sim::write_files_atomically({{o.predictions, std::vector<std::uint8_t>(text.begin(), text.end())}});
}

void write(DocumentWriter& w, const EvaluateCommandResult& r) {
  const Array doc(w, "");
  for (const auto& row : r.rows) {
    const Object o(w, "");
    if (row.clip > 0)
      put(w, "clip", row.clip);
    else
      put(w, "clip", "inf");
    put(w, "test_accuracy", row.test_accuracy);
  }
}

nlohmann::ordered_json to_json(const EvaluateCommandResult& r) { return json_of(r); }

}  // namespace ctmc::commands
