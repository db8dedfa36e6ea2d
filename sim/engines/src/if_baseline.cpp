#include "ctmc/sim/engines/if_baseline.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "ctmc/sim/engines/network_sim.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/core/quote.hpp"
#include "ctmc/core/loop_errors.hpp"

namespace ctmc::sim {

double parse_if_norm(const std::string& text, const std::string& option) {
  double p = 0;
  try {
    std::size_t used = 0;
    if (text.size() < 2 || text[0] != 'p') throw std::invalid_argument("no p");
    p = std::stod(text.substr(1), &used);
    if (used + 1 != text.size()) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw InputError(option, fmt::format("'{}' is not a percentile like p99.9 or p100", text));
  }
  if (!(p > 0 && p <= 100)) throw InputError(option, fmt::format("percentile {} outside (0, 100]", p));
  return p;
}

void IfNetwork::check_options() const {
  if (opt_.steps < 1) throw InputError("if_steps", fmt::format("{} must be at least 1", opt_.steps));
  if (!(opt_.v0 >= 0 && opt_.v0 < 1)) throw InputError("v0", fmt::format("{} must lie in [0, 1)", opt_.v0));
  for (std::size_t l = 0; l < lambda_.size(); ++l)
    if (!(lambda_[l] > 0) || !std::isfinite(lambda_[l]))
      throw InputError("if_norm", fmt::format("IF baseline: layer {} normalisation percentile {} is not positive",
                                              l + 1, lambda_[l]));
}

namespace {

void check_if_activation(const std::string& a, std::size_t layer) {
  if (a != "relu" && a.rfind("cliprelu_", 0) != 0)
    throw InputError(fmt::format("IF baseline: hidden layer {} has activation {}; IF neurons approximate relu or "
                                 "cliprelu_K only",
                                 layer, quote_excerpt(a)));
}

}  // namespace

IfNetwork::IfNetwork(const Mlp& net, std::vector<double> lambda, const IfOptions& opt)
    : net_(&net), lambda_(std::move(lambda)), opt_(opt), spiking_neurons_(spiking_neuron_count(net, opt.readout)) {
  const std::size_t L = net.layers.size();
  const std::size_t S = spiking_layer_count(net, opt.readout);
  if (lambda_.size() != S)
    throw InputError(fmt::format("IF baseline: {} scales for {} spiking layers", lambda_.size(), S));
  check_options();
  for (std::size_t l = 0; l + 1 < L; ++l) check_if_activation(net.layers[l].activation, l + 1);
  for (std::size_t l = 0; l < L; ++l) {
    const double in_scale = l == 0 ? 1.0 : lambda_[l - 1];
    const double out_scale = l < S ? lambda_[l] : 1.0;  // a non-spiking output keeps the ANN's scale
    w_.push_back(net.layers[l].W.cast<double>() * (in_scale / out_scale));
    b_.push_back(net.layers[l].b.cast<double>() / out_scale);
  }
  for (std::size_t l = 0; l + 1 < L && l < S; ++l) {
    const auto& W = net.layers[l + 1].W;
    std::vector<std::uint32_t> f(W.cols());
    for (Eigen::Index i = 0; i < W.cols(); ++i) f[i] = static_cast<std::uint32_t>((W.col(i).array() != 0.0f).count());
    fanout_.push_back(std::move(f));
  }
}

IfNetwork::IfNetwork(const Net& net, std::vector<double> lambda, const IfOptions& opt)
    : lambda_(std::move(lambda)), opt_(opt) {
  const std::vector<NetStage> stages = spiking_stages(net, "net");
  const std::size_t L = stages.size();
  const std::size_t S = spiking_layer_count(net, opt.readout);
  spiking_neurons_ = spiking_neuron_count(net, opt.readout);
  if (lambda_.size() != S)
    throw InputError(fmt::format("IF baseline: {} scales for {} spiking layers", lambda_.size(), S));
  check_options();
  for (std::size_t s = 0; s + 1 < L; ++s) check_if_activation(net.layers[stages[s].last].activation, s + 1);
  chains_.reserve(L);
  for (std::size_t l = 0; l < L; ++l) {
    const double in_scale = l == 0 ? 1.0 : lambda_[l - 1];
    const double out_scale = l < S ? lambda_[l] : 1.0;
    chains_.emplace_back(net, stages[l], 1.0);
    spike_weight_.push_back(in_scale / out_scale);
    b_.push_back(Eigen::Map<const Eigen::VectorXd>(chains_.back().bias().data(), chains_.back().out_size()) /
                 out_scale);
  }
  for (std::size_t l = 0; l + 1 < L && l < S; ++l) fanout_.push_back(chains_[l + 1].fanouts());
}

namespace {

// One step's threshold of a spiking layer: every neuron at or above 1 fires
// once and is reset by subtraction; `fired` becomes their indices, in order.
void fire(Eigen::VectorXd& v, std::vector<std::uint32_t>& counts, std::vector<std::uint32_t>& fired) {
  fired.clear();
  for (Eigen::Index j = 0; j < v.size(); ++j)
    if (v[j] >= 1.0) {
      v[j] -= 1.0;
      ++counts[static_cast<std::size_t>(j)];
      fired.push_back(static_cast<std::uint32_t>(j));
    }
}

}  // namespace

namespace {

void check_checkpoints(const std::vector<int>& checkpoints) {
  if (checkpoints.empty()) throw InputError("if_steps", "no steps given");
  if (checkpoints.front() < 1) throw InputError("if_steps", fmt::format("{} must be at least 1", checkpoints.front()));
  if (std::adjacent_find(checkpoints.begin(), checkpoints.end(), std::greater_equal<>()) != checkpoints.end())
    throw InputError("if_steps", fmt::format("{} must increase", fmt::join(checkpoints, ",")));
}

}  // namespace

IfSampleRun IfNetwork::run(const float* x) const { return run(x, {opt_.steps}).front(); }

std::vector<IfSampleRun> IfNetwork::run(const float* x, const std::vector<int>& checkpoints) const {
  check_checkpoints(checkpoints);
  if (!chains_.empty()) return run_graph(x, checkpoints);
  const std::size_t L = net_->layers.size();
  const std::size_t S = lambda_.size();
  IfSampleRun out;
  out.counts.resize(S);
  std::vector<Eigen::VectorXd> v(L);
  for (std::size_t l = 0; l < L; ++l) {
    v[l] = Eigen::VectorXd::Constant(net_->layers[l].out_size(), l < S ? opt_.v0 : 0.0);
    if (l < S) out.counts[l].assign(net_->layers[l].out_size(), 0);
  }
  const Eigen::VectorXd in1 = w_[0] * Eigen::Map<const Eigen::VectorXf>(x, net_->input_size()).cast<double>() + b_[0];
  Eigen::VectorXd out_sum = Eigen::VectorXd::Zero(net_->layers[L - 1].out_size());
  std::vector<std::uint32_t> fired;
  std::vector<IfSampleRun> runs;
  for (int t = 0; t < checkpoints.back(); ++t) {
    fired.clear();
    for (std::size_t l = 0; l < L; ++l) {
      Eigen::VectorXd& vl = v[l];
      Eigen::VectorXd input = l == 0 ? in1 : b_[l];
      if (l > 0)
        for (std::uint32_t i : fired) input += w_[l].col(i);
      if (l == L - 1) out_sum += input;
      vl += input;
      if (l >= S) continue;  // integrating readout
      fire(vl, out.counts[l], fired);
    }
    read_out(t + 1, checkpoints, out, out_sum, runs);
  }
  return runs;
}


// After step `t`: a copy of the run so far, finished, when t is a checkpoint.
void IfNetwork::read_out(int t, const std::vector<int>& checkpoints, const IfSampleRun& so_far,
                         const Eigen::VectorXd& out_sum, std::vector<IfSampleRun>& runs) const {
  if (runs.size() == checkpoints.size() || checkpoints[runs.size()] != t) return;
  IfSampleRun r;
  r.counts = so_far.counts;
  finish(r, out_sum);
  runs.push_back(std::move(r));
}

// Layer 1's input, constant over the window: c / lambda_1 plus each nonzero
// pixel's column A e_i times pixel / lambda_1 (the dense engine's W~ x + b~).
// Then, step by step, each stage's spikes scattered through its synapses.
std::vector<IfSampleRun> IfNetwork::run_graph(const float* x, const std::vector<int>& checkpoints) const {
  const std::size_t L = chains_.size();
  const std::size_t S = lambda_.size();
  IfSampleRun out;
  out.counts.resize(S);
  ChainScratch scratch;
  std::vector<Eigen::VectorXd> v(L);
  for (std::size_t l = 0; l < L; ++l) {
    v[l] = Eigen::VectorXd::Constant(chains_[l].out_size(), l < S ? opt_.v0 : 0.0);
    if (l < S) out.counts[l].assign(chains_[l].out_size(), 0);
  }
  Eigen::VectorXd in1 = b_[0];
  for (int i = 0; i < chains_[0].in_size(); ++i)
    if (x[i] != 0.0f) chains_[0].add_spike(static_cast<std::uint32_t>(i), spike_weight_[0] * x[i], in1.data(), scratch);
  Eigen::VectorXd out_sum = Eigen::VectorXd::Zero(chains_[L - 1].out_size());
  Eigen::VectorXd input;
  std::vector<std::uint32_t> fired;
  std::vector<IfSampleRun> runs;
  for (int t = 0; t < checkpoints.back(); ++t) {
    fired.clear();
    for (std::size_t l = 0; l < L; ++l) {
      Eigen::VectorXd& vl = v[l];
      if (l == 0) {
        input = in1;
      } else {
        input = b_[l];
        for (std::uint32_t i : fired) chains_[l].add_spike(i, spike_weight_[l], input.data(), scratch);
      }
      if (l == L - 1) out_sum += input;
      vl += input;
      if (l >= S) continue;  // integrating readout
      fire(vl, out.counts[l], fired);
    }
    read_out(t + 1, checkpoints, out, out_sum, runs);
  }
  return runs;
}

// Readout spike: argmax of the output layer's counts, ties by the summed
// output input, then the lowest index; integrate: argmax of the summed input.
void IfNetwork::finish(IfSampleRun& out, const Eigen::VectorXd& out_sum) const {
  const std::size_t S = lambda_.size();
  const std::size_t L = chains_.empty() ? net_->layers.size() : chains_.size();
  const auto n_out = static_cast<int>(out_sum.size());
  int best = 0;
  for (int j = 1; j < n_out; ++j) {
    if (S == L) {
      const auto& c = out.counts[L - 1];
      if (c[j] > c[best] || (c[j] == c[best] && out_sum[j] > out_sum[best])) best = j;
    } else if (out_sum[j] > out_sum[best]) {
      best = j;
    }
  }
  out.prediction = best;
  for (std::size_t l = 0; l < S; ++l)
    for (std::size_t i = 0; i < out.counts[l].size(); ++i) {
      out.spikes += out.counts[l][i];
      if (l < fanout_.size()) out.synops += static_cast<double>(out.counts[l][i]) * fanout_[l][i];
    }
}

namespace {

// The normalisation percentiles come from the train split ("percentile:
// empty sample" would name no input).
void require_train(const Dataset& train) {
  if (train.size() == 0)
    throw InputError("data", "no training images, and the IF baseline's normalisation percentiles come from the "
                             "train split");
}

}  // namespace

std::vector<double> if_scales(const Mlp& net, const Dataset& train, const IfOptions& opt) {
  require_train(train);
  std::vector<double> lambda;
  for (const auto& a : layer_activations(net, train, opt.readout))
    lambda.push_back(percentile(std::vector<float>(a.data(), a.data() + a.size()), opt.percentile));
  return lambda;
}
std::vector<double> if_scales(const Net& net, const Dataset& train, const IfOptions& opt) {
  require_train(train);
  return layer_percentiles(net, train, opt.readout, opt.percentile);
}

namespace {

void check_if_net(const Mlp& net) { net.validate("net"); }
void check_if_net(const Net& net) { (void)spiking_stages(net, "net"); }

// train: where lambda comes from, or null when `lambda` is given. One
// result per checkpoint (the run read out after that many steps).
template <class NetT>
std::vector<IfResult> simulate_if_any(const NetT& net, const Dataset* train, std::vector<double> lambda,
                                      const Dataset& test_all, IfOptions opt, const std::vector<int>& checkpoints) {
  check_if_net(net);
  check_checkpoints(checkpoints);
  const Dataset test = simulation_subset(test_all, opt.limit, net.input_size(), net.output_size(), opt.subset);
  opt.steps = checkpoints.back();
  {
    // A work bound like simulate_network's: 2e9 steps would run for days.
    const auto neurons = static_cast<double>(spiking_neuron_count(net, opt.readout));
    const double work = static_cast<double>(test.size()) * opt.steps * neurons;
    if (work > kMaxIfNeuronSteps)
      throw InputError("if_steps", fmt::format("{:.3g} neuron-steps ({} test images x {} steps x {} spiking "
                                               "neurons), beyond the budget of {:.0e}; lower if_steps or limit",
                                   work, test.size(), opt.steps, neurons, kMaxIfNeuronSteps));
  }
  IfResult base;
  base.samples = test.size();
  base.lambda = train ? if_scales(net, *train, opt) : std::move(lambda);
  const IfNetwork ifn(net, base.lambda, opt);
  base.acc_ann = net.accuracy(test);
  const int n = test.size();
  const std::size_t K = checkpoints.size();
  std::vector<std::vector<int>> predictions(K, std::vector<int>(n, -1));
  std::vector<std::vector<double>> synops(K, std::vector<double>(n)), spikes(K, std::vector<double>(n));
  LoopErrors errors;  // an exception must not leave the parallel loop (std::terminate)
  {
    const ctmc::ThreadScope threads(opt.threads);
#pragma omp parallel for schedule(dynamic, 4)
    for (int s = 0; s < n; ++s) {
      errors.run(s, [&] {
        const std::vector<IfSampleRun> runs = ifn.run(test.images.col(s).data(), checkpoints);
        for (std::size_t k = 0; k < K; ++k) {
          predictions[k][s] = runs[k].prediction;
          synops[k][s] = runs[k].synops;
          spikes[k][s] = static_cast<double>(runs[k].spikes);
        }
      });
    }
  }
  errors.rethrow();
  std::vector<IfResult> out;
  for (std::size_t k = 0; k < K; ++k) {
    IfResult res = base;
    res.predictions = std::move(predictions[k]);
    int correct = 0;
    double syn_sum = 0, spk_sum = 0;
    for (int s = 0; s < n; ++s) {
      correct += res.predictions[s] == test.labels[s];
      syn_sum += synops[k][s];
      spk_sum += spikes[k][s];
    }
    res.acc_if = static_cast<double>(correct) / n;
    res.synops_mean = syn_sum / n;
    double var = 0;
    for (int s = 0; s < n; ++s) var += (synops[k][s] - res.synops_mean) * (synops[k][s] - res.synops_mean);
    res.synops_sd = n > 1 ? std::sqrt(var / (n - 1)) : 0;
    res.spikes_per_neuron = spk_sum / n / static_cast<double>(ifn.spiking_neurons());
    out.push_back(std::move(res));
  }
  return out;
}

}  // namespace

IfResult simulate_if(const Mlp& net, const Dataset& train, const Dataset& test, const IfOptions& opt) {
  return simulate_if_any(net, &train, {}, test, opt, {opt.steps}).front();
}

IfResult simulate_if(const Net& net, const Dataset& train, const Dataset& test, const IfOptions& opt) {
  return simulate_if_any(net, &train, {}, test, opt, {opt.steps}).front();
}

std::vector<IfResult> simulate_if_scaled(const Mlp& net, std::vector<double> lambda, const Dataset& test,
                                         const IfOptions& opt, const std::vector<int>& steps) {
  return simulate_if_any(net, nullptr, std::move(lambda), test, opt, steps);
}

std::vector<IfResult> simulate_if_scaled(const Net& net, std::vector<double> lambda, const Dataset& test,
                                         const IfOptions& opt, const std::vector<int>& steps) {
  return simulate_if_any(net, nullptr, std::move(lambda), test, opt, steps);
}

}  // namespace ctmc::sim
