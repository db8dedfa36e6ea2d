// Spiking network of CTMC neurons (spiking.hpp, network_sim.hpp): decoded-rate
// statistics against exact counting moments, 1/T variance decay, convergence to
// the mean-field network, and thread-count invariance.
//
// Statistical checks: fixed seeds, acceptance within kZ = 4.4 standard errors
// (two-sided false-alarm rate about 1e-5 per check, normal approximation).
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "ctmc/sim/if_baseline.hpp"
#include "ctmc/sim/meanfield.hpp"
#include "ctmc/sim/network_sim.hpp"
#include "ctmc/sim/spiking.hpp"
#include "ctmc/solvers/counting.hpp"
#include "ctmc/solvers/errors.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/solvers/model.hpp"

using namespace ctmc;
using namespace ctmc::sim;
using solvers::Affine;
using solvers::Rational;

namespace {

constexpr double kZ = 4.4;

// a = 1 + 2H, b = 1, c = 1/2 + H (spike), d = 2: a sigmoid-like rate curve.
solvers::Model three_state() {
  return solvers::three_state_model(Affine{Rational(1), Rational(2)}, Affine{Rational(1), 0},
                                    Affine{Rational(1, 2), Rational(1)}, Affine{Rational(2), 0});
}

// Weights on a dyadic grid (multiples of 1/8) so that H^1 = W x + b is exact
// for dyadic inputs and the exact reference can use the same rational H.
Mlp dyadic_mlp(const std::vector<int>& sizes, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> w(-8, 8);
  Mlp net;
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    DenseLayer d;
    d.W = Eigen::MatrixXf(sizes[l + 1], sizes[l]);
    d.b = Eigen::VectorXf(sizes[l + 1]);
    for (int i = 0; i < d.W.size(); ++i) d.W.data()[i] = w(g) / 8.0f;
    for (int i = 0; i < d.b.size(); ++i) d.b[i] = w(g) / 16.0f;
    d.activation = l + 2 == sizes.size() ? "linear" : "relu";
    net.layers.push_back(d);
  }
  return net;
}

std::vector<SpikingLayer> layers_of(const solvers::Model& m, std::size_t count, double alpha) {
  std::vector<SpikingLayer> v;
  for (std::size_t l = 0; l < count; ++l) v.push_back({NeuronKernel(m, alpha, "three-state"), alpha});
  return v;
}

double sample_var(const std::vector<double>& x, double* mean_out = nullptr) {
  double m = 0;
  for (double v : x) m += v;
  m /= static_cast<double>(x.size());
  double s = 0;
  for (double v : x) s += (v - m) * (v - m);
  if (mean_out) *mean_out = m;
  return s / static_cast<double>(x.size() - 1);
}

}  // namespace

TEST_CASE("layer-1 spike counts match the exact finite-T moments; decoded variance falls like 1/T") {
  const auto model = three_state();
  const Mlp net = dyadic_mlp({3, 4, 2}, 5);
  const double alpha = 4;  // alpha_fit = 1: every rate times 4
  const float x[3] = {0.25f, 0.5f, 1.0f};
  const int trials = 400;
  std::vector<double> t_var_layer2;
  for (double T : {2.0, 8.0}) {
    SpikingConfig cfg;
    cfg.T = T;
    cfg.dt = 0.01;
    cfg.tau = 0.05;
    cfg.readout = Readout::Spike;
    const SpikingNetwork snn(net, layers_of(model, 2, alpha), cfg);
    std::vector<std::vector<double>> n1(4), a2(2);
    for (int t = 0; t < trials; ++t) {
      const SampleRun r = snn.run(x, sample_stream_seed(99, t, 0));
      for (int j = 0; j < 4; ++j) n1[j].push_back(r.counts[0][j]);
      const Eigen::VectorXd a = snn.decode(r, 1);
      for (int j = 0; j < 2; ++j) a2[j].push_back(a[j]);
    }
    for (int j = 0; j < 4; ++j) {
      // Exact H_j in the rationals; rates times alpha = the chain run for alpha T.
      Rational h = Rational(net.layers[0].b[j]);
      for (int i = 0; i < 3; ++i) h += Rational(net.layers[0].W(j, i)) * Rational(x[i]);
      const auto ex = solvers::counting_moments<double>(model, h, {1.0, 0.0, 0.0}, alpha * T);
      double mean = 0;
      const double var = sample_var(n1[j], &mean);
      INFO("T ", T, " neuron ", j, " mean ", mean, " vs ", ex.mean, " var ", var, " vs ", ex.variance);
      CHECK(std::abs(mean - ex.mean) < kZ * std::sqrt(ex.variance / trials) + 1e-12);
      // Standard error of the sample variance from the counts' own fourth
      // central moment m4 (counts with small means are far from normal, so
      // the normal-theory 2 sigma^4 / (n - 1) would be too small):
      // Var(s^2) = (m4 - sigma^4 (n - 3) / (n - 1)) / n.
      double m4 = 0;
      for (double v : n1[j]) m4 += std::pow(v - mean, 4);
      m4 /= trials;
      const double se_var = std::sqrt(std::max(0.0, m4 - ex.variance * ex.variance * (trials - 3.0) / (trials - 1.0)) / trials);
      INFO("standard error of the sample variance ", se_var);
      CHECK(std::abs(var - ex.variance) < kZ * se_var + 1e-12);
    }
    t_var_layer2.push_back(T * (sample_var(a2[0]) + sample_var(a2[1])));
  }
  // Layer 2 is driven by noisy traces; T Var(a_hat) still tends to a constant,
  // so quadrupling T must divide the variance by about 4.
  MESSAGE("layer-2 T*Var(a_hat) at T = 2, 8: ", t_var_layer2[0], ", ", t_var_layer2[1]);
  CHECK(t_var_layer2[1] / t_var_layer2[0] > 0.6);
  CHECK(t_var_layer2[1] / t_var_layer2[0] < 1.6);
}

TEST_CASE("decoded output rates approach the mean field as T grows when tau * r is large") {
  const auto model = three_state();
  const Mlp net = dyadic_mlp({4, 6, 3}, 11);
  std::mt19937 g(17);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const int samples = 30;
  std::vector<std::vector<float>> xs(samples, std::vector<float>(4));
  for (auto& x : xs)
    for (auto& v : x) v = u(g);
  const NeuronKernel unscaled(model, 1.0, "three-state");
  const std::vector<RateFunction> rates(2, ctmc_rate_function(unscaled, 1.0));
  const double r = 40;
  auto error = [&](double T, double tau, double* bias) {
    SpikingConfig cfg;
    cfg.T = T;
    cfg.dt = 0.01;
    cfg.tau = tau;
    const SpikingNetwork snn(net, layers_of(model, 2, r), cfg);
    double abs_err = 0, signed_err = 0;
    for (int s = 0; s < samples; ++s) {
      const auto mf = mean_field_forward(net, xs[s].data(), rates, Readout::Spike);
      const Eigen::VectorXd a = snn.decode(snn.run(xs[s].data(), sample_stream_seed(7, 0, s)), 1);
      for (int j = 0; j < 3; ++j) {
        abs_err += std::abs(a[j] - mf.activations[1][j]);
        signed_err += a[j] - mf.activations[1][j];
      }
    }
    if (bias) *bias = signed_err / (3 * samples);
    return abs_err / (3 * samples);
  };
  double bias_long = 0, bias_short_tau = 0;
  const double e_short = error(2, 1.0, nullptr);
  const double e_long = error(32, 1.0, &bias_long);  // tau r = 40
  const double e_small_tau = error(32, 0.01, &bias_short_tau);  // tau r = 0.4
  MESSAGE("mean |a_hat - a_MF| (output layer): T=2: ", e_short, ", T=32: ", e_long, " (tau r = 40); bias ",
          bias_long, "; at tau r = 0.4, T = 32: error ", e_small_tau, ", bias ", bias_short_tau);
  // Sampling error falls like 1/sqrt(T): 4x smaller from T = 2 to 32 (allow 2x).
  CHECK(e_long < e_short / 2);
  // Rates here are about 0.1-1; at T = 32 with tau r = 40 the remaining error
  // is a few hundredths, and its signed mean (the bias) is smaller still.
  CHECK(e_long < 0.06);
  CHECK(std::abs(bias_long) < 0.03);
}

TEST_CASE("simulate_network: identical results for any thread count; bad inputs") {
  const Mlp net = dyadic_mlp({8, 6, 3}, 23);
  Dataset train, test;
  std::mt19937 g(29);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  auto fill = [&](Dataset& d, int n) {
    d.images = Eigen::MatrixXf(8, n);
    for (int i = 0; i < d.images.size(); ++i) d.images.data()[i] = u(g);
    d.labels.resize(n);
    for (int i = 0; i < n; ++i) d.labels[i] = static_cast<int>(g() % 3);
  };
  fill(train, 50);
  fill(test, 24);
  NetworkSimOptions opt;
  opt.snn.T = 1;
  opt.snn.dt = 0.01;
  opt.snn.tau = 0.05;
  opt.rate = 20;
  opt.trials = 2;
  opt.seed = 1234;
  const std::vector<NeuronModel> neurons{{three_state(), "three-state"}};
  opt.threads = 1;
  const NetworkSimResult a = simulate_network(net, train, test, neurons, opt);
  opt.threads = 2;
  const NetworkSimResult b = simulate_network(net, train, test, neurons, opt);
  CHECK(a.predictions == b.predictions);
  CHECK(a.synops == b.synops);
  CHECK(a.acc_snn == b.acc_snn);
  CHECK(a.spikes_per_neuron == b.spikes_per_neuron);
  CHECK(a.acc_mf == b.acc_mf);
  CHECK(a.synops_mean > 0);
  opt.seed = 1235;
  const NetworkSimResult c = simulate_network(net, train, test, neurons, opt);
  CHECK(c.synops != a.synops);  // the seed matters

  opt.trials = 0;
  CHECK_THROWS_AS(simulate_network(net, train, test, neurons, opt), ctmc::InputError);
  opt.trials = 1;
  const std::vector<NeuronModel> three_models(3, neurons[0]);
  CHECK_THROWS_AS(simulate_network(net, train, test, three_models, opt), ctmc::InputError);
  opt.snn.T = 1.005;
  CHECK_THROWS_AS(simulate_network(net, train, test, neurons, opt), ctmc::InputError);
  // Sizes beyond the work budgets are refused up front, naming the options:
  // T / dt = 1e302 steps was cast to -9223372036854775808 and "ran" (exit 0),
  // and 1e8 trials ran for days.
  opt.snn.T = 1e300;
  CHECK_THROWS_WITH_AS(simulate_network(net, train, test, neurons, opt), doctest::Contains("--T/"), ctmc::InputError);
  opt.snn.dt = 1e-300;
  CHECK_THROWS_WITH_AS(simulate_network(net, train, test, neurons, opt), doctest::Contains("--T/--dt: "),
                       ctmc::InputError);
  CHECK_THROWS_WITH_AS(SpikingNetwork(net, layers_of(three_state(), 2, 1.0), opt.snn), doctest::Contains("--T/--dt: "),
                       ctmc::InputError);
  opt.snn.T = 1;
  opt.snn.dt = 0.01;
  opt.trials = 100000000;
  CHECK_THROWS_WITH_AS(simulate_network(net, train, test, neurons, opt), doctest::Contains("--trials: "),
                       ctmc::InputError);
  // Few neuron-steps but rates so high that the exact sampler's transitions
  // (every one drawn) would never end: --rate 1e300 ran past any limit.
  opt.trials = 1;
  for (double rate : {1e12, 1e300}) {
    opt.rate = rate;
    CHECK_THROWS_WITH_AS(simulate_network(net, train, test, neurons, opt), doctest::Contains("--rate/--T: about "),
                         ctmc::InputError);
  }
  // Uniformization draws jumps at the largest exit rate: refused too.
  opt.snn.sampler = SamplerKind::Uniformization;
  CHECK_THROWS_WITH_AS(simulate_network(net, train, test, neurons, opt), doctest::Contains("uniformization jumps"),
                       ctmc::InputError);
  // The Euler sampler moves at most once per step: not refused.
  opt.rate = 1e12;
  opt.snn.sampler = SamplerKind::Euler;
  CHECK(simulate_network(net, train, test, neurons, opt).steps == 100);
}

TEST_CASE("simulate_network: the share of mean-field inputs outside a model's fit domain (meta.domain)") {
  const Mlp net = dyadic_mlp({8, 6, 3}, 31);
  Dataset train, test;
  std::mt19937 g(37);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (Dataset* d : {&train, &test}) {
    d->images = Eigen::MatrixXf(8, 40);
    for (int i = 0; i < d->images.size(); ++i) d->images.data()[i] = u(g);
    d->labels.assign(40, 0);
  }
  NetworkSimOptions opt;
  opt.snn.T = 0.05;
  opt.snn.dt = 0.01;
  opt.scale = ScaleMode::Const;
  auto fitted = three_state();
  fitted.meta["domain"] = {"-1/2", "1/2"};
  // Layer 1 fitted on [-1/2, 1/2]; the output layer's model has no domain.
  const std::vector<NeuronModel> neurons{{fitted, "fitted.json"}, {three_state(), "plain.json"}};
  const NetworkSimResult r = simulate_network(net, train, test, neurons, opt);
  REQUIRE(r.fit_domain.size() == 2);
  CHECK(r.fit_domain[0] == std::make_pair(-0.5, 0.5));
  CHECK(std::isnan(r.fit_domain[1].first));
  CHECK(r.outside_fit_domain[1] == 0);
  // H^1 = W^1 x + b^1 directly (no value lies within rounding of +-1/2 here).
  const Eigen::MatrixXd h1 =
      (net.layers[0].W.cast<double>() * test.images.cast<double>()).colwise() + net.layers[0].b.cast<double>();
  int outside = 0;
  for (int i = 0; i < h1.size(); ++i) outside += std::abs(h1.data()[i]) > 0.5;
  CHECK(outside > 0);
  CHECK(outside < h1.size());
  CHECK(r.outside_fit_domain[0] == doctest::Approx(static_cast<double>(outside) / static_cast<double>(h1.size())).epsilon(1e-15));

  for (const char* bad : {R"(["1", "0"])", R"(["a", "1"])", R"([0])", R"({"lo": 0})"}) {
    auto m = three_state();
    m.meta["domain"] = nlohmann::ordered_json::parse(bad);
    const std::vector<NeuronModel> one{{m, "bad_domain.json"}};
    CHECK_THROWS_WITH_AS(simulate_network(net, train, test, one, opt), doctest::Contains("bad_domain.json: meta.domain"),
                         ctmc::InputError);
  }
}

namespace {

// Two closed classes ({B} and {D}) whenever H <= 0: no unique stationary law,
// so the mean-field rate throws InputError for such an input.
solvers::Model two_closed_classes() {
  return solvers::model_from_json_text(R"({"states": ["A","B","C","D"], "transitions": [
    {"from":"A","to":"B","offset":"1","slope":"0","spike":true},
    {"from":"B","to":"A","offset":"0","slope":"1","spike":false},
    {"from":"B","to":"C","offset":"0","slope":"1","spike":false},
    {"from":"C","to":"D","offset":"1","slope":"0","spike":true},
    {"from":"D","to":"C","offset":"0","slope":"1","spike":false},
    {"from":"D","to":"A","offset":"0","slope":"1","spike":false}]})",
                                       "twoclass.json");
}

Dataset uniform_data(int n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  Dataset d;
  d.images = Eigen::MatrixXf(8, n);
  for (int i = 0; i < d.images.size(); ++i) d.images.data()[i] = u(g);
  d.labels.resize(n);
  for (int i = 0; i < n; ++i) d.labels[i] = static_cast<int>(g() % 3);
  return d;
}

}  // namespace

TEST_CASE("an InputError inside the parallel sample loops is rethrown, the same for any thread count") {
  const Mlp net = dyadic_mlp({8, 6, 3}, 23);
  const Dataset train = uniform_data(20, 31), test = uniform_data(40, 37);
  NetworkSimOptions opt;
  opt.snn.T = 0.1;
  opt.snn.dt = 0.01;
  opt.scale = ScaleMode::Const;
  const std::vector<NeuronModel> neurons{{two_closed_classes(), "twoclass.json"}};
  std::string message[2];
  for (int threads : {1, 3}) {
    opt.threads = threads;
    try {
      (void)simulate_network(net, train, test, neurons, opt);
      FAIL("no InputError");
    } catch (const ctmc::InputError& e) {
      message[threads == 1 ? 0 : 1] = e.what();
    }
  }
  CHECK(message[0].rfind("twoclass.json", 0) == 0);
  CHECK(message[0] == message[1]);  // the lowest failing sample's error, whatever the schedule
}

TEST_CASE("spikes per neuron is 0, not 0/0, for a network without spiking neurons") {
  Mlp net = dyadic_mlp({8, 3}, 41);  // one linear layer, integrating readout: nothing spikes
  const Dataset train = uniform_data(10, 43), test = uniform_data(6, 47);
  NetworkSimOptions opt;
  opt.snn.T = 0.1;
  opt.snn.dt = 0.01;
  opt.snn.readout = Readout::Integrate;
  opt.scale = ScaleMode::Const;
  const NetworkSimResult r = simulate_network(net, train, test, {{three_state(), "three-state"}}, opt);
  CHECK(r.spiking_neurons == 0);
  CHECK(r.spikes_per_neuron == 0.0);
}

TEST_CASE("no training images: q99 scales and the IF percentiles name --data; --scale const still runs") {
  const Mlp net = dyadic_mlp({8, 6, 3}, 53);
  Dataset train = uniform_data(10, 59);
  train.images = Eigen::MatrixXf(8, 0);
  train.labels.clear();
  const Dataset test = uniform_data(6, 61);
  NetworkSimOptions opt;
  opt.snn.T = 0.1;
  opt.snn.dt = 0.01;
  const std::vector<NeuronModel> neurons{{three_state(), "three-state"}};
  // It said "percentile: empty sample", naming no input.
  CHECK_THROWS_WITH_AS(simulate_network(net, train, test, neurons, opt), doctest::Contains("--data: no training images"),
                       ctmc::InputError);
  opt.scale = ScaleMode::Const;
  const NetworkSimResult r = simulate_network(net, train, test, neurons, opt);
  CHECK(std::isnan(r.q99[0]));
  CHECK(r.alpha[0] == opt.rate);
  CHECK_THROWS_WITH_AS(simulate_if(net, train, test, IfOptions{}), doctest::Contains("--data: no training images"),
                       ctmc::InputError);
}
