// The IF baseline on layer graphs (if_baseline.hpp): the dense engine's
// counts for a dense net written as convolutions or as a dense graph, a conv
// net against an IF simulation written here with the reference convolution
// (conv_reference.hpp), SynOps with the real fanouts, the streamed scales
// against the dense ones, and the refusals. Weights, pixels and scales are
// dyadic (small multiples of powers of two), so every sum is exact in double
// whatever its order and the engines must agree bit for bit.
#include <doctest/doctest.h>

#include <numeric>
#include <random>

#include "conv_reference.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/sim/engines/if_baseline.hpp"
#include "ctmc/sim/engines/network_sim.hpp"
#include "net_fixtures.hpp"
#include "spiking_fixtures.hpp"

using namespace ctmc;
using namespace ctmc::sim;
using namespace ctmc::sim::testing;

namespace {

// Pixels on a grid of 1/16 in [0, 1].
std::vector<float> dyadic_pixels(std::size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> k(0, 16);
  std::vector<float> x(n);
  for (float& v : x) v = k(g) / 16.0f;
  return x;
}

IfOptions if_options(Readout readout, double v0, int steps) {
  IfOptions o;
  o.readout = readout;
  o.v0 = v0;
  o.steps = steps;
  return o;
}

void check_same_run(const IfSampleRun& a, const IfSampleRun& b) {
  CHECK(a.counts == b.counts);
  CHECK(a.prediction == b.prediction);
  CHECK(a.synops == b.synops);
  CHECK(a.spikes == b.spikes);
}

// Spikes of a c x h x w layer as an image of 0/1 values.
Image spike_image(const std::vector<std::uint32_t>& fired_now, int c, int h, int w) {
  Image s = make_image(c, h, w);
  for (std::uint32_t i : fired_now) s.v[i] = 1.0;
  return s;
}

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

}  // namespace

TEST_CASE("IF on a dense net written as convolutions or as a dense layer graph counts as the Mlp engine") {
  const Mlp mlp = dyadic_mlp({8, 6, 5, 3}, 7);
  const Net conv = as_conv_net(mlp), dense = as_dense_net(mlp);
  for (Readout readout : {Readout::Spike, Readout::Integrate})
    for (double v0 : {0.0, 0.5}) {
      CAPTURE(v0);
      const IfOptions o = if_options(readout, v0, 24);
      const std::vector<double> lambda =
          readout == Readout::Spike ? std::vector<double>{2, 4, 8} : std::vector<double>{2, 0.5};
      const IfNetwork ref(mlp, lambda, o), as_conv(conv, lambda, o), as_dense(dense, lambda, o);
      std::uint64_t spikes = 0;
      CHECK(as_conv.spiking_neurons() == ref.spiking_neurons());
      for (unsigned s = 0; s < 6; ++s) {
        const std::vector<float> x = dyadic_pixels(8, 100 + s);
        const IfSampleRun r = ref.run(x.data());
        spikes += r.spikes;
        check_same_run(as_conv.run(x.data()), r);
        check_same_run(as_dense.run(x.data()), r);
      }
      CHECK(spikes > 100);  // the runs spike: the comparison is not of empty counts
    }
}

TEST_CASE("IF on a conv net: the counts of an IF simulation written with the reference convolution") {
  // small_conv_net: 1x4x4 -> conv 3x3 pad 1 (2 ch, relu) -> conv 3x3 stride 2
  // pad 1 (3 ch, relu) -> flatten -> dense 12 -> 2 (linear); readout spike.
  const Net net = small_conv_net(11);
  const std::vector<double> lambda = {2, 1, 4};
  const auto& c1 = net.layers[0].conv;
  const auto& c2 = net.layers[1].conv;
  const auto& d3 = net.layers[3].dense;
  std::vector<double> w3(static_cast<std::size_t>(d3.W.size()));
  for (int o = 0; o < d3.W.rows(); ++o)
    for (int i = 0; i < d3.W.cols(); ++i) w3[static_cast<std::size_t>(o) * d3.W.cols() + i] = d3.W(o, i);
  for (double v0 : {0.0, 0.5})
    for (unsigned s = 0; s < 5; ++s) {
      CAPTURE(v0);
      CAPTURE(s);
      const IfOptions o = if_options(Readout::Spike, v0, 20);
      const IfNetwork ifn(net, lambda, o);
      const std::vector<float> xf = dyadic_pixels(16, 200 + s);
      Image x = make_image(1, 4, 4);
      x.v = to_double(xf);
      // v1 += conv1(x) / lambda1 each step; v2 += (lambda1 conv2_W(s1) + b2) / lambda2;
      // v3 += (lambda2 W3 s2 + b3) / lambda3; fire at 1, reset by subtraction.
      const Image in1 = ref_conv2d(x, to_double(c1.W), to_double(c1.b), 2, 3, 3, 1, 1, 1, 1);
      std::vector<double> v1(in1.v.size(), v0), v2(12, v0), v3(2, v0), out_sum(2, 0.0);
      std::vector<std::uint32_t> n1(v1.size()), n2(12), n3(2);
      for (int t = 0; t < o.steps; ++t) {
        std::vector<std::uint32_t> f1, f2, f3;
        for (std::size_t j = 0; j < v1.size(); ++j)
          if ((v1[j] += in1.v[j] / lambda[0]) >= 1) v1[j] -= 1, ++n1[j], f1.push_back(static_cast<std::uint32_t>(j));
        const Image z2 = ref_conv2d(spike_image(f1, 2, 4, 4), to_double(c2.W), {}, 3, 3, 3, 2, 2, 1, 1);
        for (std::size_t j = 0; j < 12; ++j)
          if ((v2[j] += (lambda[0] * z2.v[j] + c2.b[j / 4]) / lambda[1]) >= 1)
            v2[j] -= 1, ++n2[j], f2.push_back(static_cast<std::uint32_t>(j));
        std::vector<double> s2(12, 0.0);
        for (std::uint32_t i : f2) s2[i] = 1;
        const std::vector<double> z3 = ref_linear(s2, w3, {}, 2);
        for (std::size_t j = 0; j < 2; ++j) {
          const double in3 = (lambda[1] * z3[j] + d3.b[static_cast<Eigen::Index>(j)]) / lambda[2];
          out_sum[j] += in3;
          if ((v3[j] += in3) >= 1) v3[j] -= 1, ++n3[j], f3.push_back(static_cast<std::uint32_t>(j));
        }
      }
      const IfSampleRun r = ifn.run(xf.data());
      CHECK(r.counts[0] == n1);
      CHECK(r.counts[1] == n2);
      CHECK(r.counts[2] == n3);
      CHECK(std::accumulate(n2.begin(), n2.end(), 0u) > 0);
      const int want = n3[1] > n3[0] || (n3[1] == n3[0] && out_sum[1] > out_sum[0]) ? 1 : 0;
      CHECK(r.prediction == want);
      // SynOps: each spike times its neuron's fanout (the spiking engine's,
      // counted by hand in net_spiking_test.cpp; layer 2 -> dense: 2 each).
      SpikingConfig cfg;
      cfg.T = 1;
      cfg.dt = 0.01;
      const SpikingNetwork snn(net, layers_of(three_state(), 3, 1.0), cfg);
      double synops = 0;
      for (std::size_t i = 0; i < n1.size(); ++i) synops += double(n1[i]) * snn.fanout(0)[i];
      for (std::size_t i = 0; i < n2.size(); ++i) synops += 2.0 * n2[i];
      CHECK(r.synops == synops);
    }
}

TEST_CASE("simulate_if on a dense layer graph takes the Mlp's scales and ANN accuracy") {
  // Streamed percentiles (layer_percentiles) against the dense engine's
  // percentile of all activations, for p99.9 and p100; non-dyadic data.
  const Mlp mlp = dyadic_mlp({8, 6, 5, 3}, 9);
  const Net net = as_dense_net(mlp);
  std::mt19937 g(3);
  std::uniform_real_distribution<float> px(0.0f, 1.0f);
  Dataset train, test;
  train.images = Eigen::MatrixXf(8, 700);
  test.images = Eigen::MatrixXf(8, 40);
  for (int i = 0; i < train.images.size(); ++i) train.images.data()[i] = px(g);
  for (int i = 0; i < test.images.size(); ++i) test.images.data()[i] = px(g);
  train.labels.assign(700, 0);
  test.labels.resize(40);
  for (int i = 0; i < 40; ++i) test.labels[i] = i % 3;
  for (double p : {99.9, 100.0}) {
    IfOptions o = if_options(Readout::Spike, 0, 16);
    o.percentile = p;
    const IfResult a = simulate_if(mlp, train, test, o), b = simulate_if(net, train, test, o);
    CHECK(b.lambda == a.lambda);
    CHECK(b.acc_ann == a.acc_ann);
    CHECK(b.samples == a.samples);
    // The grid's path: the scales computed once and one run read out at
    // each T give what separate runs give, for every v0.
    const std::vector<int> steps{3, 8, 16};
    for (double v0 : {0.0, 0.5}) {
      o.v0 = v0;
      const auto d = simulate_if_scaled(net, if_scales(net, train, o), test, o, steps);
      const auto e = simulate_if_scaled(mlp, if_scales(mlp, train, o), test, o, steps);
      REQUIRE(d.size() == steps.size());
      REQUIRE(e.size() == steps.size());
      for (std::size_t k = 0; k < steps.size(); ++k) {
        o.steps = steps[k];
        const IfResult c = simulate_if(net, train, test, o);
        CHECK(d[k].lambda == c.lambda);
        CHECK(d[k].predictions == c.predictions);
        CHECK(d[k].acc_if == c.acc_if);
        CHECK(d[k].synops_mean == c.synops_mean);
        CHECK(d[k].synops_sd == c.synops_sd);
        CHECK(d[k].spikes_per_neuron == c.spikes_per_neuron);
        const IfResult m = simulate_if(mlp, train, test, o);
        CHECK(e[k].predictions == m.predictions);
        CHECK(e[k].synops_mean == m.synops_mean);
      }
      // The windows differ: spikes accumulate with T.
      CHECK(d[0].spikes_per_neuron < d[2].spikes_per_neuron);
    }
    CHECK_THROWS_WITH_AS(simulate_if_scaled(net, {1.0}, test, o, steps), doctest::Contains("1 scales for 3"),
                         InputError);
    CHECK_THROWS_WITH_AS(simulate_if_scaled(net, a.lambda, test, o, {8, 4}),
                         doctest::Contains("if_steps: 8,4 must increase"), InputError);
    CHECK_THROWS_WITH_AS(simulate_if_scaled(net, a.lambda, test, o, {}), doctest::Contains("if_steps: no steps given"),
                         InputError);
    CHECK_THROWS_WITH_AS(if_scales(net, Dataset{}, o), doctest::Contains("data: no training images"), InputError);
  }
}

TEST_CASE("IF on a layer graph refuses max pooling and activations IF neurons do not approximate") {
  Net pooled = small_conv_net(3);
  pooled.layers.insert(pooled.layers.begin() + 1, plain(LayerKind::MaxPool2d, Window2d{2, 2, 2, 2, 0, 0}));
  pooled.layers[2].conv.win = Window2d{1, 1, 1, 1, 0, 0};
  pooled.layers[2].conv.W.resize(6, 0.5f);
  pooled.infer_shapes("pooled");
  CHECK_THROWS_WITH_AS(IfNetwork(pooled, {1, 1, 1}, IfOptions{}), doctest::Contains("maxpool2d"), InputError);
  Net sig = small_conv_net(3);
  sig.layers[0].activation = "sigmoid";
  CHECK_THROWS_WITH_AS(IfNetwork(sig, {1, 1, 1}, IfOptions{}), doctest::Contains("relu or cliprelu_K only"),
                       InputError);
  CHECK_THROWS_WITH_AS(IfNetwork(small_conv_net(3), {1, 1}, IfOptions{}), doctest::Contains("2 scales for 3"),
                       InputError);
}
