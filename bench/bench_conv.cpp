// Spiking VGG-11 throughput: the strided-convolution VGG-11 of the paper's
// MNIST experiments (VGG-11's plan 64, M, 128, M, 256, 256, M, 512, 512, M,
// 512, 512, M of 3x3 convolutions, padding 1, each M a 3x3 convolution of
// stride 2; relu; flatten and a linear classifier: 13 spiking conv layers
// and a spiking output layer), channels scaled by --width, random He weights
// (fixed seed), on 28x28 inputs (the MNIST digits when data/mnist exists).
//
// Prints, per core (CPU seconds of the simulating threads):
//   1. the spiking engine (event-driven: each spike scatters its kernel
//      slice, net_synapse.hpp): synaptic events (SynOps) per second and
//      neuron-steps per second, on 1 and 2 threads (the parallel figure as in
//      bench_snn: the 1-thread CPU time over the 2 threads' CPU time, x 2);
//      target: at least 2e9 synaptic events per second per core;
//   2. the dense per-step alternative measured on the same layers: one
//      im2col + matrix product per layer and step on a spike image of the
//      density the run measured, its CPU time per image for the whole window
//      beside the event-driven engine's whole time per image (the dense
//      propagation alone, without the neurons' updates, so the ratio is a
//      lower bound on what the dense path would cost);
//   3. the ANN forward (Net::forward: im2col + product per image) beside a
//      batched im2col + one product per layer, the usual baseline, with the
//      largest difference of their logits.
//
// Usage: bench_conv [--width W] [--images N] [--T T] [--dt DT] [--tau TAU]
//                   [--rate R] [--data DIR]
// Defaults: width 0.25, 20 images, T 5, dt 0.005, tau 0.02, r 3 (the
// paper's Case I scale; its T is 50, a rate per second does not depend on T).
#include <fmt/format.h>

#include <omp.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "thread_clock.hpp"
#include "ctmc/sim/dataset.hpp"
#include "ctmc/sim/net.hpp"
#include "ctmc/sim/net_synapse.hpp"
#include "ctmc/sim/network_sim.hpp"
#include "ctmc/sim/spiking.hpp"
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
  for (const SampleRun& r : runs) {
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

// CPU seconds of one step's dense propagation into every conv layer after the
// first (its input is the previous layer's spike image at the density
// `density[l-1]`), averaged over `reps` steps, then times the window's steps.
double dense_seconds_per_image(const Net& net, const std::vector<double>& density, std::int64_t steps) {
  std::mt19937 g(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  double per_step = 0;
  const int reps = 50;
  for (std::size_t l = 1; l + 2 < net.layers.size(); ++l) {  // conv layers 2..13
    const NetLayer& L = net.layers[l];
    const int P = L.out.h * L.out.w, K = L.in.c * 9;
    const Eigen::MatrixXf Wt = weights_t(L);
    std::vector<float> spikes(static_cast<std::size_t>(L.in.size()));
    for (float& s : spikes) s = u(g) < density[l - 1] ? 1.0f : 0.0f;
    Eigen::MatrixXf patches(P, K), y(P, L.conv.out_channels);
    const double c0 = thread_cpu_seconds();
    for (int r = 0; r < reps; ++r) {
      im2col(L, spikes.data(), patches.data());
      y.noalias() = patches * Wt;
    }
    per_step += (thread_cpu_seconds() - c0) / reps;
  }
  return per_step * static_cast<double>(steps);
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

  const EngineFigures one = run_engine(snn, test, steps, 1);
  const EngineFigures two = run_engine(snn, test, steps, 2);
  fmt::print("\nevent-driven engine, per core:\n");
  fmt::print("  1 thread : {:.3e} synaptic events/s, {:.3e} neuron-steps/s ({:.2f} CPU s; {:.2f} spikes per neuron)\n",
             one.synops / one.cpu, one.neuron_steps / one.cpu, one.cpu,
             one.spikes / test.size() / static_cast<double>(snn.spiking_neurons()));
  fmt::print("  2 threads: {:.3e} synaptic events/s per core; speed-up {:.2f}x on 2 idle cores (wall {:.2f}x)\n",
             two.synops / two.cpu, 2 * one.cpu / two.cpu, one.wall / two.wall);
  fmt::print("  target 2e9 synaptic events/s per core: {:.2f}x of it\n", one.synops / one.cpu / 2e9);

  // The products below on this thread alone (Eigen would otherwise spread
  // them over OpenMP threads, whose CPU time this thread's clock misses).
  omp_set_num_threads(1);
  Eigen::setNbThreads(1);
  std::vector<double> density;
  for (std::size_t l = 0; l < one.layer_spikes.size(); ++l)
    density.push_back(one.layer_spikes[l] / test.size() / static_cast<double>(steps) /
                      static_cast<double>(snn.layer_size(l)));
  const double dense = dense_seconds_per_image(net, density, steps);
  const double event = one.cpu / test.size();
  fmt::print("\ndense per-step alternative (im2col + product per conv layer and step, at the measured spike densities "
             "{:.2e} .. {:.2e} per neuron and step):\n",
             *std::min_element(density.begin(), density.end()), *std::max_element(density.begin(), density.end()));
  fmt::print("  propagation alone {:.3f} CPU s per image vs the event-driven engine's whole run {:.3f} s: dense / "
             "event-driven >= {:.1f}x\n",
             dense, event, dense / event);

  const Eigen::MatrixXf x = test.images;
  const double a0 = thread_cpu_seconds();
  const Eigen::MatrixXf ours = net.forward(x);
  const double a1 = thread_cpu_seconds();
  const Eigen::MatrixXf base = batched_forward(net, x);
  const double a2 = thread_cpu_seconds();
  fmt::print("\nANN forward on {} images: Net::forward {:.3f} CPU s, batched im2col + product {:.3f} s (ratio {:.2f}); "
             "largest logit difference {:.2e}\n",
             test.size(), a1 - a0, a2 - a1, (a1 - a0) / (a2 - a1), (ours - base).cwiseAbs().maxCoeff());
  return 0;
}
