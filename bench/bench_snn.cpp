// Spiking-network throughput (issue 5, "Performance"): a spiking MLP
// 784-256-128-10 of CTMC neurons on test images, dt = 0.005, T = 50
// (10,000 steps), one trial, spiking readout (all 394 neurons spike), one
// thread. Prints neuron-steps/s, synaptic events/s and CTMC transitions/s per
// core for a two-state ReLU network and a three-state sigmoid network, with
// the end-state and the exact sampler, next to the batched PyTorch CPU figures
// quoted in the issue (one thread) and the 5x targets.
//
// Usage: bench_snn [--net NET.json] [--sigmoid-net NET.json] [--data DIR]
//                  [--images N] [--T T] [--neurons-relu M.json] [--neurons-sigmoid M.json]
//                  [--only relu|sigmoid]
// Without --net the weights are random (He initialisation, fixed seed) with
// the hidden activation of each network; without data/mnist the inputs are
// uniform random pixels of the same size. Rates per second are intensive, so
// a run on fewer images estimates the full run (the program says so).
#include <fmt/format.h>

#include <time.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <string>

#include "ctmc/sim/dataset.hpp"
#include "ctmc/sim/manifest.hpp"
#include "ctmc/sim/network_sim.hpp"
#include "ctmc/sim/spiking.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/number_text.hpp"

using namespace ctmc;
using namespace ctmc::sim;

namespace {

sim::Mlp random_mlp(const std::string& hidden_activation, unsigned seed) {
  const int sizes[4] = {784, 256, 128, 10};
  std::mt19937 g(seed);
  sim::Mlp net;
  for (int l = 0; l < 3; ++l) {
    std::normal_distribution<float> w(0.0f, std::sqrt(2.0f / sizes[l]));
    DenseLayer d;
    d.W = Eigen::MatrixXf(sizes[l + 1], sizes[l]);
    for (int i = 0; i < d.W.size(); ++i) d.W.data()[i] = w(g);
    d.b = Eigen::VectorXf::Zero(sizes[l + 1]);
    d.activation = l == 2 ? "linear" : hidden_activation;
    net.layers.push_back(d);
  }
  return net;
}

// CPU time of the calling thread: "per core" figures that do not depend on
// what else the machine runs.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Figures {
  double wall = 0, seconds = 0, neuron_steps = 0, synops = 0, transitions = 0, spikes = 0;
  int correct = 0;
};

Figures run(const Mlp& net, const solvers::Model& neuron, const Dataset& train, const Dataset& test, double T,
            double dt, double tau, double r, SamplerKind kind) {
  const auto acts = layer_activations(net, train, Readout::Spike);
  std::vector<SpikingLayer> layers;
  for (std::size_t l = 0; l < acts.size(); ++l) {
    const double q = percentile(std::vector<float>(acts[l].data(), acts[l].data() + acts[l].size()), 99.0);
    const double alpha = r / q;
    layers.push_back({NeuronKernel(neuron, alpha / alpha_fit_of(neuron, "neuron"), "neuron"), alpha});
  }
  SpikingConfig cfg;
  cfg.T = T;
  cfg.dt = dt;
  cfg.tau = tau;
  cfg.sampler = kind;
  cfg.readout = Readout::Spike;
  const SpikingNetwork snn(net, std::move(layers), cfg);
  Figures f;
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = thread_cpu_seconds();
  for (int s = 0; s < test.size(); ++s) {
    const SampleRun run = snn.run(test.images.col(s).data(), sample_stream_seed(1, 0, s));
    f.synops += run.synops;
    f.transitions += static_cast<double>(run.transitions);
    f.spikes += static_cast<double>(run.spikes);
    f.correct += run.prediction == test.labels[s];
  }
  f.seconds = thread_cpu_seconds() - c0;
  f.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  f.neuron_steps = static_cast<double>(test.size()) * static_cast<double>(snn.steps()) *
                   static_cast<double>(snn.spiking_neurons());
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  std::string net_path, sig_net_path, data_dir = "data/mnist", relu_path, sig_path, only;
  int images = 100;
  double T = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--net") net_path = v;
    else if (a == "--sigmoid-net") sig_net_path = v;
    else if (a == "--data") data_dir = v;
    else if (a == "--images") images = std::stoi(v);
    else if (a == "--T") T = std::stod(v);
    else if (a == "--neurons-relu") relu_path = v;
    else if (a == "--neurons-sigmoid") sig_path = v;
    else if (a == "--only") only = v;
    else {
      fmt::print(stderr, "unknown option {}\n", a);
      return 2;
    }
  }
  const double dt = 0.005, tau = 0.02, r = 3;
  fmt::print("bench_snn: spiking MLP 784-256-128-10, spike readout (394 spiking neurons), dt = {}, T = {} ({} steps), "
             "tau = {}, r = {} (alpha_l = r / q99_l), one trial, one thread\n",
             dt, T, static_cast<long>(std::lround(T / dt)), tau, r);

  Dataset train, test;
  if (std::filesystem::exists(data_dir)) {
    const DatasetSplit d = load_dataset_dir(data_dir);
    train = d.train;
    test = d.test.head(images);
    fmt::print("data: {} (q99 from {} training images; {} test images)\n", data_dir, train.size(), test.size());
  } else {
    std::mt19937 g(5);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    test.images = Eigen::MatrixXf(784, images);
    for (int i = 0; i < test.images.size(); ++i) test.images.data()[i] = u(g);
    test.labels.assign(images, 0);
    train = test;
    fmt::print("data: {} not found; using {} random uniform [0,1] inputs of size 784 (q99 from the same inputs)\n",
               data_dir, images);
  }
  if (images < 1000)
    fmt::print("NOTE: {} images instead of the issue's 1000; the per-second figures are rates and estimate the full "
               "run (its wall time ~ {:.0f}x this run's)\n",
               test.size(), 1000.0 / test.size());

  // Neurons: fixed here unless given. Two-state ReLU: a = max(0, H) (spike),
  // d = 100 (a fitted ReLU neuron pushes d to its bound; nu = a d / (a + d)).
  solvers::Model relu = relu_path.empty()
                            ? solvers::two_state_model({0, solvers::Rational(1)}, {solvers::Rational(100), 0})
                            : solvers::read_model_file(relu_path);
  // Three-state sigmoid: least-squares fit of sigmoid on 121 points of
  // [-6, 6] (MSE 9.8e-4, cf. REFERENCES.md: about 9.7e-4), b at its lower
  // bound 1e-6 (the family is not identifiable; the fit is by curve).
  const auto q = [](const char* t) { return solvers::parse_input_value(t, "bench"); };
  solvers::Model sig = sig_path.empty() ? solvers::three_state_model({q("0.604311"), q("0.268193")}, {q("1e-6"), 0},
                                                                     {q("4.430373"), q("-0.447531")}, {q("49.36232"), 0})
                                        : solvers::read_model_file(sig_path);
  fmt::print("two-state ReLU neuron ({}): {}\n", relu_path.empty() ? "built in" : relu_path,
             solvers::model_to_json(relu).dump());
  fmt::print("three-state sigmoid neuron ({}): {}\n", sig_path.empty() ? "built in" : sig_path,
             solvers::model_to_json(sig).dump());

  const Mlp relu_net = net_path.empty() ? random_mlp("relu", 1) : load_network(net_path);
  const Mlp sig_net = sig_net_path.empty() ? random_mlp("sigmoid", 2) : load_network(sig_net_path);
  fmt::print("weights: ReLU net {}, sigmoid net {}\n\n", net_path.empty() ? "random (He init, seed 1)" : net_path,
             sig_net_path.empty() ? "random (He init, seed 2)" : sig_net_path);

  struct Row {
    const char* name;
    const Mlp* net;
    const solvers::Model* neuron;
    SamplerKind kind;
    double pytorch;
  };
  // PyTorch per-core figures from the issue; exact path sampling about 7x slower.
  const Row rows[] = {{"two-state ReLU", &relu_net, &relu, SamplerKind::EndState, 1.08e8},
                      {"two-state ReLU", &relu_net, &relu, SamplerKind::Exact, 1.08e8 / 7},
                      {"three-state sigmoid", &sig_net, &sig, SamplerKind::EndState, 3.3e7},
                      {"three-state sigmoid", &sig_net, &sig, SamplerKind::Exact, 3.3e7 / 7}};
  fmt::print("{:<20} {:<10} {:>8} {:>13} {:>13} {:>13} {:>11} {:>8} {:>9} {:>9} {:>7}\n", "network", "sampler",
             "cpu s", "neuron-st/s", "syn-ev/s", "transit/s", "spk/neuron", "acc %", "PyTorch", "target", "ratio");
  for (const Row& row : rows) {
    if (!only.empty() && std::string(row.name).find(only) == std::string::npos) continue;
    const Figures f = run(*row.net, *row.neuron, train, test, T, dt, tau, r, row.kind);
    const double ns = f.neuron_steps / f.seconds;
    fmt::print("{:<20} {:<10} {:>8.2f} {:>13.3e} {:>13.3e} {:>13.3e} {:>11.3f} {:>8.1f} {:>9.2e} {:>9.2e} {:>6.2f}x\n",
               row.name, sampler_name(row.kind), f.seconds, ns, f.synops / f.seconds, f.transitions / f.seconds,
               f.spikes / (static_cast<double>(test.size()) * 394), 100.0 * f.correct / test.size(), row.pytorch,
               5 * row.pytorch, ns / row.pytorch);
  }
  fmt::print("\nAll rates are per CPU-second of the simulating thread (CLOCK_THREAD_CPUTIME_ID), i.e. per core.\n");
  fmt::print("ratio = neuron-steps/s over the PyTorch figure (target >= 5x). Exact and end-state share one path "
             "simulation here (end-state draws the end state from the exact law), so they cost the same.\n");
  return 0;
}
