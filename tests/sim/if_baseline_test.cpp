// IF baseline (if_baseline.hpp): spike counts by hand, the reset-by-subtraction
// rate bound, convergence to the ANN, and input errors.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "ctmc/sim/engines/if_baseline.hpp"
#include "ctmc/core/errors.hpp"

using namespace ctmc;
using namespace ctmc::sim;

namespace {

DenseLayer dense(const Eigen::MatrixXf& W, const Eigen::VectorXf& b, const char* act) {
  DenseLayer d;
  d.W = W;
  d.b = b;
  d.activation = act;
  return d;
}

Mlp random_relu_mlp(const std::vector<int>& sizes, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> w(0.0f, 1.0f);
  Mlp net;
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    Eigen::MatrixXf W(sizes[l + 1], sizes[l]);
    Eigen::VectorXf b(sizes[l + 1]);
    for (int i = 0; i < W.size(); ++i) W.data()[i] = w(g) / std::sqrt(static_cast<float>(sizes[l]));
    for (int i = 0; i < b.size(); ++i) b[i] = 0.1f * w(g);
    net.layers.push_back(dense(W, b, l + 2 == sizes.size() ? "linear" : "relu"));
  }
  return net;
}

}  // namespace

TEST_CASE("IF spike counts by hand on a 1-1-1 network") {
  // Hidden input 0.25 per step (x = 1, W = 1/4, lambda = 1): v = 0.25 t + v0.
  // v0 = 0: crosses 1 at t = 4, 8 -> 2 spikes in 10 steps; v0 = 0.5: at t = 2,
  // 6, 10 -> 3 spikes. The output (W = 1, b = 0) fires in the same step as
  // each hidden spike. SynOps = hidden spikes * fanout 1.
  Mlp net;
  net.layers = {dense(Eigen::MatrixXf::Constant(1, 1, 0.25f), Eigen::VectorXf::Zero(1), "relu"),
                dense(Eigen::MatrixXf::Constant(1, 1, 1.0f), Eigen::VectorXf::Zero(1), "linear")};
  const float x = 1.0f;
  for (auto [v0, expected] : {std::pair{0.0, 2u}, std::pair{0.5, 3u}}) {
    IfOptions opt;
    opt.steps = 10;
    opt.v0 = v0;
    const IfNetwork ifn(net, {1.0, 1.0}, opt);
    const IfSampleRun r = ifn.run(&x);
    CHECK(r.counts[0][0] == expected);
    // Output starts at v0 too and receives exactly 1 per hidden spike.
    CHECK(r.counts[1][0] == expected);
    CHECK(r.synops == expected);
    CHECK(r.spikes == 2 * expected);
  }
}

TEST_CASE("reset by subtraction: |N/T - a/lambda| < 1/T for 0 <= a <= lambda") {
  // v(T) = v0 + T a/lambda - N lies in [0, 1) once no input is negative, so
  // N/T is within (1 + v0)/T of a / lambda.
  std::mt19937 g(8);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const int T = 97;
  Eigen::MatrixXf W(20, 1);
  for (int i = 0; i < 20; ++i) W(i, 0) = u(g);
  Mlp net;
  net.layers = {dense(W, Eigen::VectorXf::Zero(20), "relu"),
                dense(Eigen::MatrixXf::Constant(1, 20, 0.1f), Eigen::VectorXf::Zero(1), "linear")};
  IfOptions opt;
  opt.steps = T;
  opt.readout = Readout::Integrate;
  for (double v0 : {0.0, 0.5}) {
    opt.v0 = v0;
    const double lambda = 1.25;
    const IfNetwork ifn(net, {lambda}, opt);
    const float x = 1.0f;
    const IfSampleRun r = ifn.run(&x);
    for (int i = 0; i < 20; ++i) {
      const double a = W(i, 0) / lambda;
      CHECK(std::abs(r.counts[0][i] / double(T) - a) <= (1 + v0) / T);
    }
  }
}

TEST_CASE("IF predictions approach the ANN as T grows (p100 normalisation)") {
  const Mlp net = random_relu_mlp({10, 16, 4}, 3);
  Dataset data;
  std::mt19937 g(4);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  data.images = Eigen::MatrixXf(10, 60);
  for (int i = 0; i < data.images.size(); ++i) data.images.data()[i] = u(g);
  data.labels = net.predict(data.images);  // A_ANN = 100% by construction
  IfOptions opt;
  opt.percentile = 100;
  opt.readout = Readout::Integrate;
  opt.threads = 1;
  opt.steps = 4;
  const IfResult short_run = simulate_if(net, data, data, opt);
  opt.steps = 2000;
  const IfResult long_run = simulate_if(net, data, data, opt);
  MESSAGE("IF accuracy vs ANN predictions: T = 4: ", short_run.acc_if, ", T = 2000: ", long_run.acc_if);
  CHECK(long_run.acc_ann == 1.0);
  CHECK(long_run.acc_if >= 0.95);
  CHECK(long_run.acc_if >= short_run.acc_if);
  CHECK(long_run.synops_mean > short_run.synops_mean);
  // Beyond the work budget: refused up front naming --if-steps (2e9 steps x 60
  // images x 16 neurons ran for days).
  opt.steps = 2000000000;
  CHECK_THROWS_WITH_AS(simulate_if(net, data, data, opt), doctest::Contains("if_steps: "), ctmc::InputError);
}

TEST_CASE("IF baseline input errors") {
  CHECK(parse_if_norm("p99.9") == doctest::Approx(99.9));
  CHECK(parse_if_norm("p100") == 100);
  CHECK_THROWS_AS(parse_if_norm("99"), ctmc::InputError);
  CHECK_THROWS_AS(parse_if_norm("p101"), ctmc::InputError);
  Mlp net = random_relu_mlp({3, 2, 2}, 1);
  IfOptions opt;
  CHECK_NOTHROW(IfNetwork(net, {1.0, 1.0}, opt));
  opt.v0 = 1.0;
  CHECK_THROWS_AS(IfNetwork(net, {1.0, 1.0}, opt), ctmc::InputError);
  opt.v0 = 0;
  // A percentile of the layer's activations that is not positive (--if p50 on
  // a mostly silent layer) names the option it came from.
  CHECK_THROWS_WITH_AS(IfNetwork(net, {-0.5, 1.0}, opt), doctest::Contains("if_norm: IF baseline: layer 1"),
                       ctmc::InputError);
  net.layers[0].activation = "sigmoid";
  CHECK_THROWS_AS(IfNetwork(net, {1.0, 1.0}, opt), ctmc::InputError);
}
