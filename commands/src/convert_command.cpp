#include "ctmc/commands/convert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <filesystem>

#include "ctmc/activations/activation.hpp"
#include "ctmc/analysis/fit.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/commands/command_line.hpp"
#include "ctmc/commands/layer_fit.hpp"
#include "ctmc/commands/report_writer.hpp"
#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/sim/nets/net.hpp"
#include "ctmc/sim/engines/net_synapse.hpp"
#include "ctmc/sim/engines/network_sim.hpp"
#include "ctmc/solvers/model.hpp"

namespace fs = std::filesystem;

namespace ctmc::commands {
namespace {

// Train images per forward pass while sampling.
constexpr Eigen::Index kBatch = 256;

void check_options(const ConvertOptions& o) {
  if (o.fit_images < 1) throw InputError("--fit-images", fmt::format("{} must be at least 1", o.fit_images));
  if (o.samples < 2) throw InputError("--samples", fmt::format("{} must be at least 2", o.samples));
  if (o.starts < 1) throw InputError("--starts", fmt::format("{} must be at least 1", o.starts));
  if (o.output_dir.empty()) throw InputError("--output-dir", "give the folder to write");
}

// The folder as ReportWriter takes it: the parent (created when missing) and
// the folder's own name.
std::pair<std::string, std::string> split_folder(const std::string& dir) {
  const fs::path p = fs::path(dir).lexically_normal();
  const std::string name = (p.has_filename() ? p.filename() : p.parent_path().filename()).string();
  if (name.empty() || name == "." || name == "..")
    throw InputError("--output-dir", fmt::format("'{}' does not name a folder of its own (e.g. converted/)", dir));
  const fs::path parent = p.has_filename() ? p.parent_path() : p.parent_path().parent_path();
  return {parent.empty() ? "." : parent.string(), name};
}

}  // namespace

std::vector<std::string> layer_targets(const sim::Net& net, const std::vector<sim::NetStage>& stages,
                                       const std::string& output_activation) {
  std::vector<std::string> t;
  for (std::size_t s = 0; s + 1 < stages.size(); ++s) t.push_back(net.layers[stages[s].last].activation);
  if (!output_activation.empty()) {
    (void)activations::parse_activation(output_activation, "--output-activation");
    t.push_back(output_activation);
  } else {
    t.push_back(t.empty() || rectified_linear(t.back()) ? "relu" : t.back());
  }
  for (const std::string& a : t) (void)activations::parse_activation(a, "--net: activation");
  return t;
}

std::vector<std::vector<float>> sample_preactivations(const sim::Net& net, const sim::Dataset& train,
                                                      const std::vector<int>& images) {
  std::vector<std::string> phi;
  for (const sim::NetLayer& L : net.layers)
    if (L.activation != "linear") phi.push_back(L.activation);
  const std::size_t S = images.size();
  std::vector<std::vector<float>> z(S);
  const int needed = *std::max_element(images.begin(), images.end());
  const auto keep = [&](std::size_t l, Eigen::Index first, const Eigen::MatrixXf& m) {
    const Eigen::Index cols = std::min<Eigen::Index>(m.cols(), images[l] - first);
    if (cols > 0) z[l].insert(z[l].end(), m.data(), m.data() + m.rows() * cols);
  };
  for (Eigen::Index b = 0; b < needed; b += kBatch) {
    const Eigen::MatrixXf x = train.images.middleCols(b, std::min<Eigen::Index>(kBatch, needed - b));
    const Eigen::MatrixXf logits = net.forward_with(x, [&](std::size_t s, Eigen::MatrixXf& m) {
      keep(s, b, m);
      sim::apply_activation(phi[s], m);
    });
    keep(S - 1, b, logits);
  }
  return z;
}

ConvertLayer fit_spiking_layer(ReportWriter& w, const SpikingLayerFit& f, std::size_t l, const std::string& target,
                               std::vector<float> values, int images) {
  ConvertLayer cl;
  cl.target = target;
  cl.family = conversion_family(target);
  cl.values = values.size();
  cl.images = images;
  cl.units = values.size() / static_cast<std::size_t>(images);
  const std::string tag = f.tag.empty() ? "" : f.tag + "-";
  cl.samples_file = fmt::format("samples-{}L{}.txt", tag, l + 1);
  cl.neuron_file = fmt::format("neuron-{}L{}.json", tag, l + 1);
  std::sort(values.begin(), values.end());
  const std::size_t n = std::min(f.samples, values.size());
  w.write_text(cl.samples_file,
               quantile_samples_text(values, n,
                                     fmt::format("layer {} preactivations of {} on {} training images: {} quantiles "
                                                 "((k + 1/2) / {}) of {} values",
                                                 l + 1, f.source, images, n, n, values.size())));
  const LayerFit lf = fit_layer_neuron(w.dir(), cl.samples_file, target, f.starts, f.seed, f.threads);
  const analysis::FitResult& r = lf.result;
  solvers::write_model_file(r.model, w.file_path(cl.neuron_file, fmt::format("layer {} neuron ({} fitted to {})",
                                                                            l + 1, cl.family, target)));
  cl.mse = r.mse;
  cl.max_abs_error = r.max_abs_error;
  cl.lo = lf.problem.data.h.front();
  cl.hi = lf.problem.data.h.back();
  return cl;
}

std::vector<int> preactivation_images(const sim::Net& net, const std::vector<sim::NetStage>& stages, int fit_images,
                                      int train_images) {
  std::vector<int> images;
  for (const sim::NetStage& st : stages) {
    const auto units = static_cast<std::size_t>(net.layers[st.last].out.size());
    images.push_back(static_cast<int>(std::max<std::size_t>(
        1, std::min({static_cast<std::size_t>(fit_images), static_cast<std::size_t>(train_images),
                     kMaxConvertValues / units}))));
  }
  return images;
}

namespace {

void present(ReportWriter& w, const ConvertOptions& o, const ConvertResult& res) {
  w.paragraph(fmt::format(
      "{} spiking layers of `{}`, each with a CTMC neuron fitted to its target on the quantiles of its "
      "preactivations over the first training images of {}. Run the network with the commands below "
      "(`commands.sh`).",
      res.layers.size(), o.net, sim::data_source_text(o.data)));
  Table t{{"layer", "units", "target", "family", "images", "domain", "MSE", "max error", "neuron"}, {}};
  for (std::size_t l = 0; l < res.layers.size(); ++l) {
    const ConvertLayer& c = res.layers[l];
    t.rows.push_back({std::to_string(l + 1), std::to_string(c.units), c.target, c.family, std::to_string(c.images),
                      fmt::format("[{}, {}]", fmt_g(c.lo, 4), fmt_g(c.hi, 4)), fmt_sci(c.mse), fmt_sci(c.max_abs_error),
                      c.neuron_file});
  }
  w.heading("Layers");
  w.table(t, "layers.csv");
  w.heading("Next");
  w.paragraph(fmt::format("One run at the paper's Case I (T = 50, tau = 0.02, r = 3), then a grid:\n\n```sh\n{}\n{}\n```",
                          res.simulate_command, res.sweep_command));
  w.heading("Methods", 3);
  w.paragraph(fmt::format(
      "Layer l's samples are min({}, N) quantiles, the k-th at (k + 1/2)/N of the sorted preactivations z of "
      "the layer (the logits for the output layer) over its images; a layer of U units samples "
      "min({}, {} / U) images. Families: two-state for relu and cliprelu_K, full three-state for softplus, "
      "three-state otherwise; rate bound 1000 for the piecewise-linear targets, 10 for the others (as `report "
      "conversion`). Each fit: {} multistart starts, seed {}, no widening of the bound; "
      "`(cd <this folder> && ctmc-snn fit --activation T --family F --samples samples-L<l>.txt --rate-bound R "
      "--no-widen --starts {} --seed {} --output neuron-L<l>.json)` repeats it.",
      o.samples, o.fit_images, kMaxConvertValues, o.starts, o.seed, o.starts, o.seed));
}

// The report writer names its folder's parent as out_root (`report --out`);
// here that folder is --output-dir's.
template <class F>
auto naming_output_dir(F&& f) {
  try {
    return f();
  } catch (const InputError& e) {
    if (e.input() != "out_root") throw;
    throw InputError("--output-dir", e.detail());
  }
}

ConvertResult convert(const ConvertOptions& o) {
  check_options(o);
  const auto [parent, name] = split_folder(o.output_dir);
  check_output_root(parent);  // before the fits, not after them
  const sim::Net net = sim::load_net(o.net);
  const std::vector<sim::NetStage> stages = sim::spiking_stages(net, o.net);
  const std::vector<std::string> targets = layer_targets(net, stages, o.output_activation);
  const sim::DatasetSplit data = sim::load_data(o.data);
  if (data.train.size() == 0)
    throw InputError("--data", "no training images: convert samples each layer's preactivations on the train split "
                               "(give --data with one, or --train-images and --train-labels)");
  sim::check_network_fits(data.train, net.input_size(), net.output_size());

  const std::vector<int> images = preactivation_images(net, stages, o.fit_images, data.train.size());
  std::vector<std::vector<float>> z = sample_preactivations(net, data.train, images);

  ReportFolderContext ctx;
  ctx.out_root = parent;
  ctx.command_line = o.command_line;
  ctx.seed = o.seed;
  ctx.threads = o.threads;
  ReportWriter w(ctx, name, fmt::format("Conversion of {} to a spiking network", o.net));
  ConvertResult res;
  res.folder = w.final_dir();
  std::vector<std::string> neurons;
  for (std::size_t l = 0; l < stages.size(); ++l) {
    res.layers.push_back(fit_spiking_layer(w, {"", o.net, o.samples, o.starts, o.seed, o.threads}, l, targets[l],
                                           std::move(z[l]), images[l]));
    neurons.push_back((fs::path(res.folder) / res.layers.back().neuron_file).string());
  }
  // One run at the paper's Case I (T = 50, tau = 0.02, r = 3), then a grid.
  SimulateNetworkCommand simulate{o.net, o.data, neurons, {}};
  simulate.options.opt.snn.T = 50;
  simulate.options.opt.snn.tau = 0.02;
  simulate.options.opt.rate = 3;
  simulate.options.opt.trials = 4;
  simulate.options.opt.seed = o.seed;
  res.simulate_command = simulate_network_command_line(simulate).text();
  SweepCommandOptions sweep;
  sweep.spec.nets = {o.net};
  sweep.spec.data = o.data;
  sweep.spec.neurons = neurons;
  sweep.spec.taus = {0.02, 0.05};
  sweep.spec.rates = {2, 3, 5};
  sweep.spec.T = {10, 30, 50};
  sweep.spec.trials = 2;
  sweep.spec.seed = o.seed;
  sweep.out = (fs::path(parent) / (name + "-sweep.json")).string();
  res.sweep_command = sweep_command_line(sweep).text();
  w.write_text("commands.sh", fmt::format("#!/bin/sh\n# Written by: {}\nset -e\n{}\n{}\n", o.command_line,
                                          res.simulate_command, res.sweep_command));
  present(w, o, res);
  w.finish();
  return res;
}

}  // namespace

ConvertResult run_convert(const ConvertOptions& o) { return naming_output_dir([&] { return convert(o); }); }

void write(commands::DocumentWriter& w, const ConvertResult& r) {
  using commands::put;
  const commands::Object doc(w, "");
  put(w, "folder", r.folder);
  {
    const commands::Array layers(w, "layers");
    for (const auto& c : r.layers) {
      const commands::Object layer(w, "");
      put(w, "target", c.target);
      put(w, "family", c.family);
      put(w, "neuron_file", c.neuron_file);
      put(w, "samples_file", c.samples_file);
      put(w, "units", c.units);
      put(w, "values", c.values);
      put(w, "images", c.images);
      put(w, "lo", c.lo);
      put(w, "hi", c.hi);
      put(w, "mse", c.mse);
      put(w, "max_abs_error", c.max_abs_error);
    }
  }
  put(w, "simulate_command", r.simulate_command);
  put(w, "sweep_command", r.sweep_command);
}

}  // namespace ctmc::commands
