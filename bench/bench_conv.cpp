// Spiking VGG-11 throughput: the strided-convolution VGG-11 of the paper's
// MNIST experiments (VGG-11's plan 64, M, 128, M, 256, 256, M, 512, 512, M,
// 512, 512, M of 3x3 convolutions, padding 1, each M a 3x3 convolution of
// stride 2; relu; flatten and a linear classifier: 13 spiking conv layers
// and a spiking output layer), channels scaled by --width, random He weights
// (fixed seed), on 28x28 inputs (the MNIST digits when data/mnist exists).
//
// Prints, per core (CPU seconds of the simulating threads):
//   1. the spiking engine with each conv propagation of SpikingConfig::
//      conv_path in the same run: event-driven (each spike scatters its
//      kernel slice, net_synapse.hpp), dense (each step gathers per output
//      pixel) and auto (per layer and step by the step's spike density):
//      synaptic events (SynOps) per second and neuron-steps per second, the
//      dense / event-driven time ratio, and the event-driven engine on 1 and
//      2 threads (the parallel figure as in bench_snn: the 1-thread CPU time
//      over the 2 threads' CPU time, x 2); all three give the same spikes,
//      which the bench checks. Then the same for the vectorised kernel
//      (SpikingConfig::reference_kernel = false; its own random streams, so
//      other spikes of the same law), event-driven and auto, and the fast
//      kernel (SpikingConfig::fast_kernel: float32 lanes) likewise, with
//      each kernel's auto time against the reference kernel's ("Nx
//      reference"; issue 48: >= 3x on this random net). Target: at
//      least 2e9 synaptic events per second per core;
//   2. per conv layer fed by spikes: its input density, the share of steps
//      auto took densely, the event-driven scatter's own rate (synaptic
//      events per CPU second at density 0.05, no neuron updates: what bounds
//      the engine's figure), and the calibration of the switch (kDenseConvDensity):
//      one step's propagation timed both ways at densities 0.005 .. 1
//      (spikes per input neuron and step), and the density from which the
//      dense way is the cheaper;
//   3. the ANN forward (Net::forward: im2col + product per image) beside a
//      batched im2col + one product per layer, the usual baseline, with the
//      largest difference of their logits.
//
// Usage: bench_conv [--width W] [--images N] [--T T] [--dt DT] [--tau TAU]
//                   [--rate R] [--data DIR]
// Defaults: width 0.25, 20 images, T 5, dt 0.005, tau 0.02, r 3 (the
// paper's Case I scale; its T is 50, a rate per second does not depend on T).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <omp.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "thread_clock.hpp"
#include "ctmc/sim/formats/dataset.hpp"
#include "ctmc/sim/nets/net.hpp"
#include "ctmc/sim/engines/net_synapse.hpp"
#include "ctmc/sim/engines/network_sim.hpp"
#include "ctmc/sim/engines/spiking.hpp"
#include "ctmc/solvers/families.hpp"

using namespace ctmc;
using namespace ctmc::sim;

namespace {


NetLayer conv3x3(int in_c, int out_c, int stride, std::mt19937& g) {
  NetLayer L;
  L.kind = LayerKind::Conv2d;
  L.conv.in_channels = in_c;
  L.conv.out_channels = out_c;
  L.conv.win = Window2d{3, 3, stride, stride, 1, 1};
  std::normal_distribution<float> w(0.0f, std::sqrt(2.0f / static_cast<float>(9 * in_c)));
  L.conv.W.resize(static_cast<std::size_t>(out_c) * in_c * 9);
  for (float& x : L.conv.W) x = w(g);
  L.conv.b.assign(static_cast<std::size_t>(out_c), 0.0f);
  L.activation = "relu";
  return L;
}

Net strided_vgg11(double width) {
  std::mt19937 g(1);
  const auto ch = [&](int c) { return std::max(1, static_cast<int>(std::lround(c * width))); };
  const int plan[] = {64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0};  // 0: M
  Net net;
  net.input = Shape3{1, 28, 28, false};
  int c = 1;
  for (int p : plan) {
    if (p == 0) {
      net.layers.push_back(conv3x3(c, c, 2, g));
    } else {
      net.layers.push_back(conv3x3(c, ch(p), 1, g));
      c = ch(p);
    }
  }
  NetLayer flat;
  flat.kind = LayerKind::Flatten;
  net.layers.push_back(flat);
  NetLayer fc;
  fc.kind = LayerKind::Dense;
  std::normal_distribution<float> w(0.0f, std::sqrt(1.0f / static_cast<float>(c)));
  fc.dense.W = Eigen::MatrixXf(10, c);
  for (int i = 0; i < fc.dense.W.size(); ++i) fc.dense.W.data()[i] = w(g);
  fc.dense.b = Eigen::VectorXf::Zero(10);
  fc.dense.activation = "linear";
  fc.activation = "linear";
  net.layers.push_back(fc);
  net.infer_shapes("bench VGG-11");
  return net;
}

struct EngineFigures {
  double cpu = 0, wall = 0, synops = 0, neuron_steps = 0, spikes = 0;
  std::vector<double> layer_spikes;  // per spiking layer, all images
  std::vector<double> dense_steps;   // per layer l >= 1 (index l - 1), all images
  std::vector<std::vector<std::uint32_t>> counts;  // per image, all layers' counts in a row
};

EngineFigures run_engine(const SpikingNetwork& snn, const Dataset& test, std::int64_t steps, int threads) {
  const int n = test.size();
  EngineFigures f;
  std::vector<SampleRun> runs(static_cast<std::size_t>(n));
  std::vector<double> cpu(static_cast<std::size_t>(threads), 0.0);
  const auto w0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
  {
    const double c0 = thread_cpu_seconds();
#pragma omp for schedule(dynamic, 1)
    for (int s = 0; s < n; ++s) runs[static_cast<std::size_t>(s)] = snn.run(test.images.col(s).data(), 1000 + s);
    cpu[static_cast<std::size_t>(omp_get_thread_num())] = thread_cpu_seconds() - c0;
  }
  f.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  for (double c : cpu) f.cpu += c;
  f.layer_spikes.assign(snn.spiking_layers(), 0.0);
  f.dense_steps.assign(snn.spiking_layers(), 0.0);
  for (const SampleRun& r : runs) {
    for (std::size_t l = 0; l < r.dense_steps.size(); ++l) f.dense_steps[l] += r.dense_steps[l];
    auto& all = f.counts.emplace_back();
    for (const auto& c : r.counts) all.insert(all.end(), c.begin(), c.end());
    f.synops += r.synops;
    f.spikes += static_cast<double>(r.spikes);
    for (std::size_t l = 0; l < r.counts.size(); ++l)
      for (std::uint32_t c : r.counts[l]) f.layer_spikes[l] += c;
  }
  f.neuron_steps = static_cast<double>(n) * static_cast<double>(steps) * static_cast<double>(snn.spiking_neurons());
  return f;
}

// im2col of one C x H x W image for a conv layer: (OH*OW) x (C*9) patches.
void im2col(const NetLayer& L, const float* x, float* patches) {
  const Window2d& w = L.conv.win;
  const int P = L.out.h * L.out.w;
  for (int i = 0; i < L.in.c; ++i)
    for (int u = 0; u < w.kh; ++u)
      for (int v = 0; v < w.kw; ++v) {
        float* col = patches + static_cast<std::size_t>((i * w.kh + u) * w.kw + v) * P;
        for (int oy = 0; oy < L.out.h; ++oy)
          for (int ox = 0; ox < L.out.w; ++ox) {
            const int iy = oy * w.stride_h + u - w.pad_h, ix = ox * w.stride_w + v - w.pad_w;
            col[oy * L.out.w + ox] = iy >= 0 && iy < L.in.h && ix >= 0 && ix < L.in.w ? x[(i * L.in.h + iy) * L.in.w + ix] : 0.0f;
          }
      }
}

Eigen::MatrixXf weights_t(const NetLayer& L) {  // (C*9) x O: W[o, c, u, v] as column o
  const int K = L.in.c * 9;
  Eigen::MatrixXf Wt(K, L.conv.out_channels);
  for (int o = 0; o < L.conv.out_channels; ++o)
    for (int k = 0; k < K; ++k) Wt(k, o) = L.conv.W[static_cast<std::size_t>(o) * K + k];
  return Wt;
}

// One step's propagation through a conv stage at spike density d (each
// input spikes with probability d, once, in ascending order as the engine
// gives them), CPU seconds per step: event-driven and dense.
struct StepTimes {
  double event = 0, dense = 0;  // CPU seconds per step
  double events = 0;            // synaptic events per step (the spikes' fanouts)
};
StepTimes step_seconds(const LinearChain& chain, const std::vector<std::uint32_t>& fanout, double d, std::mt19937& g) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const int reps = 20;
  std::vector<std::vector<std::uint32_t>> sets(reps);
  for (auto& set : sets)
    for (int i = 0; i < chain.in_size(); ++i)
      if (u(g) < d) set.push_back(static_cast<std::uint32_t>(i));
  std::vector<double> cur(static_cast<std::size_t>(chain.out_size()), 0.0), src(static_cast<std::size_t>(chain.in_size()), 0.0);
  ChainScratch scratch;
  const double c0 = thread_cpu_seconds();
  for (const auto& set : sets)
    for (std::uint32_t i : set) chain.add_spike_stored(i, 0.5, cur.data(), scratch);
  const double c1 = thread_cpu_seconds();
  for (const auto& set : sets) {
    for (std::uint32_t i : set) src[i] = 0.5;
    chain.add_step_dense(src.data(), cur.data());
    for (std::uint32_t i : set) src[i] = 0.0;
  }
  const double c2 = thread_cpu_seconds();
  double events = 0;
  for (const auto& set : sets)
    for (std::uint32_t i : set) events += fanout[i];
  return {(c1 - c0) / reps, (c2 - c1) / reps, events / reps};
}

// Batched baseline: per layer one im2col of all images and one product.
Eigen::MatrixXf batched_forward(const Net& net, const Eigen::MatrixXf& x) {
  Eigen::MatrixXf a = x;
  for (const NetLayer& L : net.layers) {
    if (L.kind == LayerKind::Conv2d) {
      const int P = L.out.h * L.out.w, K = L.in.c * 9, B = static_cast<int>(a.cols());
      Eigen::MatrixXf patches(static_cast<Eigen::Index>(P) * B, K);
      std::vector<float> one(static_cast<std::size_t>(P) * K);
      for (int b = 0; b < B; ++b) {
        im2col(L, a.col(b).data(), one.data());
        for (int k = 0; k < K; ++k)
          for (int p = 0; p < P; ++p) patches(static_cast<Eigen::Index>(b) * P + p, k) = one[static_cast<std::size_t>(k) * P + p];
      }
      const Eigen::MatrixXf y = patches * weights_t(L);  // (B*P) x O
      Eigen::MatrixXf out(static_cast<Eigen::Index>(L.out.size()), B);
      for (int b = 0; b < B; ++b)
        for (int o = 0; o < L.conv.out_channels; ++o)
          for (int p = 0; p < P; ++p)
            out(static_cast<Eigen::Index>(o) * P + p, b) =
                std::max(0.0f, y(static_cast<Eigen::Index>(b) * P + p, o) + L.conv.b[static_cast<std::size_t>(o)]);
      a = std::move(out);
    } else if (L.kind == LayerKind::Dense) {
      a = (L.dense.W * a).colwise() + L.dense.b;
    }
  }
  return a;
}

// Section 3: the ANN forward against the batched baseline.
void print_ann_forward(const Net& net, const Dataset& test) {
  const Eigen::MatrixXf x = test.images;
  const double a0 = thread_cpu_seconds();
  const Eigen::MatrixXf ours = net.forward(x);
  const double a1 = thread_cpu_seconds();
  const Eigen::MatrixXf base = batched_forward(net, x);
  const double a2 = thread_cpu_seconds();
  fmt::print("\nANN forward on {} images: Net::forward {:.3f} CPU s, batched im2col + product {:.3f} s (ratio {:.2f}); "
             "largest logit difference {:.2e}\n",
             test.size(), a1 - a0, a2 - a1, (a1 - a0) / (a2 - a1), (ours - base).cwiseAbs().maxCoeff());
}

}  // namespace

int main(int argc, char** argv) {
  double width = 0.25, T = 5, dt = 0.005, tau = 0.02, r = 3;
  int images = 20;
  std::string data_dir = "data/mnist";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--width") width = std::stod(v);
    else if (a == "--images") images = std::stoi(v);
    else if (a == "--T") T = std::stod(v);
    else if (a == "--dt") dt = std::stod(v);
    else if (a == "--tau") tau = std::stod(v);
    else if (a == "--rate") r = std::stod(v);
    else if (a == "--data") data_dir = v;
    else {
      fmt::print(stderr, "bench_conv: unknown option {}\n", a);
      return 2;
    }
  }
  const Net net = strided_vgg11(width);
  Dataset train, test;
  if (std::filesystem::exists(std::filesystem::path(data_dir) / "t10k-images-idx3-ubyte")) {
    const DatasetSplit d = load_dataset_dir(data_dir);
    train = d.train.head(200);
    test = d.test.head(images);
  } else {
    std::mt19937 g(5);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    test.images = Eigen::MatrixXf(784, images);
    for (int i = 0; i < test.images.size(); ++i) test.images.data()[i] = u(g);
    test.labels.assign(static_cast<std::size_t>(images), 0);
    train = test;
  }
  const solvers::Model relu = solvers::two_state_model({0, solvers::Rational(1)}, {solvers::Rational(100), 0});
  const std::vector<double> q99 = layer_q99(net, train, {NeuronModel{relu, "relu"}}, Readout::Spike, OutputScale::Logits);
  std::vector<SpikingLayer> layers;
  for (double q : q99) layers.push_back({NeuronKernel(relu, r / q, "two-state relu"), r / q});
  SpikingConfig cfg;
  cfg.T = T;
  cfg.dt = dt;
  cfg.tau = tau;
  const SpikingNetwork snn(net, layers, cfg);
  const auto steps = static_cast<std::int64_t>(std::llround(T / dt));
  fmt::print("strided VGG-11, width {} ({} spiking layers, {} spiking neurons), {} {} images, T {} (dt {}, {} steps), "
             "tau {}, r {}, two-state ReLU neurons\n",
             width, snn.spiking_layers(), snn.spiking_neurons(), test.size(),
             train.size() == test.size() ? "random" : "MNIST test", T, dt, steps, tau, r);

  // The products below and the calibration on this thread alone (Eigen
  // would otherwise spread them over OpenMP threads, whose CPU time this
  // thread's clock misses).
  Eigen::setNbThreads(1);
  using CP = SpikingConfig::ConvPath;
  const auto engine = [&](CP path, bool reference, bool fast = false) {
    SpikingConfig c = cfg;
    c.conv_path = path;
    c.reference_kernel = reference;
    c.fast_kernel = fast;
    return std::make_unique<SpikingNetwork>(net, layers, c);
  };
  const auto ev = engine(CP::Event, true), de = engine(CP::Dense, true), au = engine(CP::Auto, true);
  const auto vev = engine(CP::Event, false), vau = engine(CP::Auto, false);
  const auto fev = engine(CP::Event, false, true), fau = engine(CP::Auto, false, true);
  // Each figure the least CPU time of 3 runs, the engines taking turns (the
  // first run of a process pays for cold caches and page faults).
  EngineFigures one, two, dense, autom, vone, vtwo, vauto, fone, fauto;
  const auto keep = [](EngineFigures& best, EngineFigures f) {
    if (best.cpu == 0 || f.cpu < best.cpu) best = std::move(f);
  };
  for (int rep = 0; rep < 3; ++rep) {
    keep(one, run_engine(*ev, test, steps, 1));
    keep(dense, run_engine(*de, test, steps, 1));
    keep(autom, run_engine(*au, test, steps, 1));
    keep(two, run_engine(*ev, test, steps, 2));
    keep(vone, run_engine(*vev, test, steps, 1));
    keep(vauto, run_engine(*vau, test, steps, 1));
    keep(vtwo, run_engine(*vev, test, steps, 2));
    keep(fone, run_engine(*fev, test, steps, 1));
    keep(fauto, run_engine(*fau, test, steps, 1));
  }
  const bool same = dense.counts == one.counts && autom.counts == one.counts && two.counts == one.counts;
  const bool vsame = vauto.counts == vone.counts && vtwo.counts == vone.counts;
  const auto line = [&](const char* name, const EngineFigures& f) {
    fmt::print("  {:<13}: {:.3e} synaptic events/s, {:.3e} neuron-steps/s ({:.2f} CPU s; {:.2f}x the event-driven time)\n",
               name, f.synops / f.cpu, f.neuron_steps / f.cpu, f.cpu, f.cpu / one.cpu);
  };
  fmt::print("\nspiking engine, 1 thread, per core ({:.2f} spikes per neuron; same spikes on every path: {}):\n",
             one.spikes / test.size() / static_cast<double>(snn.spiking_neurons()), same ? "yes" : "NO");
  line("event-driven", one);
  line("dense", dense);
  line("auto", autom);
  fmt::print("  dense / event-driven: {:.2f}x the time\n", dense.cpu / one.cpu);
  fmt::print("  event-driven on 2 threads: {:.3e} synaptic events/s per core; speed-up {:.2f}x on 2 idle cores (wall "
             "{:.2f}x)\n",
             two.synops / two.cpu, 2 * one.cpu / two.cpu, one.wall / two.wall);
  fmt::print("\nvectorised kernel (SpikingConfig::reference_kernel = false: its own random streams), 1 thread, per "
             "core ({:.2f} spikes per neuron; same spikes on both paths and on 2 threads: {}):\n",
             vone.spikes / test.size() / static_cast<double>(snn.spiking_neurons()), vsame ? "yes" : "NO");
  line("event-driven", vone);
  line("auto", vauto);
  fmt::print("  event-driven on 2 threads: {:.3e} synaptic events/s per core; speed-up {:.2f}x on 2 idle cores (wall "
             "{:.2f}x)\n",
             vtwo.synops / vtwo.cpu, 2 * vone.cpu / vtwo.cpu, vone.wall / vtwo.wall);
  fmt::print("\nfast kernel (SpikingConfig::fast_kernel: float32 lanes, its own random streams), 1 thread, per core "
             "({:.2f} spikes per neuron; same spikes on both paths: {}):\n",
             fone.spikes / test.size() / static_cast<double>(snn.spiking_neurons()),
             fauto.counts == fone.counts ? "yes" : "NO");
  line("event-driven", fone);
  line("auto", fauto);
  fmt::print("\nagainst the reference kernel on the same images, least CPU time of 3 runs, auto path each: vectorised "
             "{:.2f}x reference, fast {:.2f}x reference (issue 48's target on this random net: >= 3x)\n",
             autom.cpu / vauto.cpu, autom.cpu / fauto.cpu);
  fmt::print("\ntarget 2e9 synaptic events/s per core: reference kernel event-driven {:.2f}x of it, auto {:.2f}x; "
             "vectorised kernel event-driven {:.2f}x, auto {:.2f}x; fast kernel event-driven {:.2f}x, auto {:.2f}x\n",
             one.synops / one.cpu / 2e9, autom.synops / autom.cpu / 2e9, vone.synops / vone.cpu / 2e9,
             vauto.synops / vauto.cpu / 2e9, fone.synops / fone.cpu / 2e9, fauto.synops / fauto.cpu / 2e9);

  omp_set_num_threads(1);
  const std::vector<NetStage> stages = spiking_stages(net, "bench VGG-11");
  const std::vector<double> grid{0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0};
  fmt::print("\nconv layers fed by spikes (auto switches to dense from {} of the inputs spiking in a step):\n",
             kDenseConvDensity);
  fmt::print("  layer  input density  auto dense steps  scatter alone (events/s at 0.05)  dense/event step time at density {}  -> dense cheaper from\n",
             fmt::join(grid, ", "));
  std::mt19937 g(7);
  for (std::size_t l = 1; l < stages.size(); ++l) {
    const LinearChain chain(net, stages[l], snn.alpha(l - 1));
    if (!chain.dense_capable()) continue;
    const double density =
        one.layer_spikes[l - 1] / test.size() / static_cast<double>(steps) / static_cast<double>(snn.layer_size(l - 1));
    const std::vector<std::uint32_t> fanout = chain.fanouts();
    std::vector<std::string> ratios;
    double from = NAN, scatter_rate = NAN;
    for (double d : grid) {
      const StepTimes t = step_seconds(chain, fanout, d, g);
      const double e = t.event, dn = t.dense;
      if (d == 0.05) scatter_rate = t.events / t.event;
      ratios.push_back(fmt::format("{:.2f}", dn / e));
      if (std::isnan(from) && dn < e) from = d;
    }
    fmt::print("  {:>5}  {:>13.2e}  {:>15.1f}%  {:>32.3e}  {}  -> {}\n", l + 1, density,
               100 * autom.dense_steps[l - 1] / test.size() / static_cast<double>(steps), scatter_rate,
               fmt::join(ratios, " "),
               std::isnan(from) ? std::string("never") : fmt::format("{}", from));
  }

  print_ann_forward(net, test);
  return 0;
}
