// The spiking simulator on layer graphs (spiking.hpp, net_synapse.hpp,
// network_sim.hpp): the same spikes as the dense engine for the same net
// written as convolutions, SynOps against fanouts counted by hand on a
// padded, strided convolution, the stages' columns against the ANN's own
// operations, thread-count invariance, layer-1 counts against the exact
// counting moments, the max-pooling refusal, and the event-driven and dense
// conv paths giving the same bits.
//
// Statistical check: fixed seeds, acceptance within kZ = 4.4 standard errors
// (two-sided false-alarm rate about 1e-5, normal approximation).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "ctmc/core/errors.hpp"
#include "ctmc/sim/engines/net_synapse.hpp"
#include "ctmc/sim/engines/network_sim.hpp"
#include "ctmc/sim/engines/simd.hpp"
#include "ctmc/sim/engines/spiking.hpp"
#include "ctmc/solvers/counting.hpp"
#include "ctmc/solvers/families.hpp"
#include "meanfield.hpp"  // sim/src (internal)
#include "net_fixtures.hpp"
#include "spiking_fixtures.hpp"

using namespace ctmc;
using namespace ctmc::sim;
using namespace ctmc::sim::testing;
using solvers::Rational;

namespace {

constexpr double kZ = 4.4;

std::vector<SpikingLayer> layers_of(std::size_t count, double alpha) {
  return testing::layers_of(three_state(), count, alpha);
}

SpikingConfig config(double T, double dt, double tau) {
  SpikingConfig cfg;
  cfg.T = T;
  cfg.dt = dt;
  cfg.tau = tau;
  return cfg;
}

}  // namespace

TEST_CASE("a dense net as convolutions or as a dense layer graph spikes exactly as the Mlp engine") {
  const Mlp mlp = dyadic_mlp({8, 6, 5, 3}, 7);
  const Net conv = as_conv_net(mlp), dense = as_dense_net(mlp);
  // Both graphs compute the MLP's logits.
  Eigen::MatrixXf x(8, 3);
  std::mt19937 g(3);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int i = 0; i < x.size(); ++i) x.data()[i] = i % 5 == 0 ? 0.0f : u(g);  // some zero pixels
  CHECK((conv.forward(x) - mlp.forward(x)).cwiseAbs().maxCoeff() < 1e-5f);
  // The fast kernel (Auto's choice for the exact and end-state samplers)
  // rounds H to float, which an Mlp column add and a layer graph's scatter
  // reach by different float sums: the same spikes, and the readout's sum of
  // H within float rounding, not bit for bit.
  const auto same = [](const SampleRun& p, const SampleRun& q, bool fast) {
    if (!fast) return check_same_reading(p, q);
    SampleRun q2 = q;
    REQUIRE(q2.mean_output_input.size() == p.mean_output_input.size());
    for (Eigen::Index j = 0; j < p.mean_output_input.size(); ++j) {
      CHECK(q.mean_output_input[j] == doctest::Approx(p.mean_output_input[j]).epsilon(1e-5));
      q2.mean_output_input[j] = p.mean_output_input[j];
    }
    check_same_reading(p, q2);
  };
  for (Kernel kernel : {Kernel::Auto, Kernel::Vectorised})
    for (SamplerKind kind : {SamplerKind::Exact, SamplerKind::EndState, SamplerKind::Uniformization, SamplerKind::Euler})
      for (Readout readout : {Readout::Spike, Readout::Integrate}) {
        if (kernel == Kernel::Vectorised && kind != SamplerKind::Exact && kind != SamplerKind::EndState) continue;
        SpikingConfig cfg = config(2, 0.01, 0.05);
        cfg.sampler = kind;
        cfg.readout = readout;
        cfg.checkpoints = {1};
        cfg.kernel = kernel;
        const std::size_t S = readout == Readout::Spike ? 3 : 2;
        const SpikingNetwork a(mlp, layers_of(S, 6), cfg), b(conv, layers_of(S, 6), cfg),
            c(dense, layers_of(S, 6), cfg);
        CHECK(b.spiking_neurons() == a.spiking_neurons());
        const bool fast = a.kernel() == Kernel::Fast;
        for (int s = 0; s < 3; ++s) {
          INFO("sampler ", sampler_name(kind), ", readout ", readout_name(readout), ", kernel ",
               kernel_name(a.kernel()), ", sample ", s);
          const SampleRun ra = a.run(x.col(s).data(), sample_stream_seed(5, 0, s));
          const SampleRun rb = b.run(x.col(s).data(), sample_stream_seed(5, 0, s));
          const SampleRun rc = c.run(x.col(s).data(), sample_stream_seed(5, 0, s));
          CHECK(ra.spikes > 0);
          same(ra, rb, fast);
          same(ra, rc, fast);
          REQUIRE(rb.at.size() == 1);
          same(ra.at[0], rb.at[0], fast);
        }
      }
}

TEST_CASE("SynOps: fanouts counted by hand on a padded, strided convolution") {
  const Net net = small_conv_net(11);
  const SpikingNetwork snn(net, layers_of(3, 20), config(1, 0.01, 0.05));
  // Layer 1 (2 x 4 x 4) into conv2 (3x3, stride 2, pad 1, 2 x 2 outputs):
  // pixel (c, y', x') reaches (o, y, x) when 2y + u - 1 = y' and 2x + v - 1 =
  // x' for a kernel offset (u, v) with W2[o, c, u, v] != 0.
  const auto& W2 = net.layers[1].conv.W;
  std::vector<std::uint32_t> by_hand(32, 0);
  for (int c = 0; c < 2; ++c)
    for (int yi = 0; yi < 4; ++yi)
      for (int xi = 0; xi < 4; ++xi)
        for (int o = 0; o < 3; ++o)
          for (int y = 0; y < 2; ++y)
            for (int x = 0; x < 2; ++x) {
              const int u = yi - 2 * y + 1, v = xi - 2 * x + 1;
              if (u >= 0 && u < 3 && v >= 0 && v < 3 && W2[static_cast<std::size_t>(((o * 2 + c) * 3 + u) * 3 + v)] != 0)
                ++by_hand[static_cast<std::size_t>((c * 4 + yi) * 4 + xi)];
            }
  CHECK(snn.fanout(0) == by_hand);
  // Rows y' = 0..3 reach 1, 2, 1, 1 output rows: with every weight nonzero
  // an interior pixel (1, 1) reaches 3 x 2 x 2 = 12 targets, the corner
  // (3, 3) 3 x 1 x 1 = 3, not 3 x 3 x 3 = 27.
  CHECK(by_hand[16 + 1 * 4 + 1] == 12);
  CHECK(by_hand[16 + 3 * 4 + 3] == 3);
  // Pixel (0, 0, 0) reaches output (0, 0, 0) only through W2[0, 0, 1, 1] = 0.
  CHECK(by_hand[0] == 2);
  // Layer 2 (3 x 2 x 2) through flatten into the dense 12 -> 2: fanout 2.
  CHECK(snn.fanout(1) == std::vector<std::uint32_t>(12, 2));

  std::mt19937 g(5);
  std::uniform_real_distribution<float> px(0.0f, 1.0f);
  std::vector<float> x(16);
  for (float& v : x) v = px(g);
  for (std::uint64_t seed : {1, 2, 3}) {
    const SampleRun r = snn.run(x.data(), seed);
    double synops = 0;
    for (std::size_t l = 0; l < 2; ++l)
      for (std::size_t i = 0; i < r.counts[l].size(); ++i) synops += double(r.counts[l][i]) * snn.fanout(l)[i];
    CHECK(r.counts[0].size() == 32);
    CHECK(r.spikes > 0);
    CHECK(r.synops == synops);
  }
}

TEST_CASE("a stage's spike columns and bias are its ANN operations applied to unit vectors") {
  // avgpool (2x2, stride 1, pad 1, both divisor rules) then a strided conv:
  // the column of a spike is the ANN's pool then conv of e_i minus its bias.
  for (bool include_pad : {true, false}) {
    std::mt19937 g(17);
    Net net;
    net.input = Shape3{2, 5, 5, false};
    net.layers.push_back(conv_layer(2, 2, Window2d{3, 3, 1, 1, 1, 1}, dyadic(36, g, 0.125f), dyadic(2, g, 0.0625f), "relu"));
    NetLayer pool = plain(LayerKind::AvgPool2d, Window2d{2, 2, 1, 1, 1, 1});
    pool.count_include_pad = include_pad;
    net.layers.push_back(pool);
    net.layers.push_back(conv_layer(2, 3, Window2d{3, 3, 2, 2, 0, 0}, dyadic(54, g, 0.125f), dyadic(3, g, 0.0625f), "sigmoid"));
    add_readout(net, 12, 0.5f);
    net.infer_shapes("pool net");
    const auto stages = spiking_stages(net, "pool net");
    REQUIRE(stages.size() == 3);
    CHECK(stages[1].first == 1);
    CHECK(stages[1].last == 2);
    const double alpha = 4;
    const LinearChain chain(net, stages[1], alpha);
    REQUIRE(chain.in_size() == 50);
    REQUIRE(chain.out_size() == 12);
    Eigen::MatrixXf zero = Eigen::MatrixXf::Zero(50, 1);
    const Eigen::MatrixXf b = apply_layer_op(net.layers[2], apply_layer_op(net.layers[1], zero));
    for (int t = 0; t < 12; ++t) CHECK(chain.bias()[static_cast<std::size_t>(t)] == doctest::Approx(b(t, 0)));
    const auto fan = chain.fanouts();
    ChainScratch scratch;
    for (int i = 0; i < 50; ++i) {
      Eigen::MatrixXf e = Eigen::MatrixXf::Zero(50, 1);
      e(i, 0) = 1;
      const Eigen::MatrixXf col = apply_layer_op(net.layers[2], apply_layer_op(net.layers[1], e)) - b;
      std::vector<double> cur(12, 0.0);
      chain.add_spike(static_cast<std::uint32_t>(i), 2.0, cur.data(), scratch);
      std::uint32_t nonzero = 0;
      for (int t = 0; t < 12; ++t) {
        INFO("input ", i, " target ", t);
        CHECK(cur[static_cast<std::size_t>(t)] == doctest::Approx(2.0 * col(t, 0) / alpha).epsilon(1e-5));
        nonzero += col(t, 0) != 0;
      }
      CHECK(fan[static_cast<std::size_t>(i)] == nonzero);
    }
    // Stage 0, one convolution (its fanouts counted from the kernel's nonzero
    // weights per offset), against its columns' nonzero entries; a zero
    // weight is no synapse.
    Net zeroed = net;
    zeroed.layers[0].conv.W[4] = 0;
    const LinearChain first(zeroed, stages[0], 1.0);
    const auto fan0 = first.fanouts();
    for (int i = 0; i < first.in_size(); ++i) {
      std::vector<double> cur(static_cast<std::size_t>(first.out_size()), 0.0);
      first.add_spike(static_cast<std::uint32_t>(i), 1.0, cur.data(), scratch);
      const auto nonzero = static_cast<std::uint32_t>(std::count_if(cur.begin(), cur.end(), [](double v) { return v != 0; }));
      CHECK(fan0[static_cast<std::size_t>(i)] == nonzero);
    }
  }
}

TEST_CASE("simulate_network on a conv net: identical for 1, 2 and 3 threads; A_MF from the graph's mean field") {
  const Net net = small_conv_net(13);
  std::mt19937 g(29);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const auto fill = [&](Dataset& d, int n) {
    d.images = Eigen::MatrixXf(16, n);
    for (int i = 0; i < d.images.size(); ++i) d.images.data()[i] = u(g);
    d.labels.resize(n);
    for (int i = 0; i < n; ++i) d.labels[i] = static_cast<int>(g() % 2);
  };
  Dataset train, test;
  fill(train, 40);
  fill(test, 12);
  NetworkSimOptions opt;
  opt.snn.T = 1;
  opt.snn.dt = 0.01;
  opt.snn.tau = 0.05;
  opt.snn.checkpoints = {0.5, 1};
  opt.rate = 20;
  opt.trials = 2;
  opt.seed = 77;
  const std::vector<NeuronModel> neurons{{three_state(), "three-state"}};
  std::vector<NetworkSimResult> res;
  for (int threads : {1, 2, 3}) {
    opt.threads = threads;
    res.push_back(simulate_network(net, train, test, neurons, opt));
  }
  for (int k : {1, 2}) {
    CHECK(res[k].predictions == res[0].predictions);
    CHECK(res[k].synops == res[0].synops);
    CHECK(res[k].acc_snn == res[0].acc_snn);
    CHECK(res[k].spikes_per_neuron == res[0].spikes_per_neuron);
    CHECK(res[k].transitions_per_sample == res[0].transitions_per_sample);
    CHECK(res[k].windows[0].layer_rate_rel_rmse == res[0].windows[0].layer_rate_rel_rmse);
  }
  const NetworkSimResult& r = res[0];
  CHECK(r.spiking_neurons == 32 + 12 + 2);
  REQUIRE(r.q99.size() == 3);
  CHECK(r.synops_mean > 0);
  CHECK(r.acc_ann == doctest::Approx(net.accuracy(test)));
  // A_MF: the batch mean field of the graph predicts the same classes.
  std::vector<RateFunction> rates(3, ctmc_rate_function(NeuronKernel(three_state(), 1.0, "three-state"), 1.0));
  const std::vector<int> mf = mean_field_predict(net, test.images, rates, Readout::Spike);
  int correct = 0;
  for (int s = 0; s < test.size(); ++s) correct += mf[static_cast<std::size_t>(s)] == test.labels[s];
  CHECK(r.acc_mf == doctest::Approx(double(correct) / test.size()));
  REQUIRE(r.windows.size() == 2);
  CHECK(r.windows[1].layer_spikes_per_neuron.size() == 3);
  // q99 per layer from the graph's activations on the train split.
  const auto acts = layer_activations(net, train, Readout::Spike);
  REQUIRE(acts.size() == 3);
  CHECK(acts[0].rows() == 32);
  CHECK(acts[1].rows() == 12);
  std::vector<float> a0(acts[0].data(), acts[0].data() + acts[0].size());
  CHECK(r.q99[0] == percentile(a0, 99));
  CHECK(r.alpha[0] == doctest::Approx(20 / r.q99[0]));
}

TEST_CASE("layer_q99 of a conv net, streamed over batches of the train split, equals the percentile of all activations") {
  // 5000 images x 32 units: the kept top 1% is trimmed many times on the way.
  const Net net = small_conv_net(23);
  std::mt19937 g(31);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  Dataset train;
  train.images = Eigen::MatrixXf(16, 5000);
  for (int i = 0; i < train.images.size(); ++i) train.images.data()[i] = u(g);
  train.labels.assign(5000, 0);
  const std::vector<NeuronModel> neurons{{three_state(), "three-state"}};
  for (Readout readout : {Readout::Spike, Readout::Integrate}) {
    const auto acts = layer_activations(net, train, readout);
    const auto q99 = layer_q99(net, train, neurons, readout, OutputScale::Logits);
    REQUIRE(q99.size() == acts.size());
    for (std::size_t l = 0; l < acts.size(); ++l) {
      std::vector<float> a(acts[l].data(), acts[l].data() + acts[l].size());
      CHECK(q99[l] == percentile(a, 99));
    }
  }
  Dataset none;
  none.images = Eigen::MatrixXf(16, 0);
  CHECK(std::isnan(layer_q99(net, none, neurons, Readout::Spike, OutputScale::Logits)[0]));
}

TEST_CASE("a conv net's layer-1 spike counts match the exact finite-T moments of the mean-field input") {
  // Dyadic weights and pixels: H^1 is exact in double, the exact reference
  // uses the same rational H.
  const Net net = small_conv_net(19);
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>((i * 5) % 8) / 8.0f;
  const double alpha = 3, T = 10;
  const SpikingNetwork snn(net, layers_of(3, alpha), config(T, 0.01, 0.05));
  const int trials = 200;
  std::vector<double> sum(32, 0.0);
  for (int t = 0; t < trials; ++t) {
    const SampleRun r = snn.run(x.data(), sample_stream_seed(41, t, 0));
    for (int j = 0; j < 32; ++j) sum[static_cast<std::size_t>(j)] += r.counts[0][static_cast<std::size_t>(j)];
  }
  // H^1 by hand: conv 3x3, pad 1, on the 4 x 4 image.
  const auto& cv = net.layers[0].conv;
  // The mean field of the same sample, its layer-1 inputs H^1.
  std::vector<RateFunction> rates(3, ctmc_rate_function(NeuronKernel(three_state(), 1.0, "three-state"), 1.0));
  const MeanFieldResult mf = mean_field_forward(net, x.data(), rates, Readout::Spike);
  double decoded = 0, stationary = 0;  // layer 1's decoded and mean-field rates, summed over its neurons
  for (int o = 0; o < 2; ++o)
    for (int y = 0; y < 4; ++y)
      for (int xo = 0; xo < 4; ++xo) {
        Rational h = Rational(cv.b[static_cast<std::size_t>(o)]);
        for (int u = 0; u < 3; ++u)
          for (int v = 0; v < 3; ++v) {
            const int iy = y + u - 1, ix = xo + v - 1;
            if (iy < 0 || iy >= 4 || ix < 0 || ix >= 4) continue;
            h += Rational(cv.W[static_cast<std::size_t>((o * 3 + u) * 3 + v)]) *
                 Rational(x[static_cast<std::size_t>(iy * 4 + ix)]);
          }
        const int j = (o * 4 + y) * 4 + xo;
        CHECK(mf.inputs[0][j] == doctest::Approx(static_cast<double>(h)));
        const auto ex = solvers::counting_moments<double>(three_state(), h, {1.0, 0.0, 0.0}, alpha * T);
        const double mean = sum[static_cast<std::size_t>(j)] / trials;
        INFO("neuron ", j, " H ", static_cast<double>(h), " mean count ", mean, " exact ", ex.mean);
        CHECK(std::abs(mean - ex.mean) < kZ * std::sqrt(ex.variance / trials) + 1e-12);
        decoded += mean / (alpha * T);
        stationary += mf.activations[0][j];
      }
  // The decoded rates against the mean field's stationary rates: the chains
  // start in their first state, so the finite-T mean differs from the
  // stationary one by a transient of order 1 / (alpha T); within 5% here.
  MESSAGE("layer 1: decoded rates sum to ", decoded, ", mean-field rates to ", stationary);
  CHECK(decoded == doctest::Approx(stationary).epsilon(0.05));
}

TEST_CASE("max pooling between spiking layers is refused, naming the layer and what to use") {
  Net net = small_conv_net(3);
  net.layers.insert(net.layers.begin() + 1, plain(LayerKind::MaxPool2d, Window2d{2, 2, 2, 2, 0, 0}));
  net.layers[2].conv.win = Window2d{1, 1, 1, 1, 0, 0};
  net.layers[2].conv.W.resize(6, 0.5f);
  net.layers[3].kind = LayerKind::Flatten;
  net.layers[4].dense.W = Eigen::MatrixXf::Constant(2, 12, 0.25f);
  net.infer_shapes("mp net");
  SpikingConfig cfg = config(1, 0.01, 0.05);
  cfg.kernel = Kernel::Reference;
  CHECK_THROWS_WITH_AS(SpikingNetwork(net, layers_of(3, 1), cfg),
                       "net: layer 2 (maxpool2d): the spiking simulator does not run max pooling (the maximum of spike "
                       "traces is not the trace of a maximum); use a strided convolution or average pooling (avgpool2d)",
                       ctmc::InputError);
  cfg.kernel = Kernel::Vectorised;  // the vectorised kernel refuses it alike
  CHECK_THROWS_WITH_AS(SpikingNetwork(net, layers_of(3, 1), cfg), doctest::Contains("net: layer 2 (maxpool2d)"),
                       ctmc::InputError);
}

namespace {

// 1 x 6 x 6 -> conv 3x3 pad 1 (3 channels) -> conv 3x3 stride 2 pad 1 (4
// channels, 3 x 3) -> conv 3x3 stride 2 pad 1 (3 channels, 2 x 2) -> flatten
// -> dense 12 -> 2, relu between. Weights not dyadic on purpose: their sums
// depend on the order of the additions, so only the same additions in the
// same order give the same bits.
Net ordered_conv_net(unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> w(0.0f, 0.4f);
  const auto draw = [&](std::size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = w(g);
    return v;
  };
  Net net;
  net.input = Shape3{1, 6, 6, false};
  net.layers.push_back(conv_layer(1, 3, Window2d{3, 3, 1, 1, 1, 1}, draw(27), draw(3), "relu"));
  net.layers.push_back(conv_layer(3, 4, Window2d{3, 3, 2, 2, 1, 1}, draw(108), draw(4), "relu"));
  net.layers.push_back(conv_layer(4, 3, Window2d{3, 3, 2, 2, 1, 1}, draw(108), draw(3), "relu"));
  add_readout(net, 12, 0.3f);
  net.infer_shapes("ordered conv net");
  return net;
}

}  // namespace

TEST_CASE("a convolution stage's stored current, event by event or dense per step, holds add_spike's sums bit for bit") {
  const Net net = ordered_conv_net(41);
  const auto stages = spiking_stages(net, "net");
  REQUIRE(stages.size() == 4);
  std::mt19937 g(43);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::size_t s : {1u, 2u}) {
    const LinearChain chain(net, stages[s], 2.5);
    REQUIRE(chain.channel_last());
    REQUIRE(chain.dense_capable());
    const int n = chain.in_size(), m = chain.out_size();
    // stored_index is a permutation of the targets.
    std::vector<char> hit(static_cast<std::size_t>(m), 0);
    for (int t = 0; t < m; ++t) hit[chain.stored_index(static_cast<std::uint32_t>(t))] = 1;
    CHECK(std::count(hit.begin(), hit.end(), 1) == m);
    ChainScratch scratch;
    for (double density : {0.05, 0.3, 1.0}) {
      INFO("stage ", s, ", density ", density);
      std::vector<double> start(static_cast<std::size_t>(m));
      for (double& x : start) x = u(g) - 0.5;
      std::vector<double> natural = start, event(static_cast<std::size_t>(m)), dense(static_cast<std::size_t>(m));
      for (int t = 0; t < m; ++t) event[chain.stored_index(static_cast<std::uint32_t>(t))] = start[static_cast<std::size_t>(t)];
      dense = event;
      std::vector<double> src(static_cast<std::size_t>(n), 0.0);
      for (int i = 0; i < n; ++i)
        if (u(g) < density) {
          const double c = 0.7 * (1 + static_cast<int>(u(g) * 3));  // weight x spike count
          src[static_cast<std::size_t>(i)] = c;
          chain.add_spike(static_cast<std::uint32_t>(i), c, natural.data(), scratch);
          chain.add_spike_stored(static_cast<std::uint32_t>(i), c, event.data(), scratch);
        }
      chain.add_step_dense(src.data(), dense.data());
      CHECK(event == dense);
      // The float overloads (the fast kernel's): event and dense the same
      // bits, each within float rounding of the double sums.
      std::vector<float> event_f(static_cast<std::size_t>(m)), dense_f, src_f(static_cast<std::size_t>(n));
      for (int t = 0; t < m; ++t) {
        const std::uint32_t at = chain.stored_index(static_cast<std::uint32_t>(t));
        event_f[at] = static_cast<float>(start[static_cast<std::size_t>(t)]);
      }
      dense_f = event_f;
      for (int i = 0; i < n; ++i)
        if (src[static_cast<std::size_t>(i)] != 0) {
          src_f[static_cast<std::size_t>(i)] = static_cast<float>(src[static_cast<std::size_t>(i)]);
          chain.add_spike_stored(static_cast<std::uint32_t>(i), src[static_cast<std::size_t>(i)], event_f.data(), scratch);
        }
      chain.add_step_dense(src_f.data(), dense_f.data());
      CHECK(event_f == dense_f);
      double worst = 0;
      for (int t = 0; t < m; ++t)
        worst = std::max(worst, std::abs(event_f[static_cast<std::size_t>(t)] - event[static_cast<std::size_t>(t)]));
      CHECK(worst < 1e-5);
      bool same = true;
      for (int t = 0; t < m; ++t)
        same = same && natural[static_cast<std::size_t>(t)] == event[chain.stored_index(static_cast<std::uint32_t>(t))];
      CHECK(same);
      CHECK(natural != start);
    }
  }
  // The output stage (flatten, dense) keeps the C-H-W order, without a dense path.
  CHECK(!LinearChain(net, stages[3], 1.0).channel_last());
  CHECK(!LinearChain(net, stages[3], 1.0).dense_capable());
}

TEST_CASE("the event-driven and the dense conv path give the same spikes, for 1, 2 and 3 threads") {
  const Net net = ordered_conv_net(47);
  std::mt19937 g(53);
  std::uniform_real_distribution<float> px(0.0f, 1.0f);
  using CP = SpikingConfig::ConvPath;
  // The reference kernel with two samplers, the vectorised and the fast
  // ones (their own streams; the fast one with float32 synapses) with both
  // of their samplers.
  const std::pair<SamplerKind, const char*> kernels[] = {
      {SamplerKind::Exact, "reference"},  {SamplerKind::Uniformization, "reference"},
      {SamplerKind::Exact, "vectorised"}, {SamplerKind::EndState, "vectorised"},
      {SamplerKind::Exact, "fast"},       {SamplerKind::EndState, "fast"}};
  for (const auto& [kind, kernel] : kernels) {
    std::vector<float> x(36);
    for (float& v : x) v = px(g);
    std::vector<SampleRun> runs;
    for (CP path : {CP::Event, CP::Dense, CP::Auto}) {
      SpikingConfig cfg = config(2, 0.01, 0.05);
      cfg.sampler = kind;
      cfg.kernel = parse_kernel(kernel);
      cfg.conv_path = path;
      cfg.checkpoints = {1};
      const SpikingNetwork snn(net, layers_of(4, 20), cfg);
      runs.push_back(snn.run(x.data(), sample_stream_seed(9, 0, 1)));
    }
    INFO("sampler ", sampler_name(kind), ", ", kernel, " kernel");
    REQUIRE(runs[0].dense_steps.size() == 3);
    CHECK(runs[0].spikes > 0);
    // Event never goes dense; Dense does wherever the step's spikes come in
    // ascending order: for layer 3 (fed by layer 2, advanced in neuron
    // order), and for layer 2 with a sampler that advances layer 1 in neuron
    // order too (the exact sampler's calendar orders layer 1's spikes by
    // jump time: dense only in steps where that happens to be ascending).
    CHECK(runs[0].dense_steps == std::vector<std::uint32_t>{0, 0, 0});
    CHECK(runs[1].dense_steps[1] > 0);
    if (kind == SamplerKind::Uniformization) CHECK(runs[1].dense_steps[0] > 0);
    CHECK(runs[1].dense_steps[2] == 0);  // the output stage is dense, not a convolution
    for (int k : {1, 2}) {
      check_same_reading(runs[0], runs[static_cast<std::size_t>(k)]);
      REQUIRE(runs[static_cast<std::size_t>(k)].at.size() == 1);
      check_same_reading(runs[0].at[0], runs[static_cast<std::size_t>(k)].at[0]);
    }
  }

  // simulate_network: each path on 1, 2 and 3 threads, all six identical.
  const auto fill = [&](Dataset& d, int n) {
    d.images = Eigen::MatrixXf(36, n);
    for (int i = 0; i < d.images.size(); ++i) d.images.data()[i] = px(g);
    d.labels.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) d.labels[static_cast<std::size_t>(i)] = static_cast<int>(g() % 2);
  };
  Dataset train, test;
  fill(train, 30);
  fill(test, 7);
  NetworkSimOptions opt;
  opt.snn = config(1, 0.01, 0.05);
  opt.snn.checkpoints = {0.5, 1};
  opt.rate = 20;
  opt.trials = 2;
  opt.seed = 61;
  const std::vector<NeuronModel> neurons{{three_state(), "three-state"}};
  for (const char* kernel : {"reference", "vectorised", "fast"}) {
    INFO(kernel, " kernel");
    opt.snn.kernel = parse_kernel(kernel);
    std::vector<NetworkSimResult> res;
    for (CP path : {CP::Event, CP::Dense})
      for (int threads : {1, 2, 3}) {
        opt.snn.conv_path = path;
        opt.threads = threads;
        res.push_back(simulate_network(net, train, test, neurons, opt));
      }
    // SSE2 instead of AVX, each path (on a CPU without AVX all runs are SSE2's).
    allow_avx(false);
    for (CP path : {CP::Event, CP::Dense}) {
      opt.snn.conv_path = path;
      opt.threads = 2;
      res.push_back(simulate_network(net, train, test, neurons, opt));
    }
    allow_avx(true);
    // AVX instead of the fast kernel's AVX-512 lanes (the same on a CPU
    // without AVX-512).
    allow_avx512(false);
    opt.snn.conv_path = CP::Auto;
    res.push_back(simulate_network(net, train, test, neurons, opt));
    allow_avx512(true);
    CHECK(res[0].spikes_per_neuron > 0);
    for (std::size_t k = 1; k < res.size(); ++k) {
      INFO("run ", k);
      CHECK(res[k].predictions == res[0].predictions);
      CHECK(res[k].synops == res[0].synops);
      CHECK(res[k].spikes_per_neuron == res[0].spikes_per_neuron);
      CHECK(res[k].transitions_per_sample == res[0].transitions_per_sample);
      REQUIRE(res[k].windows.size() == 2);
      CHECK(res[k].windows[0].layer_rate_rel_rmse == res[0].windows[0].layer_rate_rel_rmse);
    }
  }
}
