// The vectorised spiking kernel (spiking.cpp, run_vec) against independent
// references: its event-driven layer 1 against the per-step sampler of
// sampler.hpp (a different random stream and a different algorithm), its
// whole-network spike counts against the reference kernel's
// (Kernel::Reference) on an Mlp and on a conv net, and its
// determinism for 1, 2 and 3 threads and SSE2 or AVX; the same for the fast
// kernel (Kernel::Fast: float32 lanes, 32-bit draws).
//
// Two-sample tests. Spike counts are integers, compared by the two-sample
// Kolmogorov-Smirnov distance D = max_x |F_a(x) - F_b(x)| of the empirical
// CDFs, rejected above c sqrt((n + m) / (n m)) with c = sqrt(-ln(alpha/2) / 2)
// = 2.47 for alpha = 1e-5 (for discrete laws the test is conservative: the
// false-alarm rate is at most alpha). Power: at a point where the true CDFs
// differ by delta the empirical difference has standard deviation at most
// sqrt(1/(2n)) (n = m), so a true gap of delta >= (2.47 sqrt 2 + 2.33 / sqrt 2)
// / sqrt(n) = 5.14 / sqrt(n) is detected with probability >= 0.99
// (0.081 for n = 4000, 0.115 for n = 2000). Means are compared as well, by a
// z-test at kZ = 4.4 standard errors (false alarm about 1e-5), which detects
// a mean shift of (4.4 + 2.33) standard errors with probability 0.99.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "ctmc/core/errors.hpp"
#include "ctmc/sim/engines/network_sim.hpp"
#include "ctmc/sim/engines/simd.hpp"
#include "ctmc/sim/neurons/sampler.hpp"
#include "ctmc/sim/engines/spiking.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/solvers/model.hpp"
#include "spiking_fixtures.hpp"
#include "net_fixtures.hpp"

using namespace ctmc;
using namespace ctmc::sim;
using testing::dyadic_mlp;
using testing::three_state;
using solvers::Affine;
using solvers::Rational;

namespace {

constexpr double kZ = 4.4;
constexpr double kKsC = 2.47;  // sqrt(-ln(1e-5 / 2) / 2)

double ks_distance(std::vector<int> a, std::vector<int> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  std::size_t i = 0, j = 0;
  double d = 0;
  while (i < a.size() || j < b.size()) {
    const int x = j == b.size() || (i < a.size() && a[i] <= b[j]) ? a[i] : b[j];
    while (i < a.size() && a[i] == x) ++i;
    while (j < b.size() && b[j] == x) ++j;
    d = std::max(d, std::abs(static_cast<double>(i) / na - static_cast<double>(j) / nb));
  }
  return d;
}

double ks_critical(std::size_t n, std::size_t m) {
  const double a = static_cast<double>(n), b = static_cast<double>(m);
  return kKsC * std::sqrt((a + b) / (a * b));
}

// |mean_a - mean_b| in standard errors.
double mean_z(const std::vector<int>& a, const std::vector<int>& b) {
  const auto moments = [](const std::vector<int>& x, double& m, double& v) {
    m = 0;
    for (int c : x) m += c;
    m /= static_cast<double>(x.size());
    v = 0;
    for (int c : x) v += (c - m) * (c - m);
    v /= static_cast<double>(x.size() - 1);
  };
  double ma, va, mb, vb;
  moments(a, ma, va);
  moments(b, mb, vb);
  const double se = std::sqrt(va / static_cast<double>(a.size()) + vb / static_cast<double>(b.size()));
  return se > 0 ? std::abs(ma - mb) / se : (ma == mb ? 0.0 : INFINITY);
}

// a = max(0, H) (spike), d = 5.
solvers::Model two_state() { return solvers::two_state_model(Affine{0, Rational(1)}, Affine{Rational(5), 0}); }

}  // namespace

TEST_CASE("event-driven layer 1 against the per-step sampler: spike-count laws at several H") {
  // One spiking layer whose inputs are its biases (W = 0): neuron j sees the
  // constant H_j for the whole window, as layer 1 of any network does.
  const std::vector<float> H = {-0.375f, 0.0f, 0.5f, 1.5f};
  Mlp net;
  DenseLayer d;
  d.W = Eigen::MatrixXf::Zero(static_cast<Eigen::Index>(H.size()), 1);
  d.b = Eigen::Map<const Eigen::VectorXf>(H.data(), static_cast<Eigen::Index>(H.size()));
  d.activation = "linear";
  net.layers.push_back(d);
  const double alpha = 2, dt = 0.01, T = 3;
  const int n = 4000;
  const float x = 0;
  for (const auto& [model, name] : {std::pair{three_state(), "three-state"}, std::pair{two_state(), "two-state"}})
    for (SamplerKind kind : {SamplerKind::Exact, SamplerKind::EndState}) {
      const std::string model_name = name;
      CAPTURE(model_name);
      CAPTURE(sampler_name(kind));
      SpikingConfig cfg;
      cfg.T = T;
      cfg.dt = dt;
      cfg.sampler = kind;
      const SpikingNetwork snn(net, {{NeuronKernel(model, alpha, name), alpha}}, cfg);
      std::vector<std::vector<int>> event(H.size()), step(H.size());
      for (int s = 0; s < n; ++s) {
        const SampleRun r = snn.run(&x, sample_stream_seed(11, 0, static_cast<std::uint64_t>(s)));
        for (std::size_t j = 0; j < H.size(); ++j) event[j].push_back(static_cast<int>(r.counts[0][j]));
      }
      const NeuronKernel kernel(model, alpha, name);
      const StepSampler smp(kernel, kind, dt);
      Rng rng(99);
      StepCounts c;
      for (std::size_t j = 0; j < H.size(); ++j)
        for (int s = 0; s < n; ++s) {
          NeuronState st = smp.init(0, rng);
          int count = 0;
          for (std::int64_t k = 0; k < snn.steps(); ++k) count += static_cast<int>(smp.step(H[j], st, rng, c));
          step[j].push_back(count);
        }
      for (std::size_t j = 0; j < H.size(); ++j) {
        CAPTURE(H[j]);
        CHECK(ks_distance(event[j], step[j]) <= ks_critical(n, n));
        CHECK(mean_z(event[j], step[j]) < kZ);
      }
      // H = -0.375 silences the two-state neuron (a = 0) and not the
      // three-state one (a = 1/4, c = 1/8): both kernels agree on that too.
      const int silent_event = static_cast<int>(std::count(event[0].begin(), event[0].end(), 0));
      CHECK((silent_event == n) == (std::string(name) == "two-state"));
    }
}

// Each spiking neuron's count over n runs of each kernel on one image of a
// fixed net (an Mlp or a layer graph), two-state and three-state neurons
// (alpha 3 in every layer), both samplers the vectorised kernel (or, with
// `fast`, the fast kernel) has, against the reference kernel.
template <class Network>
void check_kernels_agree(const Network& net, const std::vector<float>& image, int n, bool fast = false) {
  const std::size_t layers_n = spiking_layer_count(net, Readout::Spike);
  for (const auto& [model, name] : {std::pair{three_state(), "three-state"}, std::pair{two_state(), "two-state"}})
    for (SamplerKind kind : {SamplerKind::Exact, SamplerKind::EndState}) {
      const std::string model_name = name;
      CAPTURE(model_name);
      CAPTURE(sampler_name(kind));
      std::vector<std::vector<int>> counts[2];
      for (int ref = 0; ref < 2; ++ref) {
        SpikingConfig cfg;
        cfg.T = 2;
        cfg.dt = 0.01;
        cfg.tau = 0.05;
        cfg.sampler = kind;
        cfg.kernel = ref == 1 ? Kernel::Reference : fast ? Kernel::Fast : Kernel::Vectorised;
        std::vector<SpikingLayer> layers;
        for (std::size_t l = 0; l < layers_n; ++l) layers.push_back({NeuronKernel(model, 3.0, name), 3.0});
        const SpikingNetwork snn(net, std::move(layers), cfg);
        counts[ref].assign(snn.spiking_neurons(), {});
        for (int s = 0; s < n; ++s) {
          const SampleRun r = snn.run(image.data(), sample_stream_seed(5, 0, static_cast<std::uint64_t>(s)));
          std::size_t at = 0;
          for (const auto& layer : r.counts)
            for (std::uint32_t c : layer) counts[ref][at++].push_back(static_cast<int>(c));
        }
      }
      double total = 0;
      for (std::size_t i = 0; i < counts[0].size(); ++i) {
        CAPTURE(i);
        CHECK(ks_distance(counts[0][i], counts[1][i]) <= ks_critical(n, n));
        CHECK(mean_z(counts[0][i], counts[1][i]) < kZ);
        for (int c : counts[0][i]) total += c;
      }
      CHECK(total > 5.0 * n);  // the net is not silent: the comparison has counts to compare
    }
}

TEST_CASE("new kernel against the reference kernel: spike-count laws on a fixed net") {
  // 6-5-4-3 net, every layer spiking.
  std::mt19937 g(41);
  const Mlp net = dyadic_mlp({6, 5, 4, 3}, "sigmoid", g);
  std::vector<float> image(6);
  for (float& v : image) v = static_cast<float>(g() % 9) / 8.0f;
  check_kernels_agree(net, image, 2000);
}

TEST_CASE("new kernel against the reference kernel on a conv net: spike-count laws") {
  // small_conv_net: conv 3x3 pad 1 (2 x 4 x 4), conv 3x3 stride 2 pad 1
  // (3 x 2 x 2; its current kept channel-last), flatten, dense 12 -> 2.
  const Net net = testing::small_conv_net(19);
  std::vector<float> image(16);
  for (int i = 0; i < 16; ++i) image[static_cast<std::size_t>(i)] = static_cast<float>((i * 5) % 8) / 8.0f;
  check_kernels_agree(net, image, 2000);
}

TEST_CASE("fast kernel against the reference kernel: spike-count laws on a fixed net and a conv net") {
  std::mt19937 g(41);
  const Mlp net = dyadic_mlp({6, 5, 4, 3}, "sigmoid", g);
  std::vector<float> image(6);
  for (float& v : image) v = static_cast<float>(g() % 9) / 8.0f;
  check_kernels_agree(net, image, 2000, true);
  const Net conv = testing::small_conv_net(19);
  std::vector<float> conv_image(16);
  for (int i = 0; i < 16; ++i) conv_image[static_cast<std::size_t>(i)] = static_cast<float>((i * 5) % 8) / 8.0f;
  check_kernels_agree(conv, conv_image, 2000, true);
}

TEST_CASE("vectorised and fast kernels: identical results for 1, 2 and 3 threads and for SSE2, AVX and AVX-512; the stream differs from the reference kernel's") {
  std::mt19937 g(43);
  // A hidden layer of 21 neurons: one whole AVX-512 block of 16 and a part
  // one, two whole AVX blocks of 8 and a part one, five SSE2 blocks and a
  // part one.
  const Mlp net = dyadic_mlp({8, 21, 3}, "relu", g);
  Dataset train, test;
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (auto [ds, m] : {std::pair{&train, 40}, std::pair{&test, 30}}) {
    ds->images = Eigen::MatrixXf(8, m);
    for (int i = 0; i < ds->images.size(); ++i) ds->images.data()[i] = u(g);
    ds->labels.resize(static_cast<std::size_t>(m));
    for (int i = 0; i < m; ++i) ds->labels[static_cast<std::size_t>(i)] = static_cast<int>(g() % 3);
  }
  const std::vector<NeuronModel> neurons{{three_state(), "three-state"}};
  for (bool fast : {false, true})
  for (SamplerKind kind : {SamplerKind::Exact, SamplerKind::EndState}) {
    CAPTURE(fast);
    CAPTURE(sampler_name(kind));
    NetworkSimOptions opt;
    opt.snn.T = 1;
    opt.snn.dt = 0.01;
    opt.snn.tau = 0.05;
    opt.snn.sampler = kind;
    opt.snn.checkpoints = {0.5};
    opt.snn.kernel = fast ? Kernel::Fast : Kernel::Vectorised;
    opt.rate = 20;
    opt.trials = 2;
    opt.seed = 77;
    std::vector<NetworkSimResult> res;
    for (int threads : {1, 2, 3}) {
      opt.threads = threads;
      res.push_back(simulate_network(net, train, test, neurons, opt));
    }
    // SSE2 instead of AVX (on a CPU without AVX both runs are SSE2's), and
    // AVX instead of the fast kernel's AVX-512 lanes (the same on a CPU
    // without AVX-512).
    allow_avx(false);
    opt.threads = 2;
    res.push_back(simulate_network(net, train, test, neurons, opt));
    allow_avx(true);
    allow_avx512(false);
    res.push_back(simulate_network(net, train, test, neurons, opt));
    allow_avx512(true);
    for (std::size_t t = 1; t < res.size(); ++t) {
      CHECK(res[t].predictions == res[0].predictions);
      CHECK(res[t].synops == res[0].synops);
      CHECK(res[t].spikes_per_neuron == res[0].spikes_per_neuron);
      CHECK(res[t].transitions_per_sample == res[0].transitions_per_sample);
      CHECK(res[t].windows[0].layer_rate_rel_rmse == res[0].windows[0].layer_rate_rel_rmse);
    }
    CHECK(res[0].spikes_per_neuron > 0);
    opt.snn.kernel = Kernel::Reference;
    opt.threads = 1;
    const NetworkSimResult ref = simulate_network(net, train, test, neurons, opt);
    CHECK(ref.synops != res[0].synops);  // another random stream, same law
  }
}

TEST_CASE("fast kernel: a chain it cannot hold is refused by name, not run on another kernel") {
  // The Bernstein chain of N = 2: six states (A0..A2, R0..R2), up to three exits.
  const solvers::Model six = solvers::bernstein_model({Rational(1), Rational(2), Rational(3)}, Rational(5),
                                                      Rational(1), Rational(-1), Rational(1));
  const Mlp net = dyadic_mlp({2, 3}, 7);
  SpikingConfig cfg;
  cfg.T = 1;
  cfg.dt = 0.01;
  cfg.kernel = Kernel::Fast;
  CHECK(kernel_used(cfg, false) == Kernel::Fast);
  const std::vector<SpikingLayer> layers{{NeuronKernel(six, 1.0, "bernstein"), 1.0}};
  CHECK_THROWS_WITH_AS(SpikingNetwork(net, layers, cfg), doctest::Contains("spiking layer 1 has 6 states"),
                       ctmc::InputError);
  // The same chain on the vectorised kernel runs, and Auto chooses it.
  cfg.kernel = Kernel::Vectorised;
  CHECK(SpikingNetwork(net, layers, cfg).kernel() == Kernel::Vectorised);
  cfg.kernel = Kernel::Auto;
  CHECK(SpikingNetwork(net, layers, cfg).kernel() == Kernel::Vectorised);
  // A two-state chain fits the fast kernel: Auto chooses that one for the
  // exact and end-state samplers, the reference kernel for the others.
  const std::vector<SpikingLayer> two{{NeuronKernel(two_state(), 1.0, "relu"), 1.0}};
  CHECK(SpikingNetwork(net, two, cfg).kernel() == Kernel::Fast);
  cfg.sampler = SamplerKind::EndState;
  CHECK(SpikingNetwork(net, two, cfg).kernel() == Kernel::Fast);
  cfg.sampler = SamplerKind::Uniformization;
  CHECK(SpikingNetwork(net, two, cfg).kernel() == Kernel::Reference);
}

TEST_CASE("fast kernel: a block of lanes at exit rate 0 skips its budget work; the law is the reference kernel's") {
  // 4-16-16-16-3, two-state ReLU neurons (a = max(0, H)). Spiking layer 2's
  // first eight neurons (one block of lanes) have negative weights and bias
  // -1: their H stays below 0 (traces are >= 0), so they rest at rate 0 for
  // the whole window. Every other neuron of layers 2..4 has a positive bias
  // and positive weights, so its exit rate is positive in either state.
  Mlp net = dyadic_mlp({4, 16, 16, 16, 3}, 11);
  for (DenseLayer& d : net.layers) {
    d.W.setConstant(0.25f);
    d.b.setConstant(1.0f);
  }
  net.layers[1].W.topRows(8).setConstant(-0.5f);
  net.layers[1].b.head(8).setConstant(-1.0f);
  const std::vector<float> image = {0.5f, 0.25f, 0.75f, 1.0f};
  SpikingConfig cfg;
  cfg.T = 1;
  cfg.dt = 0.01;
  cfg.tau = 0.05;
  const std::vector<SpikingLayer> layers(4, SpikingLayer{NeuronKernel(two_state(), 3.0, "two-state"), 3.0});
  // The lane width each setting runs: SSE2 4, AVX 8, AVX-512 16, as far as
  // the CPU has them.
  const bool has_avx = __builtin_cpu_supports("avx"), has_avx512 = has_avx && __builtin_cpu_supports("avx512f");
  for (SamplerKind kind : {SamplerKind::Exact, SamplerKind::EndState})
    for (int width : {16, 8, 4}) {
      CAPTURE(sampler_name(kind));
      CAPTURE(width);
      cfg.sampler = kind;
      cfg.kernel = Kernel::Fast;
      allow_avx(width > 4);
      allow_avx512(width > 8);
      const SpikingNetwork snn(net, layers, cfg);
      const SampleRun r = snn.run(image.data(), sample_stream_seed(3, 0, 0));
      allow_avx(true);
      allow_avx512(true);
      const std::uint64_t w = width == 16 && has_avx512 ? 16 : width >= 8 && has_avx ? 8 : 4;
      // Per step: layer 2's live lanes (8; its whole 16 where one vector
      // holds the dormant 8 too, which 8 or 4 lanes skip as blocks of their
      // own), layer 3 (16), the output layer's 3 neurons with their padding
      // up to the vector width (the vectors of padding alone, at rate 0,
      // skipped).
      const std::uint64_t layer2 = w == 16 ? 16 : 8;
      CHECK(r.budget_updates == static_cast<std::uint64_t>(snn.steps()) * (layer2 + 16 + w));
      CHECK(std::all_of(r.counts[1].begin(), r.counts[1].begin() + 8, [](std::uint32_t c) { return c == 0; }));
      CHECK(r.spikes > 0);
      cfg.kernel = Kernel::Reference;
      CHECK(SpikingNetwork(net, layers, cfg).run(image.data(), sample_stream_seed(3, 0, 0)).budget_updates == 0);
    }
  // The spike-count laws of both kernels on this net agree, neuron by neuron.
  check_kernels_agree(net, image, 2000, true);
}
