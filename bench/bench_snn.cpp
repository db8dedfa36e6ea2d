// Spiking-network throughput: a spiking MLP 784-256-128-10 of CTMC neurons
// on test images, dt = 0.005, T = 50 (10,000 steps), one trial, spiking
// readout (all 394 neurons spike). For a two-state ReLU network and a
// three-state sigmoid network, with the end-state and the exact sampler, it
// runs the reference kernel (Kernel::Reference: the previous
// per-neuron loop with one xoshiro256** stream per sample), the
// vectorised kernel (per-neuron Philox streams, double lanes) and the fast
// kernel (Kernel::Fast: float32 lanes) on the same images in
// the same process, and prints per core: neuron-steps/s, synaptic events/s
// and CTMC transitions/s of each, each one's ratio to the reference ("Nx
// reference"; issue 48's targets: >= 4x ReLU, >= 2.5x sigmoid), the fast kernel's
// figure on 2 threads against its 1-thread figure (target >= 1.9x), and the
// heap bytes one sample's run holds at its peak (target: within 2x).
//
// Usage: bench_snn [--net NET.json] [--sigmoid-net NET.json] [--data DIR]
//                  [--images N] [--T T] [--neurons-relu M.json] [--neurons-sigmoid M.json]
//                  [--only ReLU|sigmoid] [--threads N] [--kernels both|new|fast] [--repeats R]
// (--kernels new skips the reference runs, fast runs the fast kernel alone,
// e.g. to profile it).
// Without --net the weights are random (He initialisation, fixed seed) with
// the hidden activation of each network; without data/mnist the inputs are
// uniform random pixels of the same size. Rates per second are intensive, so
// a run on fewer images estimates the full run (the program says so).
//
// Per core = per CPU-second of the simulating threads
// (CLOCK_THREAD_CPUTIME_ID), so other programs on the machine do not enter.
// With K threads the parallel figure is K times the 1-thread CPU time over
// the K threads' CPU time together (the speed-up on K idle cores: the same
// work per core, samples shared out one at a time), printed next to the
// wall-clock speed-up, which depends on the machine's load.
// Each figure is the least CPU time (and, apart, the least wall time) of R
// runs (default 3), the configurations taking turns: a single run on a
// shared 2-core VM varies by about 20%, enough to move a ratio across its
// target either way.
// Heap bytes are those of operator new (this program replaces it to count);
// Eigen's vectors, allocated by malloc, are left out in both kernels alike.
#include <fmt/format.h>

#include <malloc.h>
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#include <chrono>
#include <filesystem>
#include <random>
#include <string>

#include "thread_clock.hpp"
#include "ctmc/sim/formats/dataset.hpp"
#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/sim/engines/network_sim.hpp"
#include "ctmc/sim/engines/spiking.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/number_text.hpp"

using namespace ctmc;
using namespace ctmc::sim;

// Heap accounting: bytes held through operator new, and the peak since reset.
namespace {
std::atomic<long long> g_heap_now{0}, g_heap_peak{0};
void* counted_alloc(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (!p) throw std::bad_alloc();
  const long long now = g_heap_now += static_cast<long long>(malloc_usable_size(p));
  long long peak = g_heap_peak.load();
  while (now > peak && !g_heap_peak.compare_exchange_weak(peak, now)) {
  }
  return p;
}
void counted_free(void* p) {
  if (!p) return;
  g_heap_now -= static_cast<long long>(malloc_usable_size(p));
  std::free(p);
}
}  // namespace
void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_free(p); }

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


struct Figures {
  double wall = 0, seconds = 0, neuron_steps = 0, synops = 0, transitions = 0, spikes = 0;
  int correct = 0;
  long long peak_bytes = 0;  // heap held by one sample's run at its peak
};

std::vector<SpikingLayer> make_layers(const Mlp& net, const solvers::Model& neuron, const Dataset& train, double r) {
  const auto acts = layer_activations(net, train, Readout::Spike);
  std::vector<SpikingLayer> layers;
  for (std::size_t l = 0; l < acts.size(); ++l) {
    const double q = percentile(std::vector<float>(acts[l].data(), acts[l].data() + acts[l].size()), 99.0);
    const double alpha = r / q;
    layers.push_back({NeuronKernel(neuron, alpha / alpha_fit_of(neuron, "neuron"), "neuron"), alpha});
  }
  return layers;
}

Figures run(const Mlp& net, const std::vector<SpikingLayer>& layers_in, const Dataset& test, double T, double dt,
            double tau, SamplerKind kind, Kernel kernel, int threads) {
  SpikingConfig cfg;
  cfg.T = T;
  cfg.dt = dt;
  cfg.tau = tau;
  cfg.sampler = kind;
  cfg.readout = Readout::Spike;
  cfg.kernel = kernel;
  const SpikingNetwork snn(net, layers_in, cfg);
  Figures f;
  {  // memory: one sample alone, heap peak over what was held before
    const long long base = g_heap_now.load();
    g_heap_peak = base;
    const SampleRun r0 = snn.run(test.images.col(0).data(), sample_stream_seed(1, 0, 0));
    f.peak_bytes = g_heap_peak.load() - base;
  }
  const int n = test.size();
  std::vector<SampleRun> runs(static_cast<std::size_t>(n));
  std::vector<double> cpu(static_cast<std::size_t>(threads), 0.0);
  const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
  {
    const double c0 = thread_cpu_seconds();
#pragma omp for schedule(dynamic, 1)
    for (int s = 0; s < n; ++s) {
      SampleRun r = snn.run(test.images.col(s).data(), sample_stream_seed(1, 0, s));
      r.counts.clear();
      runs[static_cast<std::size_t>(s)] = std::move(r);
    }
    cpu[static_cast<std::size_t>(omp_get_thread_num())] = thread_cpu_seconds() - c0;
  }
  f.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (double c : cpu) f.seconds += c;
  for (int s = 0; s < n; ++s) {
    const SampleRun& r = runs[static_cast<std::size_t>(s)];
    f.synops += r.synops;
    f.transitions += static_cast<double>(r.transitions);
    f.spikes += static_cast<double>(r.spikes);
    f.correct += r.prediction == test.labels[s];
  }
  f.neuron_steps = static_cast<double>(n) * static_cast<double>(snn.steps()) *
                   static_cast<double>(snn.spiking_neurons());
  return f;
}

// Keeps the run with the least CPU time, and the least wall time of any run.
void keep_best(Figures& best, const Figures& f) {
  const double wall = best.seconds == 0 ? f.wall : std::min(best.wall, f.wall);
  if (best.seconds == 0 || f.seconds < best.seconds) best = f;
  best.wall = wall;
}

}  // namespace

int main(int argc, char** argv) {
  std::string net_path, sig_net_path, data_dir = "data/mnist", relu_path, sig_path, only, kernels = "both";
  int images = 100, threads = 2, repeats = 3;
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
    else if (a == "--threads") threads = std::stoi(v);
    else if (a == "--kernels") kernels = v;
    else if (a == "--repeats") repeats = std::max(1, std::stoi(v));
    else {
      fmt::print(stderr, "unknown option {}\n", a);
      return 2;
    }
  }
  const double dt = 0.005, tau = 0.02, r = 3;
  fmt::print("bench_snn: spiking MLP 784-256-128-10, spike readout (394 spiking neurons), dt = {}, T = {} ({} steps), "
             "tau = {}, r = {} (alpha_l = r / q99_l), one trial\n",
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
  };
  const Row rows[] = {{"two-state ReLU", &relu_net, &relu, SamplerKind::EndState},
                      {"two-state ReLU", &relu_net, &relu, SamplerKind::Exact},
                      {"three-state sigmoid", &sig_net, &sig, SamplerKind::EndState},
                      {"three-state sigmoid", &sig_net, &sig, SamplerKind::Exact}};
  fmt::print("{:<20} {:<10} {:<10} {:>7} {:>12} {:>11} {:>11} {:>10} {:>7} {:>9} {:>7}\n", "network", "sampler",
             "kernel", "cpu s", "neuron-st/s", "syn-ev/s", "transit/s", "spk/neuron", "acc %", "heap KiB", "ratio");
  struct Scaling {
    std::string what;
    double one = 0, cpu_many = 0, wall_one = 0, wall_many = 0;
  };
  std::vector<Scaling> scaling;
  for (const Row& row : rows) {
    if (!only.empty() && std::string(row.name).find(only) == std::string::npos) continue;
    const std::vector<SpikingLayer> layers = make_layers(*row.net, *row.neuron, train, r);
    Figures new_f, old_f, fast_f, many;
    for (int rep = 0; rep < repeats; ++rep) {
      if (kernels != "fast") keep_best(new_f, run(*row.net, layers, test, T, dt, tau, row.kind, Kernel::Vectorised, 1));
      keep_best(fast_f, run(*row.net, layers, test, T, dt, tau, row.kind, Kernel::Fast, 1));
      if (kernels == "both")
        keep_best(old_f, run(*row.net, layers, test, T, dt, tau, row.kind, Kernel::Reference, 1));
      if (threads > 1) keep_best(many, run(*row.net, layers, test, T, dt, tau, row.kind, Kernel::Fast, threads));
    }
    if (kernels == "fast") new_f = fast_f;
    if (kernels != "both") old_f = new_f;
    const auto line = [&](const char* kernel, const Figures& f, const std::string& ratio) {
      fmt::print("{:<20} {:<10} {:<10} {:>7.2f} {:>12.3e} {:>11.3e} {:>11.3e} {:>10.3f} {:>7.1f} {:>9.1f} {:>7}\n",
                 row.name, sampler_name(row.kind), kernel, f.seconds, f.neuron_steps / f.seconds,
                 f.synops / f.seconds, f.transitions / f.seconds,
                 f.spikes / (static_cast<double>(test.size()) * 394), 100.0 * f.correct / test.size(),
                 static_cast<double>(f.peak_bytes) / 1024.0, ratio);
    };
    line("reference", old_f, "");
    line("vectorised", new_f, fmt::format("{:.2f}x reference", old_f.seconds / new_f.seconds));
    line("fast", fast_f, fmt::format("{:.2f}x reference", old_f.seconds / fast_f.seconds));
    if (threads > 1) {
      scaling.push_back({fmt::format("{} {}", row.name, sampler_name(row.kind)), fast_f.seconds, many.seconds,
                         fast_f.wall, many.wall});
    }
  }
  fmt::print("\nneuron-st/s, syn-ev/s, transit/s: per CPU-second of the simulating thread (CLOCK_THREAD_CPUTIME_ID), "
             "i.e. per core; ratio = reference CPU time / the kernel's CPU time on the same images; each the "
             "least of {} runs.\n",
             repeats);
  fmt::print("heap KiB: operator-new bytes held by one sample's run at its peak (target: within 2x of "
             "reference).\n");
  if (!scaling.empty()) {
    fmt::print("\nfast kernel, {} threads against 1 thread (target >= {:.2g}x); machine load average now {}:\n",
               threads, 0.95 * threads, [] {
                 double l[1] = {0};
                 return getloadavg(l, 1) == 1 ? fmt::format("{:.2f}", l[0]) : std::string("?");
               }());
    fmt::print("{:<32} {:>14} {:>14}\n", "", "by CPU time", "by wall time");
    for (const Scaling& x : scaling)
      fmt::print("{:<32} {:>13.2f}x {:>13.2f}x\n", x.what, threads * x.one / x.cpu_many, x.wall_one / x.wall_many);
    fmt::print("by CPU time: {} x the 1-thread CPU time over the CPU time of all {} threads together (the speed-up "
               "on idle cores: the threads' work per core against one thread's, samples shared out one by one); by "
               "wall time: elapsed time of 1 thread over that of {} threads on this machine as loaded now.\n",
               threads, threads, threads);
  }
  return 0;
}
