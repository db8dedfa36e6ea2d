// simulate neuron, simulate network: the bodies of cli/cmd_simulate_neuron.cpp
// and cli/cmd_simulate_network.cpp (their --json documents), over the same
// library calls; the network also from in-memory weights and images.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core.hpp"
#include "ctmc/sim/dataset.hpp"
#include "ctmc/sim/if_baseline.hpp"
#include "ctmc/sim/manifest.hpp"
#include "ctmc/sim/network_sim.hpp"
#include "ctmc/sim/sampler.hpp"
#include "ctmc/sim/ssa.hpp"
#include "ctmc/sim/tensor_inputs.hpp"
#include "ctmc/solvers/counting.hpp"
#include "ctmc/solvers/errors.hpp"
#include "ctmc/solvers/exact.hpp"

namespace ctmc::python {
namespace {

using ojson = nlohmann::ordered_json;

constexpr double kZ = 4.4;
constexpr std::size_t kMinChecked = 100;
constexpr std::size_t kMaxTrials = 1000000000;
constexpr double kMaxExpectedTransitions = 1e11;
constexpr int kMaxThreads = 1024;

std::size_t parse_start(const std::string& text, const solvers::Model& m) {
  for (std::size_t i = 0; i < m.size(); ++i)
    if (m.states[i] == text) return i;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (!text.empty() && *end == '\0' && errno == 0 && v < m.size()) return static_cast<std::size_t>(v);
  throw InputError(fmt::format("--start: '{}' is neither 'stationary' nor a state of the model (name or index < {})",
                               text, m.size()));
}

sim::Tensor to_tensor(const TensorArg& t) {
  sim::Tensor out;
  out.dtype = "F64";
  out.shape = t.shape;
  out.values = t.values;
  return out;
}

// Numbers given as comma-separated text in the CLI (--layer-alpha).
std::vector<double> layer_alpha_list(const std::string& text) {
  std::vector<double> v;
  for (const auto& item : solvers::split_input_list(text, "--layer-alpha")) {
    if (item == "auto") {
      v.push_back(std::nan(""));
      continue;
    }
    std::size_t used = 0;
    double x = 0;
    try {
      x = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size())
      throw InputError(fmt::format("{}: '{}' is not a number", "--layer-alpha", item));
    v.push_back(x);
  }
  return v;
}

// The network from in-memory layers, as load_network builds it from a
// safetensors file: weights [out, in] row-major, rounded to float.
sim::Mlp network_of(const std::vector<LayerArg>& layers, const std::string& what) {
  sim::Mlp net;
  if (layers.empty()) throw InputError(what + ": no layers");
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const auto& a = layers[l];
    if (a.weight.shape.size() != 2)
      throw InputError(fmt::format("{}: {}: a weight must have 2 dimensions [out, in], got {}", what, a.weight.name,
                                   a.weight.shape.size()));
    const auto n_out = a.weight.shape[0], n_in = a.weight.shape[1];
    if (n_out < 1 || n_in < 1 || n_out > (1 << 24) || n_in > (1 << 24))
      throw InputError(fmt::format("{}: {}: shape [{}, {}] is not a layer", what, a.weight.name, n_out, n_in));
    sim::DenseLayer d;
    d.W.resize(n_out, n_in);
    for (std::int64_t i = 0; i < n_out; ++i)
      for (std::int64_t j = 0; j < n_in; ++j)
        d.W(i, j) = static_cast<float>(a.weight.values[std::size_t(i * n_in + j)]);
    d.b = Eigen::VectorXf::Zero(n_out);
    if (a.bias) {
      if (a.bias->shape.size() != 1 || a.bias->shape[0] != n_out)
        throw InputError(fmt::format("{}: {}: a bias of {} values expected for {}", what, a.bias->name, n_out,
                                     a.weight.name));
      for (std::int64_t i = 0; i < n_out; ++i) d.b(i) = static_cast<float>(a.bias->values[std::size_t(i)]);
    }
    d.activation = a.activation;
    net.layers.push_back(std::move(d));
  }
  net.validate(what);
  return net;
}

sim::DatasetSplit data_of(const NetworkArgs& a) {
  const bool test_spec = !a.test_images_spec.empty() || !a.test_labels_spec.empty();
  const bool train_spec = !a.train_images_spec.empty() || !a.train_labels_spec.empty();
  const auto pair = [](bool images, bool labels, const char* what) {
    if (images != labels) throw InputError(fmt::format("--{}-images and --{}-labels: give both or neither", what, what));
    return images;
  };
  const bool test_arr = pair(a.test_images.has_value(), a.test_labels.has_value(), "test");
  const bool train_arr = pair(a.train_images.has_value(), a.train_labels.has_value(), "train");
  sim::DatasetSplit d;
  if (test_spec || train_spec || !a.dir.empty()) {
    sim::DataSource s;
    s.dir = a.dir;
    s.test_images = a.test_images_spec;
    s.test_labels = a.test_labels_spec;
    s.train_images = a.train_images_spec;
    s.train_labels = a.train_labels_spec;
    // load_data needs test images from somewhere: arrays come after it.
    if (!s.dir.empty() || test_spec) d = sim::load_data(s);
    else if (train_spec) {
      pair(!s.train_images.empty(), !s.train_labels.empty(), "train");
      d.train = sim::dataset_from_tensors(sim::read_tensor_input(s.train_images, "--train-images"),
                                          sim::read_tensor_input(s.train_labels, "--train-labels"), s.train_images,
                                          s.train_labels);
    }
  } else if (!test_arr) {
    throw InputError("--data: give a data folder, or the test images as tensors (--test-images, --test-labels)");
  }
  if (test_arr)
    d.test = sim::dataset_from_tensors(to_tensor(*a.test_images), to_tensor(*a.test_labels), a.test_images->name,
                                       a.test_labels->name);
  if (train_arr)
    d.train = sim::dataset_from_tensors(to_tensor(*a.train_images), to_tensor(*a.train_labels), a.train_images->name,
                                        a.train_labels->name);
  if (!a.normalization.empty()) {
    const sim::Normalization n = sim::parse_normalization(a.normalization);
    sim::normalize(d.test, n);
    sim::normalize(d.train, n);
  }
  return d;
}

}  // namespace

std::string simulate_neuron_json(const ModelInput& mi, const NeuronArgs& o) {
  if (!std::isfinite(o.T) || o.T <= 0) throw InputError(fmt::format("--T: must be a finite time > 0, got {}", o.T));
  if (o.trials < 2) throw InputError("--trials: must be >= 2 (the variance needs two trials)");
  if (o.trials > kMaxTrials) throw InputError(fmt::format("--trials: {} is too many (at most {})", o.trials, kMaxTrials));
  if (o.threads < 0 || o.threads > kMaxThreads)
    throw InputError(fmt::format("--threads: {} is not in 0..{} (0 = all cores)", o.threads, kMaxThreads));
  if (!std::isfinite(o.alpha) || o.alpha <= 0) throw InputError("--alpha: must be finite and > 0");
  const auto model = load_model(mi);
  const auto H = solvers::parse_input_value(o.h, "--H");
  {
    const sim::SsaChain chain(model, H, o.alpha);
    double max_rate = 0;
    for (std::size_t i = 0; i < chain.size(); ++i) max_rate = std::max(max_rate, chain.exit_rate(i));
    const double work = max_rate * o.T * static_cast<double>(o.trials);
    if (!(work <= kMaxExpectedTransitions))
      throw InputError(fmt::format("--T/--trials: up to {:.3g} transitions expected (max exit rate {:.3g} x T {:g} x {} "
                                   "trials), beyond the budget of {:.0e}; lower --T or --trials",
                                   work, max_rate, o.T, o.trials, kMaxExpectedTransitions));
  }
  sim::SsaOptions so;
  so.T = o.T;
  so.trials = o.trials;
  so.seed = o.seed;
  so.threads = o.threads;
  so.rate_scale = o.alpha;
  if (o.start != "stationary") {
    so.start = sim::StartMode::State;
    so.start_state = parse_start(o.start, model);
  }
  const auto run = sim::simulate_neuron(model, H, so, mi.source);
  const auto st = sim::count_stats(run.counts[0]);
  const auto asym = solvers::asymptotic_counting<double>(model, H, mi.source);
  const auto exact = solvers::counting_moments<double>(model, H, run.initial, o.alpha * o.T, mi.source);
  const double flux = o.alpha * asym.rate, variance_rate = o.alpha * asym.variance_rate;
  const double z_mean = sim::z_score(st.mean, exact.mean, std::sqrt(std::max(0.0, exact.variance) / st.n));
  const bool var_testable = st.se_variance > 0 || exact.variance == 0;
  const double z_var = var_testable ? sim::z_score(st.variance, exact.variance, st.se_variance) : NAN;
  const bool checked = o.trials >= kMinChecked;
  const bool ok = !checked || (std::abs(z_mean) < kZ && (!var_testable || std::abs(z_var) < kZ));

  ojson j;
  j["model"] = mi.source;
  j["H"] = solvers::exact_text(H);
  j["T"] = o.T;
  j["alpha"] = o.alpha;
  j["trials"] = o.trials;
  j["seed"] = o.seed;
  j["start"] = o.start;
  j["transitions"] = run.transitions;
  j["empirical"] = {{"mean_count", st.mean},
                    {"rate", st.mean / o.T},
                    {"se_rate", st.se_mean / o.T},
                    {"variance_count", st.variance},
                    {"se_variance_count", st.se_variance},
                    {"variance_per_time", st.variance / o.T},
                    {"fano", st.mean > 0 ? st.variance / st.mean : NAN}};
  j["exact"] = {{"stationary_flux", flux},
                {"mean_count", exact.mean},
                {"rate", exact.mean / o.T},
                {"variance_count", exact.variance},
                {"asymptotic_variance_rate", variance_rate},
                {"asymptotic_fano", asym.rate > 0 ? asym.variance_rate / asym.rate : NAN}};
  j["agreement"] = {{"z_mean", z_mean},
                    {"z_variance", var_testable ? ojson(z_var) : ojson(nullptr)},
                    {"variance_tested", var_testable},
                    {"threshold", kZ},
                    {"checked", checked},
                    {"ok", ok}};
  ojson occ = ojson::object();
  for (std::size_t i = 0; i < model.size(); ++i)
    occ[model.states[i]] = {{"empirical", run.occupancy[i]}, {"stationary", asym.theta[i]}};
  j["occupancy"] = occ;
  // Beyond the CLI's document: the count of every trial (for the user's own statistics).
  j["counts"] = run.counts[0];
  return j.dump();
}

std::string simulate_network_json(const NetworkArgs& a) {
  if (a.threads < 0 || a.threads > kMaxThreads)
    throw InputError(fmt::format("--threads: {} is not in 0..{}", a.threads, kMaxThreads));
  if (a.trials < 0) throw InputError(fmt::format("--trials: need a number >= 0, got '{}'", a.trials));
  sim::NetworkSimOptions opt;
  opt.snn.T = a.T;
  opt.snn.tau = a.tau;
  opt.snn.dt = a.dt;
  opt.rate = a.rate;
  opt.trials = a.trials;
  opt.seed = a.seed;
  opt.threads = a.threads;
  opt.limit = a.limit;
  opt.snn.sampler = sim::parse_sampler(a.sampler);
  opt.snn.readout = sim::parse_readout(a.readout);
  opt.scale = sim::parse_scale_mode(a.scale);
  opt.snn.trace_weight = sim::parse_trace_weight(a.trace_weight);
  opt.output_scale = sim::parse_output_scale(a.output_scale);
  opt.subset = sim::parse_test_subset(a.subset);
  if (!a.layer_alpha.empty()) opt.layer_alpha = layer_alpha_list(a.layer_alpha);
  std::vector<sim::NeuronModel> neurons;
  for (const auto& m : a.neurons) neurons.push_back({load_model(m), m.source});
  if (neurons.empty()) throw InputError("--neurons: no model file given");
  const sim::Mlp net = a.net_path.empty() ? network_of(a.layers, a.net_name) : sim::load_network(a.net_path);
  const sim::DatasetSplit data = data_of(a);
  // The IF baseline first, as the CLI runs it (its bad input is found before the CTMC run).
  std::optional<sim::IfResult> ifr;
  if (!a.if_norm.empty()) {
    sim::IfOptions io;
    io.percentile = sim::parse_if_norm(a.if_norm);
    io.v0 = a.v0;
    io.steps = a.if_steps;
    io.readout = opt.snn.readout;
    io.threads = opt.threads;
    io.limit = opt.limit;
    io.subset = opt.subset;
    ifr = sim::simulate_if(net, data.train, data.test, io);
  }
  const sim::NetworkSimResult r = sim::simulate_network(net, data.train, data.test, neurons, opt);

  const double pp = 100.0;
  ojson j;
  j["net"] = a.net_path.empty() ? a.net_name : a.net_path;
  if (a.data_name.empty()) {
    sim::DataSource s;
    s.dir = a.dir;
    s.test_images = a.test_images_spec;
    s.test_labels = a.test_labels_spec;
    s.train_images = a.train_images_spec;
    s.train_labels = a.train_labels_spec;
    s.normalization = a.normalization;
    j["data"] = sim::data_source_text(s);
  } else {
    j["data"] = a.data_name;
  }
  j["test_images"] = r.samples;
  j["T"] = opt.snn.T;
  j["dt"] = opt.snn.dt;
  j["steps"] = r.steps;
  j["tau"] = opt.snn.tau;
  j["rate"] = opt.rate;
  j["scale"] = a.scale;
  j["sampler"] = a.sampler;
  j["sampler_rule"] = sim::sampler_rule(opt.snn.sampler);
  j["readout"] = a.readout;
  j["trace_weight"] = a.trace_weight;
  j["output_scale"] = a.output_scale;
  j["subset"] = a.subset;
  j["trials"] = opt.trials;
  j["seed"] = opt.seed;
  ojson layers = ojson::array();
  for (std::size_t l = 0; l < r.alpha.size(); ++l) {
    layers.push_back({{"layer", l + 1},
                      {"neuron", neurons.size() == 1 ? neurons[0].source : neurons[l].source},
                      {"alpha_fit", r.alpha_fit[l]},
                      {"q99", r.q99[l]},
                      {"alpha", r.alpha[l]}});
    const auto [lo, hi] = r.fit_domain[l];
    if (std::isnan(lo)) continue;
    layers.back()["fit_domain"] = {lo, hi};
    layers.back()["mean_field_inputs_outside_fit_domain"] = r.outside_fit_domain[l];
  }
  j["layers"] = layers;
  j["units"] = "accuracies in percent, gaps in percentage points";
  j["A_ANN"] = pp * r.acc_ann;
  j["A_MF"] = pp * r.acc_mf;
  j["A_SNN_mean"] = pp * r.acc_snn_mean;
  j["A_SNN_sd"] = pp * r.acc_snn_sd;
  ojson per_trial = ojson::array();
  for (double v : r.acc_snn) per_trial.push_back(pp * v);
  j["A_SNN_trials"] = per_trial;
  j["gap"] = pp * (r.acc_ann - r.acc_snn_mean);
  j["mean_field_mismatch"] = pp * (r.acc_ann - r.acc_mf);
  j["sampling_gap"] = pp * (r.acc_mf - r.acc_snn_mean);
  j["synops_per_sample_mean"] = r.synops_mean;
  j["synops_per_sample_sd"] = r.synops_sd;
  j["spikes_per_neuron"] = r.spikes_per_neuron;
  j["spiking_neurons"] = r.spiking_neurons;
  j["transitions_per_sample"] = r.transitions_per_sample;
  if (opt.snn.sampler == sim::SamplerKind::Euler) j["euler_renormalized_steps"] = r.euler_renormalized;
  if (ifr) {
    ojson lam = ojson::array();
    for (double v : ifr->lambda) lam.push_back(v);
    j["if_baseline"] = {{"normalisation", a.if_norm}, {"v0", a.v0},        {"steps", a.if_steps},
                        {"lambda", lam},              {"A_IF", pp * ifr->acc_if}, {"gap", pp * (ifr->acc_ann - ifr->acc_if)},
                        {"synops_per_sample_mean", ifr->synops_mean}, {"synops_per_sample_sd", ifr->synops_sd},
                        {"spikes_per_neuron", ifr->spikes_per_neuron}};
  }
  // Beyond the CLI's document: per (trial, sample), trial-major.
  j["predictions"] = r.predictions;
  j["synops"] = r.synops;
  return j.dump();
}

}  // namespace ctmc::python
