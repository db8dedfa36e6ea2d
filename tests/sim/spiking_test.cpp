// Spiking network of CTMC neurons (spiking.hpp, network_sim.hpp): decoded-rate
// statistics against exact counting moments, 1/T variance decay, convergence to
// the mean-field network, and thread-count invariance.
//
// Statistical checks: fixed seeds, acceptance within kZ = 4.4 standard errors
// (two-sided false-alarm rate about 1e-5 per check, normal approximation).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "ctmc/sim/engines/if_baseline.hpp"
#include "meanfield.hpp"  // sim/src (internal): the mean-field network
#include "ctmc/sim/engines/network_sim.hpp"
#include "ctmc/sim/engines/spiking.hpp"
#include "ctmc/solvers/counting.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/solvers/model.hpp"
#include "../test_temp_files.hpp"
#include "spiking_fixtures.hpp"

using namespace ctmc;
using namespace ctmc::sim;
using namespace ctmc::sim::testing;
using solvers::Affine;
using solvers::Rational;

namespace {

constexpr double kZ = 4.4;

double sample_var(const std::vector<double>& x, double* mean_out = nullptr) {
  double m = 0;
  for (double v : x) m += v;
  m /= static_cast<double>(x.size());
  double s = 0;
  for (double v : x) s += (v - m) * (v - m);
  if (mean_out) *mean_out = m;
  return s / static_cast<double>(x.size() - 1);
}

// The network (8-6-3, relu) and random data (50 training, 24 test images) of
// the simulate_network tests.
struct SmallProblem {
  Mlp net = dyadic_mlp({8, 6, 3}, 23);
  Dataset train, test;
  SmallProblem() {
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
  }
};

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
  const SmallProblem p;
  const Mlp& net = p.net;
  const Dataset &train = p.train, &test = p.test;
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
  // Sizes beyond the work budgets are refused up front, naming the parameters:
  // T / dt = 1e302 steps does not fit the step counter's integer type, and
  // 1e8 trials would run for days.
  opt.snn.T = 1e300;
  CHECK_THROWS_WITH_AS(simulate_network(net, train, test, neurons, opt), doctest::Contains("T: 2.16e+304 neuron-steps"),
                       ctmc::InputError);
  opt.snn.dt = 1e-300;
  CHECK_THROWS_WITH_AS(simulate_network(net, train, test, neurons, opt),
                       doctest::Contains("T: T / dt = inf steps is too many"), ctmc::InputError);
  CHECK_THROWS_WITH_AS(SpikingNetwork(net, layers_of(three_state(), 2, 1.0), opt.snn),
                       doctest::Contains("T: T / dt = inf steps is too many"), ctmc::InputError);
  opt.snn.T = 1;
  opt.snn.dt = 0.01;
  opt.trials = 100000000;
  CHECK_THROWS_WITH_AS(simulate_network(net, train, test, neurons, opt), doctest::Contains("trials: "),
                       ctmc::InputError);
  // Few neuron-steps but rates so high that the exact sampler's transitions
  // (every one drawn) would never end: --rate 1e300 ran past any limit.
  opt.trials = 1;
  for (double rate : {1e12, 1e300}) {
    opt.rate = rate;
    CHECK_THROWS_WITH_AS(simulate_network(net, train, test, neurons, opt), doctest::Contains("rate: about "),
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
  CHECK_THROWS_WITH_AS(simulate_network(net, train, test, neurons, opt), doctest::Contains("data: no training images"),
                       ctmc::InputError);
  opt.scale = ScaleMode::Const;
  const NetworkSimResult r = simulate_network(net, train, test, neurons, opt);
  CHECK(std::isnan(r.q99[0]));
  CHECK(r.alpha[0] == opt.rate);
  CHECK_THROWS_WITH_AS(simulate_if(net, train, test, IfOptions{}), doctest::Contains("data: no training images"),
                       ctmc::InputError);
}

TEST_CASE("T checkpoints: the reading at T_k equals a separate run with T = T_k, every sampler and readout") {
  const Mlp net = dyadic_mlp({5, 7, 4, 3}, 41);
  const float x[5] = {0.25f, 0.5f, 1.0f, 0.0f, 0.75f};
  const std::vector<double> Ts{0.05, 0.3, 0.75, 1.0};
  for (SamplerKind kind : {SamplerKind::Exact, SamplerKind::EndState, SamplerKind::Uniformization,
                           SamplerKind::Euler})
    for (Readout readout : {Readout::Spike, Readout::Integrate}) {
      CAPTURE(static_cast<int>(kind));
      CAPTURE(static_cast<int>(readout));
      SpikingConfig cfg;
      cfg.T = 1;
      cfg.dt = 0.01;
      cfg.tau = 0.03;
      cfg.sampler = kind;
      cfg.readout = readout;
      cfg.checkpoints = Ts;
      const std::size_t S = readout == Readout::Spike ? 3 : 2;
      const SpikingNetwork all(net, layers_of(three_state(), S, 30.0), cfg);
      for (std::uint64_t seed : {3u, 4u}) {
        const SampleRun r = all.run(x, seed);
        REQUIRE(r.at.size() == Ts.size());
        check_same_reading(r.at.back(), [&] {  // the last checkpoint is T itself
          SampleRun copy = r;
          copy.at.clear();
          return copy;
        }());
        for (std::size_t k = 0; k < Ts.size(); ++k) {
          SpikingConfig one = cfg;
          one.T = Ts[k];
          one.checkpoints.clear();
          const SpikingNetwork single(net, layers_of(three_state(), S, 30.0), one);
          check_same_reading(r.at[k], single.run(x, seed));
        }
      }
    }
}

TEST_CASE("T checkpoints: bad lists are refused, naming the checkpoint") {
  const Mlp net = dyadic_mlp({3, 4, 2}, 5);
  SpikingConfig cfg;
  cfg.T = 1;
  cfg.dt = 0.01;
  for (const auto& [list, what] : std::vector<std::pair<std::vector<double>, std::string>>{
           {{0.5, 0.5}, "does not follow"},
           {{0.6, 0.2}, "does not follow"},
           {{0.5, 2.0}, "beyond the window"},
           {{0.505}, "not a positive multiple"},
           {{0.0}, "must be positive"},
           {{std::nan("")}, "must be positive"}}) {
    cfg.checkpoints = list;
    CHECK_THROWS_WITH_AS(SpikingNetwork(net, layers_of(three_state(), 2, 1.0), cfg),
                         doctest::Contains(what.c_str()), ctmc::InputError);
  }
}

TEST_CASE("simulate_network windows equal separate runs; trials can run one at a time") {
  const SmallProblem p;
  const std::vector<NeuronModel> neurons{{three_state(), "three-state"}};
  NetworkSimOptions opt;
  opt.snn.T = 0.6;
  opt.snn.dt = 0.01;
  opt.snn.tau = 0.05;
  opt.snn.checkpoints = {0.1, 0.35, 0.6};
  opt.rate = 20;
  opt.trials = 3;
  opt.seed = 77;
  opt.threads = 2;
  const NetworkSimResult all = simulate_network(p.net, p.train, p.test, neurons, opt);
  REQUIRE(all.windows.size() == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    NetworkSimOptions one = opt;
    one.snn.T = opt.snn.checkpoints[k];
    one.snn.checkpoints.clear();
    one.threads = 1;
    const NetworkSimResult r = simulate_network(p.net, p.train, p.test, neurons, one);
    const WindowResult& w = all.windows[k];
    CHECK(w.T == one.snn.T);
    CHECK(w.acc_snn == r.acc_snn);
    CHECK(w.synops_mean == r.synops_mean);
    CHECK(w.synops_sd == r.synops_sd);
    CHECK(w.spikes_per_neuron == r.spikes_per_neuron);
    CHECK(w.transitions_per_sample == r.transitions_per_sample);
    REQUIRE(w.layer_spikes_per_neuron.size() == 2);
    // The layers' spikes per neuron, weighted by the layer sizes, give the whole network's.
    CHECK(w.layer_spikes_per_neuron[0] * 6 + w.layer_spikes_per_neuron[1] * 3 ==
          doctest::Approx(r.spikes_per_neuron * 9).epsilon(1e-12));
  }
  // The whole run's numbers are those of the last window.
  CHECK(all.windows.back().acc_snn == all.acc_snn);
  CHECK(all.windows.back().synops_mean == all.synops_mean);

  // Trial by trial: trials [t, t+1) give the numbers of trial t of the run with all of them.
  for (int t = 0; t < opt.trials; ++t) {
    NetworkSimOptions one = opt;
    one.first_trial = t;
    one.trials = 1;
    const NetworkSimResult r = simulate_network(p.net, p.train, p.test, neurons, one);
    CHECK(r.acc_snn[0] == all.acc_snn[t]);
    const std::size_t n = p.test.images.cols();
    CHECK(std::vector<int>(r.predictions) ==
          std::vector<int>(all.predictions.begin() + t * n, all.predictions.begin() + (t + 1) * n));
  }
  opt.first_trial = -1;
  CHECK_THROWS_AS(simulate_network(p.net, p.train, p.test, neurons, opt), ctmc::InputError);
}

TEST_CASE("simulate_network: the paired tallies against the ANN and the mean field, recomputed by hand") {
  const SmallProblem p;
  const std::vector<NeuronModel> neurons{{three_state(), "three-state"}};
  NetworkSimOptions opt;
  opt.snn.T = 0.3;
  opt.snn.dt = 0.01;
  opt.snn.tau = 0.05;
  opt.snn.checkpoints = {0.1, 0.3};
  opt.rate = 20;
  opt.trials = 3;
  opt.seed = 5;
  const NetworkSimResult r = simulate_network(p.net, p.train, p.test, neurons, opt);
  const std::vector<int> ann = p.net.predict(p.test.images);
  const std::size_t n = ann.size();
  // The last window's SNN predictions are the run's (trial-major).
  ctmc::solvers::PairedCounts hand{0, 0, n * 3};
  for (std::size_t j = 0; j < n * 3; ++j) {
    const bool a = ann[j % n] == p.test.labels[j % n], s = r.predictions[j] == p.test.labels[j % n];
    hand.n10 += a && !s;
    hand.n01 += !a && s;
  }
  const WindowResult& last = r.windows.back();
  CHECK(last.ann_vs_snn.n10 == hand.n10);
  CHECK(last.ann_vs_snn.n01 == hand.n01);
  CHECK(last.ann_vs_snn.n == n * 3);
  // Each tally's difference is the accuracy difference it pairs, exactly in images.
  const auto images = [&](double acc, double count) { return std::llround(acc * count); };
  for (const WindowResult& w : r.windows) {
    double snn_right = 0;
    for (double a : w.acc_snn) snn_right += images(a, static_cast<double>(n));
    CHECK(static_cast<long long>(w.ann_vs_snn.n10) - static_cast<long long>(w.ann_vs_snn.n01) ==
          3 * images(r.acc_ann, n) - snn_right);
    CHECK(static_cast<long long>(w.mf_vs_snn.n10) - static_cast<long long>(w.mf_vs_snn.n01) ==
          3 * images(r.acc_mf, n) - snn_right);
    CHECK(w.transitions_sd >= 0);
  }
  CHECK(r.ann_vs_mf.n == n);
  CHECK(static_cast<long long>(r.ann_vs_mf.n10) - static_cast<long long>(r.ann_vs_mf.n01) ==
        images(r.acc_ann, n) - images(r.acc_mf, n));
}

TEST_CASE("simulate_network windows: the decoded-rate RMSE against the mean field, recomputed by hand") {
  const SmallProblem p;
  const std::vector<NeuronModel> neurons{{three_state(), "three-state"}};
  NetworkSimOptions opt;
  opt.snn.T = 0.5;
  opt.snn.dt = 0.01;
  opt.snn.tau = 0.05;
  opt.snn.checkpoints = {0.5};
  opt.rate = 20;
  opt.scale = ScaleMode::Const;  // alpha_l = r: the by-hand network below needs no percentile
  opt.seed = 5;
  const NetworkSimResult res = simulate_network(p.net, p.train, p.test, neurons, opt);

  SpikingConfig cfg = opt.snn;
  cfg.checkpoints.clear();
  const SpikingNetwork snn(p.net, layers_of(three_state(), 2, opt.rate), cfg);
  const std::vector<RateFunction> rates(2, ctmc_rate_function(NeuronKernel(three_state(), 1.0, "m"), 1.0));
  for (std::size_t l = 0; l < 2; ++l) {
    double dev = 0, ref = 0;
    int ties = 0;
    for (int s = 0; s < p.test.images.cols(); ++s) {
      const SampleRun r = snn.run(p.test.images.col(s).data(), sample_stream_seed(opt.seed, 0, s));
      const MeanFieldResult mf = mean_field_forward(p.net, p.test.images.col(s).data(), rates, Readout::Spike);
      const Eigen::VectorXd a = snn.decode(r, l);
      for (Eigen::Index i = 0; i < a.size(); ++i) {
        dev += (a[i] - mf.activations[l][i]) * (a[i] - mf.activations[l][i]);
        ref += mf.activations[l][i] * mf.activations[l][i];
      }
      const auto& c = r.counts.back();
      const auto top = *std::max_element(c.begin(), c.end());
      ties += std::count(c.begin(), c.end(), top) > 1;
    }
    CHECK(res.windows[0].layer_rate_rel_rmse[l] == doctest::Approx(std::sqrt(dev / ref)).epsilon(1e-12));
    CHECK(res.windows[0].tie_fraction == doctest::Approx(ties / static_cast<double>(p.test.images.cols())));
  }
  // The pooled per-neuron spike counts: sorted by hand, quantiles by
  // numpy's linear rule (position p/100 (n - 1)).
  std::vector<double> counts;
  for (int s = 0; s < p.test.images.cols(); ++s)
    for (const auto& layer : snn.run(p.test.images.col(s).data(), sample_stream_seed(opt.seed, 0, s)).counts)
      counts.insert(counts.end(), layer.begin(), layer.end());
  std::sort(counts.begin(), counts.end());
  const auto quantile = [&](double level) {
    const double pos = level / 100 * static_cast<double>(counts.size() - 1);
    const auto lo = static_cast<std::size_t>(pos);
    const double hi = lo + 1 < counts.size() ? counts[lo + 1] : counts[lo];
    return counts[lo] + (pos - static_cast<double>(lo)) * (hi - counts[lo]);
  };
  REQUIRE(res.windows[0].count_quantiles.size() == std::size(kCountQuantileLevels));
  for (std::size_t k = 0; k < std::size(kCountQuantileLevels); ++k)
    CHECK(res.windows[0].count_quantiles[k] == doctest::Approx(quantile(kCountQuantileLevels[k])).epsilon(1e-6));
  CHECK(res.windows[0].count_quantiles.back() == counts.back());
  CHECK(res.windows[0].silent_fraction ==
        doctest::Approx(static_cast<double>(std::count(counts.begin(), counts.end(), 0.0)) / counts.size()));
  CHECK(counts.back() > 0);
}

TEST_CASE("--trace-weight 1/tau scales the next layer's input by (dt/tau) / (1 - e^(-dt/tau))") {
  // One spiking hidden layer and an integrating output: only layer 1 draws
  // random numbers, so both conventions see the same spikes, and H^2 - b is
  // linear in the per-spike increment.
  const Mlp net = dyadic_mlp({3, 5, 2}, 13);
  const float x[3] = {0.5f, 0.25f, 1.0f};
  for (Kernel kernel : {Kernel::Auto, Kernel::Vectorised}) {
    for (double tau : {0.02, 0.1}) {
      SpikingConfig cfg;
      cfg.T = 2;
      cfg.dt = 0.005;
      cfg.tau = tau;
      cfg.readout = Readout::Integrate;
      cfg.kernel = kernel;
      const SpikingNetwork ours(net, layers_of(three_state(), 1, 20.0), cfg);
      cfg.trace_weight = TraceWeight::InverseTau;
      const SpikingNetwork theirs(net, layers_of(three_state(), 1, 20.0), cfg);
      const SampleRun a = ours.run(x, 8), b = theirs.run(x, 8);
      REQUIRE(a.counts == b.counts);
      REQUIRE(a.spikes > 0);
      const double factor = (cfg.dt / tau) / -std::expm1(-cfg.dt / tau);
      // In double to 1e-12; the fast kernel (Auto's choice here) sums the
      // current and H in float, so there to float rounding.
      const double eps = ours.kernel() == Kernel::Fast ? 1e-5 : 1e-12;
      for (int j = 0; j < 2; ++j) {
        const double bias = net.layers[1].b[j];
        CHECK(b.mean_output_input[j] - bias == doctest::Approx(factor * (a.mean_output_input[j] - bias)).epsilon(eps));
      }
    }
  }
  CHECK(parse_trace_weight("1/tau") == TraceWeight::InverseTau);
  CHECK_THROWS_WITH_AS(parse_trace_weight("tau"), doctest::Contains("trace_weight: unknown"), ctmc::InputError);
}

TEST_CASE("test subsets by stride or index file are the images they name, in order") {
  const SmallProblem p;
  const std::vector<NeuronModel> neurons{{three_state(), "three-state"}};
  NetworkSimOptions opt;
  opt.snn.T = 0.3;
  opt.snn.dt = 0.01;
  opt.snn.tau = 0.05;
  opt.rate = 20;
  opt.seed = 3;
  const auto by_hand = [&](const std::vector<int>& pick) {
    Dataset d;
    d.images.resize(p.test.images.rows(), static_cast<Eigen::Index>(pick.size()));
    for (std::size_t j = 0; j < pick.size(); ++j) {
      d.images.col(static_cast<Eigen::Index>(j)) = p.test.images.col(pick[j]);
      d.labels.push_back(p.test.labels[static_cast<std::size_t>(pick[j])]);
    }
    return simulate_network(p.net, p.train, d, neurons, opt);
  };
  const auto index_file = ctmc::testing::write_temp_file("subset_index.txt", "7\n2, 19\n\n0 11\n");
  for (const auto& [text, pick] : std::vector<std::pair<std::string, std::vector<int>>>{
           {"stride:5", {0, 5, 10, 15, 20}}, {"stride:7:3", {3, 10, 17}}, {"index:" + index_file, {7, 2, 19, 0, 11}}}) {
    CAPTURE(text);
    NetworkSimOptions sub = opt;
    sub.subset = parse_test_subset(text);
    const NetworkSimResult a = simulate_network(p.net, p.train, p.test, neurons, sub);
    const NetworkSimResult b = by_hand(pick);
    CHECK(a.samples == static_cast<int>(pick.size()));
    CHECK(a.predictions == b.predictions);
    CHECK(a.acc_mf == b.acc_mf);
    CHECK(a.acc_ann == b.acc_ann);
  }
  const auto twice = ctmc::testing::write_temp_file("subset_twice.txt", "1 2 1");
  const auto word = ctmc::testing::write_temp_file("subset_word.txt", "1 two");
  const auto beyond = ctmc::testing::write_temp_file("subset_beyond.txt", "3 24");
  CHECK_THROWS_WITH_AS(parse_test_subset("index:" + twice), doctest::Contains("image 1 is listed twice"),
                       ctmc::InputError);
  CHECK_THROWS_WITH_AS(parse_test_subset("index:" + word), doctest::Contains("'two' is not an image index"),
                       ctmc::InputError);
  CHECK_THROWS_WITH_AS(parse_test_subset("stride:0"), doctest::Contains("stride 0 must be at least 1"),
                       ctmc::InputError);
  CHECK_THROWS_WITH_AS(parse_test_subset("every:2"), doctest::Contains("subset: 'every:2'"), ctmc::InputError);
  // 2^62 is a whole number, only too large.
  CHECK_THROWS_WITH_AS(parse_test_subset("stride:4611686018427387904"),
                       doctest::Contains("stride '4611686018427387904' is too large (at most 2147483647)"),
                       ctmc::InputError);
  CHECK_THROWS_WITH_AS(parse_test_subset("stride:2:x"), doctest::Contains("offset 'x' is not a whole number"),
                       ctmc::InputError);
  opt.subset = parse_test_subset("index:" + beyond);
  CHECK_THROWS_WITH_AS(simulate_network(p.net, p.train, p.test, neurons, opt),
                       doctest::Contains("image 24 is beyond the 24 test images"), ctmc::InputError);
}

TEST_CASE("--layer-alpha overrides alpha_l where given; --output-scale activation takes q99 of phi(logits)") {
  const SmallProblem p;
  solvers::Model sig = three_state();
  sig.meta["target"] = "sigmoid";
  const std::vector<NeuronModel> neurons{{sig, "sig.json"}};
  NetworkSimOptions opt;
  opt.snn.T = 0.1;
  opt.snn.dt = 0.01;
  opt.rate = 4;
  const NetworkSimResult base = simulate_network(p.net, p.train, p.test, neurons, opt);
  opt.layer_alpha = {std::nan(""), 7.5};
  const NetworkSimResult hand = simulate_network(p.net, p.train, p.test, neurons, opt);
  CHECK(hand.alpha[0] == base.alpha[0]);
  CHECK(hand.alpha[1] == 7.5);
  opt.layer_alpha = {1.0};
  CHECK_THROWS_WITH_AS(simulate_network(p.net, p.train, p.test, neurons, opt),
                       doctest::Contains("layer_alpha: 1 values given for 2 spiking layers"), ctmc::InputError);
  opt.layer_alpha = {1.0, -2.0};
  CHECK_THROWS_WITH_AS(simulate_network(p.net, p.train, p.test, neurons, opt),
                       doctest::Contains("layer_alpha: -2 is not a positive"), ctmc::InputError);
  opt.layer_alpha.clear();

  opt.output_scale = OutputScale::Activation;
  const NetworkSimResult act = simulate_network(p.net, p.train, p.test, neurons, opt);
  const Eigen::MatrixXf logits = p.net.forward(p.train.images);
  std::vector<float> phi;
  for (Eigen::Index i = 0; i < logits.size(); ++i)
    phi.push_back(static_cast<float>(1 / (1 + std::exp(-static_cast<double>(logits.data()[i])))));
  CHECK(act.q99[1] == doctest::Approx(percentile(phi, 99.0)).epsilon(1e-6));
  CHECK(act.q99[0] == base.q99[0]);
  CHECK(act.alpha[1] == doctest::Approx(opt.rate / act.q99[1]));
  // A model without meta.target cannot say what phi is.
  const std::vector<NeuronModel> plain{{three_state(), "plain.json"}};
  CHECK_THROWS_WITH_AS(simulate_network(p.net, p.train, p.test, plain, opt),
                       doctest::Contains("plain.json has no meta.target"), ctmc::InputError);
  opt.snn.readout = Readout::Integrate;
  CHECK_THROWS_WITH_AS(simulate_network(p.net, p.train, p.test, neurons, opt),
                       doctest::Contains("output_scale: activation needs the spike readout"), ctmc::InputError);
}
