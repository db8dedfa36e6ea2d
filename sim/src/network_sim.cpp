#include "ctmc/sim/network_sim.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "ctmc/activations/activation.hpp"
#include "meanfield.hpp"
#include "ctmc/sim/neuron_kernel.hpp"
#include "ctmc/sim/rng.hpp"
#include "ctmc/sim/stats.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "loop_errors.hpp"

namespace ctmc::sim {

ScaleMode parse_scale_mode(const std::string& text, const std::string& option) {
  if (text == "q99") return ScaleMode::Q99;
  if (text == "const") return ScaleMode::Const;
  throw InputError(option, fmt::format("unknown scale '{}' (expected q99 or const)", text));
}

OutputScale parse_output_scale(const std::string& text, const std::string& option) {
  if (text == "logits") return OutputScale::Logits;
  if (text == "activation") return OutputScale::Activation;
  throw InputError(option, fmt::format("unknown output scale '{}' (expected logits or activation)", text));
}

double percentile(std::vector<float> v, double p) {
  if (v.empty()) throw InputError("percentile: empty sample");
  if (!(p >= 0 && p <= 100)) throw InputError(fmt::format("percentile: p = {} outside [0, 100]", p));
  const double pos = p / 100.0 * static_cast<double>(v.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  std::nth_element(v.begin(), v.begin() + lo, v.end());
  const double a = v[lo];
  if (lo + 1 >= v.size()) return a;
  const double b = *std::min_element(v.begin() + lo + 1, v.end());
  return a + (pos - static_cast<double>(lo)) * (b - a);
}

std::vector<Eigen::MatrixXf> layer_activations(const Mlp& net, const Dataset& data, Readout readout) {
  std::vector<Eigen::MatrixXf> acts = net.hidden_activations(data.images);
  if (readout == Readout::Spike) acts.push_back(net.forward(data.images));
  return acts;
}


std::vector<Eigen::MatrixXf> layer_activations(const Net& net, const Dataset& data, Readout readout) {
  std::vector<std::string> phi;
  for (const NetLayer& L : net.layers)
    if (L.activation != "linear") phi.push_back(L.activation);
  std::vector<Eigen::MatrixXf> acts;
  if (data.size() == 0) {  // no images (e.g. no train split): empty matrices, q99 NaN
    for (const NetStage& st : spiking_stages(net, "net"))
      acts.emplace_back(static_cast<Eigen::Index>(net.layers[st.last].out.size()), 0);
    if (readout == Readout::Integrate) acts.pop_back();
    return acts;
  }
  const Eigen::MatrixXf logits = net.forward_with(data.images, [&](std::size_t s, Eigen::MatrixXf& z) {
    apply_activation(phi[s], z);
    acts.push_back(z);
  });
  if (readout == Readout::Spike) acts.push_back(logits);
  return acts;
}

namespace {

// phi of the output layer's neurons when q99 is taken of phi(z^L)
// (OutputScale::Activation: they approximate alpha_fit phi(z^L)); none for
// other layers or the logits scale.
std::optional<activations::Activation> q99_transform(const std::vector<NeuronModel>& neurons, std::size_t l,
                                                     bool output_layer, OutputScale output_scale) {
  if (!output_layer || output_scale != OutputScale::Activation) return std::nullopt;
  const NeuronModel& nm = neurons.size() == 1 ? neurons[0] : neurons.at(l);
  const auto target = nm.model.meta.find("target");
  if (target == nm.model.meta.end() || !target->is_string())
    throw InputError("output_scale", fmt::format("activation: {} has no meta.target naming its activation", nm.source));
  return activations::parse_activation(target->get<std::string>(), nm.source + ": meta.target");
}

void apply_transform(const std::optional<activations::Activation>& phi, float* v, std::size_t n) {
  if (phi)
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(phi->eval(static_cast<double>(v[i])));
}

// q99 of each layer's activations; `output_layer` is the index of the
// output layer (its logits, or phi of them with OutputScale::Activation).
std::vector<double> q99_of(const std::vector<Eigen::MatrixXf>& acts, std::size_t output_layer,
                           const std::vector<NeuronModel>& neurons, OutputScale output_scale) {
  std::vector<double> q99;
  for (std::size_t l = 0; l < acts.size(); ++l) {
    std::vector<float> a(acts[l].data(), acts[l].data() + acts[l].size());
    apply_transform(q99_transform(neurons, l, l == output_layer, output_scale), a.data(), a.size());
    q99.push_back(a.empty() ? std::numeric_limits<double>::quiet_NaN() : percentile(std::move(a), 99.0));
  }
  return q99;
}

// The p-th percentile of n values given in parts, equal to percentile() of
// all of them: it needs the order statistics at ranks floor(p/100 (n-1)) and
// the one after, so only the values from that rank up are kept (the top 1%
// for q99). A conv layer's activations over a whole train split (VGG-11's
// first layer: 50,176 units x 60,000 images) are then never held at once.
class StreamPercentile {
 public:
  StreamPercentile(std::size_t n, double p)
      : pos_(n ? p / 100.0 * static_cast<double>(n - 1) : 0.0),
        keep_(n - static_cast<std::size_t>(std::floor(pos_))) {}
  void add(const float* v, std::size_t m) {
    kept_.insert(kept_.end(), v, v + m);
    if (kept_.size() > 2 * keep_ + (std::size_t(1) << 16)) trim();
  }
  double value() {
    trim();
    if (kept_.empty()) return std::numeric_limits<double>::quiet_NaN();
    std::nth_element(kept_.begin(), kept_.begin(), kept_.end());
    const double a = kept_[0];
    if (kept_.size() < 2) return a;
    const double b = *std::min_element(kept_.begin() + 1, kept_.end());
    return a + (pos_ - std::floor(pos_)) * (b - a);
  }

 private:
  void trim() {
    if (kept_.size() <= keep_) return;
    const auto drop = static_cast<std::ptrdiff_t>(kept_.size() - keep_);
    std::nth_element(kept_.begin(), kept_.begin() + drop, kept_.end());
    kept_.erase(kept_.begin(), kept_.begin() + drop);
  }
  double pos_;
  std::size_t keep_;
  std::vector<float> kept_;
};

// Train images per forward pass of layer_q99(Net): the batch's activations
// (units x images) are what a pass holds.
constexpr Eigen::Index kQ99Batch = 256;

}  // namespace

std::vector<double> layer_q99(const Mlp& net, const Dataset& train, const std::vector<NeuronModel>& neurons,
                              Readout readout, OutputScale output_scale) {
  return q99_of(layer_activations(net, train, readout), net.layers.size() - 1, neurons, output_scale);
}

namespace {

// The p-th percentile of each spiking layer's activations over `train`
// (hidden a^l; then the logits, or transform_out of them, when readout =
// spike), streamed in batches of kQ99Batch images.
std::vector<double> streamed_layer_percentiles(const Net& net, const Dataset& train, Readout readout, double p,
                                               const std::optional<activations::Activation>& transform_out) {
  const std::vector<NetStage> stages = spiking_stages(net, "net");
  const std::size_t S = spiking_layer_count(net, readout), out = stages.size() - 1;
  std::vector<std::string> phi;
  for (const NetLayer& L : net.layers)
    if (L.activation != "linear") phi.push_back(L.activation);
  std::vector<StreamPercentile> q;
  for (std::size_t l = 0; l < S; ++l)
    q.emplace_back(static_cast<std::size_t>(net.layers[stages[l].last].out.size()) * static_cast<std::size_t>(train.size()),
                   p);
  for (Eigen::Index b = 0; b < train.images.cols(); b += kQ99Batch) {
    const Eigen::MatrixXf x = train.images.middleCols(b, std::min(kQ99Batch, train.images.cols() - b));
    Eigen::MatrixXf logits = net.forward_with(x, [&](std::size_t s, Eigen::MatrixXf& z) {
      apply_activation(phi[s], z);
      q[s].add(z.data(), static_cast<std::size_t>(z.size()));
    });
    if (readout == Readout::Spike) {
      apply_transform(transform_out, logits.data(), static_cast<std::size_t>(logits.size()));
      q[out].add(logits.data(), static_cast<std::size_t>(logits.size()));
    }
  }
  std::vector<double> values;
  for (auto& pq : q) values.push_back(pq.value());
  return values;
}

}  // namespace

std::vector<double> layer_q99(const Net& net, const Dataset& train, const std::vector<NeuronModel>& neurons,
                              Readout readout, OutputScale output_scale) {
  const std::size_t out = spiking_stages(net, "net").size() - 1;
  return streamed_layer_percentiles(
      net, train, readout, 99.0,
      readout == Readout::Spike ? q99_transform(neurons, out, true, output_scale) : std::nullopt);
}

std::vector<double> layer_percentiles(const Net& net, const Dataset& train, Readout readout, double p) {
  if (!(p >= 0 && p <= 100)) throw InputError(fmt::format("percentile: p = {} outside [0, 100]", p));
  return streamed_layer_percentiles(net, train, readout, p, std::nullopt);
}

namespace {

// percentile() of `values` at each level.
template <std::size_t N>
std::vector<double> quantiles_at(const std::vector<float>& values, const double (&levels)[N]) {
  std::vector<double> q;
  for (double p : levels) q.push_back(percentile(values, p));
  return q;
}

// What simulate_network needs beyond the members an Mlp and a Net share.
void check_net(const Mlp& net) { net.validate("net"); }
void check_net(const Net& net) { (void)spiking_stages(net, "net"); }
int layer_units(const Mlp& net, std::size_t l) { return net.layers[l].out_size(); }
int layer_units(const Net& net, std::size_t l) {
  return static_cast<int>(net.layers[spiking_stages(net, "net")[l].last].out.size());
}

template <class NetT>
NetworkSimResult simulate_any(const NetT& net, const Dataset& train, const Dataset& test_all,
                              const std::vector<NeuronModel>& neurons, const NetworkSimOptions& opt) {
  check_net(net);
  const std::size_t S = spiking_layer_count(net, opt.snn.readout);
  if (neurons.size() != 1 && neurons.size() != S)
    throw InputError("neurons", fmt::format("{} models given; give one for all spiking layers or {} (one per layer)",
                                            neurons.size(), S));
  if (opt.trials < 1) throw InputError("trials", fmt::format("{} must be at least 1", opt.trials));
  if (opt.first_trial < 0) throw InputError(fmt::format("first trial {} must be at least 0", opt.first_trial));
  if (!(opt.rate > 0) || !std::isfinite(opt.rate)) throw InputError("rate", fmt::format("{} must be positive", opt.rate));
  const Dataset test = simulation_subset(test_all, opt.limit, net.input_size(), net.output_size(), opt.subset);
  if (!opt.layer_alpha.empty() && opt.layer_alpha.size() != S)
    throw InputError("layer_alpha", fmt::format("{} values given for {} spiking layers", opt.layer_alpha.size(), S));
  if (opt.output_scale == OutputScale::Activation && opt.snn.readout != Readout::Spike)
    throw InputError("output_scale", "activation needs the spike readout (the integrating output layer has no scale)");
  for (double a : opt.layer_alpha)
    if (!std::isnan(a) && (!(a > 0) || !std::isfinite(a)))
      throw InputError("layer_alpha", fmt::format("{} is not a positive finite number", a));
  {
    const auto neurons = static_cast<double>(spiking_neuron_count(net, opt.snn.readout));
    const double runs = static_cast<double>(opt.trials) * test.size();
    const double steps = std::round(opt.snn.T / opt.snn.dt);  // T and dt themselves are checked by SpikingNetwork
    if (runs > kMaxSampleRuns)
      throw InputError("trials", fmt::format("{} trials x {} test images = {:.3g} sample runs, beyond the budget of "
                                             "{:.0e}; lower trials or limit",
                                   opt.trials, test.size(), runs, kMaxSampleRuns));
    if (std::isfinite(steps) && runs * steps * neurons > kMaxNeuronSteps)
      throw InputError("T", fmt::format("{:.3g} neuron-steps ({} trials x {} test images x {:.3g} steps x {} "
                                        "spiking neurons), beyond the budget of {:.0e}; lower T, trials or limit, or "
                                        "raise dt",
                                   runs * steps * neurons, opt.trials, test.size(), steps, neurons, kMaxNeuronSteps));
  }
  const ctmc::ThreadScope threads(opt.threads);

  NetworkSimResult res;
  res.samples = test.size();
  // Layer scales alpha_l = r / q99_l (or r). The q99 come from the train
  // split; without training images (it said "percentile: empty sample") the
  // const scale still works, and q99 is reported as NaN.
  if (train.size() == 0 && opt.scale == ScaleMode::Q99)
    throw InputError("data", "no training images, and the q99 scale takes the layer scales from the train split; "
                             "add training images or use the const scale");
  const std::vector<double> q99s =
      opt.q99.empty() ? layer_q99(net, train, neurons, opt.snn.readout, opt.output_scale) : opt.q99;
  if (q99s.size() != S)
    throw InputError(fmt::format("{} q99 values given for {} spiking layers", q99s.size(), S));
  std::vector<SpikingLayer> layers;
  std::vector<RateFunction> rates;
  for (std::size_t l = 0; l < S; ++l) {
    const NeuronModel& nm = neurons.size() == 1 ? neurons[0] : neurons[l];
    const double q = q99s[l];
    const bool by_hand = !opt.layer_alpha.empty() && !std::isnan(opt.layer_alpha[l]);
    if (opt.scale == ScaleMode::Q99 && !by_hand && !(q > 0))
      throw InputError("scale", fmt::format("q99: layer {} has 99th activation percentile {} <= 0; use the const "
                                            "scale",
                                            l + 1, q));
    const double alpha = by_hand ? opt.layer_alpha[l] : opt.scale == ScaleMode::Q99 ? opt.rate / q : opt.rate;
    const double afit = alpha_fit_of(nm.model, nm.source);
    res.q99.push_back(q);
    res.alpha.push_back(alpha);
    res.alpha_fit.push_back(afit);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    res.fit_domain.push_back(fit_domain_of(nm.model, nm.source).value_or(std::make_pair(nan, nan)));
    layers.push_back({NeuronKernel(nm.model, alpha / afit, nm.source), alpha});
    rates.push_back(ctmc_rate_function(NeuronKernel(nm.model, 1.0, nm.source), afit));
  }

  // A_ANN (float forward of the source network).
  res.acc_ann = net.accuracy(test);

  // A_MF.
  const int n = test.size();
  std::vector<int> mf_pred(n);
  // Inputs outside each layer's fit domain, per sample (summed after the loop).
  std::vector<std::vector<std::int64_t>> outside(S, std::vector<std::int64_t>(static_cast<std::size_t>(n), 0));
  // Expected CTMC transitions per unit time of each sample's spiking neurons
  // at their mean-field inputs (the work estimate for kMaxTransitions); the
  // uniformization sampler draws jumps at the largest exit rate Lambda,
  // virtual ones included.
  std::vector<double> jump_rates(static_cast<std::size_t>(n), 0.0);
  // The mean-field activations, kept per sample when windows are read out
  // (their decoded rates are compared with these).
  const std::size_t windows = opt.snn.checkpoints.size();
  std::vector<std::vector<Eigen::VectorXd>> mf_acts(windows ? static_cast<std::size_t>(n) : 0);
  const bool uniformized = opt.snn.sampler == SamplerKind::Uniformization;
  // The rate functions solve each neuron's chain and throw InputError for an
  // input where it has no unique stationary law (two closed classes).
  detail::LoopErrors mf_errors;
#pragma omp parallel for schedule(dynamic, 8)
  for (int s = 0; s < n; ++s)
    mf_errors.run(s, [&] {
      const auto mf = mean_field_forward(net, test.images.col(s).data(), rates, opt.snn.readout);
      mf_pred[s] = mf.prediction;
      if (windows) mf_acts[static_cast<std::size_t>(s)] = mf.activations;
      for (std::size_t l = 0; l < S; ++l) {
        const auto [lo, hi] = res.fit_domain[l];  // NaN without a domain: no input counts as outside
        for (double h : mf.inputs[l]) {
          jump_rates[static_cast<std::size_t>(s)] += uniformized ? layers[l].kernel.max_exit_rate(h)
                                                                 : layers[l].kernel.jump_rate(h);
          outside[l][static_cast<std::size_t>(s)] += h < lo || h > hi;
        }
      }
    });
  mf_errors.rethrow();
  int mf_correct = 0;
  for (int s = 0; s < n; ++s) mf_correct += mf_pred[s] == test.labels[s];
  res.acc_mf = static_cast<double>(mf_correct) / n;
  if (opt.layer_quantiles && windows)
    for (std::size_t l = 0; l < S; ++l) {
      std::vector<float> values;
      for (const auto& acts : mf_acts)
        for (double a : acts[l]) values.push_back(static_cast<float>(a));
      res.layer_mf_quantiles.push_back(quantiles_at(values, kLayerQuantileLevels));
    }
  for (std::size_t l = 0; l < S; ++l) {
    std::int64_t count = 0;
    for (auto c : outside[l]) count += c;
    const double inputs = static_cast<double>(n) * static_cast<double>(layer_units(net, l));
    res.outside_fit_domain.push_back(static_cast<double>(count) / inputs);
  }

  // A_SNN, trial by trial.
  const SpikingNetwork snn(net, std::move(layers), opt.snn);
  res.steps = snn.steps();
  res.spiking_neurons = snn.spiking_neurons();
  {
    // After SpikingNetwork, which refuses a bad --T/--dt first. Not for the
    // Euler sampler: at most one move per neuron and step, whatever the rates.
    double rate_sum = 0;
    for (double r : jump_rates) rate_sum += r;
    const double expected = static_cast<double>(opt.trials) * opt.snn.T * rate_sum;
    if (opt.snn.sampler != SamplerKind::Euler && !(expected <= kMaxTransitions))
      throw InputError(
          "rate", fmt::format(
          "about {:.3g} {} expected ({} trials x T = {:g} x {:.3g} per unit time, summed over the test "
          "images' spiking neurons at their mean-field inputs), beyond the budget of {:.0e}; lower rate (alpha_l "
          "scales every rate), T, trials or limit",
          expected, uniformized ? "uniformization jumps (virtual ones included)" : "CTMC transitions", opt.trials,
          opt.snn.T, rate_sum, kMaxTransitions));
  }
  const std::size_t total = static_cast<std::size_t>(opt.trials) * n;
  res.predictions.assign(total, -1);
  res.synops.assign(total, 0);
  std::vector<std::uint64_t> spikes(total), transitions(total), renorm(total);
  // Per (run, window): the reading, and per layer its squared deviation
  // from the mean field and the mean field's square (summed in run order
  // after the parallel loop, so thread count does not change the sums).
  std::vector<SampleRun> readings(total * windows);
  std::vector<double> sq_dev(total * windows * S), sq_mf(total * windows * S), layer_spk(total * windows * S);
  // Per (run, window): every spiking neuron's count, layers concatenated.
  const std::size_t neurons_total = snn.spiking_neurons();
  std::vector<float> pooled_counts(total * windows * neurons_total);
  // layer_quantiles: per (window, layer), every run's decoded activations,
  // run-major (each run writes its own slice).
  std::vector<std::vector<float>> decoded(opt.layer_quantiles ? windows * S : 0);
  for (std::size_t w = 0; w < decoded.size(); ++w)
    decoded[w].resize(total * static_cast<std::size_t>(layer_units(net, w % S)));
  const std::int64_t jobs = static_cast<std::int64_t>(total);
  detail::LoopErrors snn_errors;  // the samplers evaluate the kernels, which can throw like the mean field
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t job = 0; job < jobs; ++job) {
    snn_errors.run(job, [&] {
      const int t = opt.first_trial + static_cast<int>(job / n), s = static_cast<int>(job % n);
      SampleRun r = snn.run(test.images.col(s).data(), sample_stream_seed(opt.seed, t, s));
      res.predictions[job] = r.prediction;
      res.synops[job] = r.synops;
      spikes[job] = r.spikes;
      transitions[job] = r.transitions;
      renorm[job] = r.euler_renormalized;
      for (std::size_t w = 0; w < windows; ++w) {
        for (std::size_t l = 0; l < S; ++l) {
          const Eigen::VectorXd& mf = mf_acts[static_cast<std::size_t>(s)][l];
          const std::size_t at = (static_cast<std::size_t>(job) * windows + w) * S + l;
          const Eigen::VectorXd a_hat = snn.decode(r.at[w], l);
          sq_dev[at] = (a_hat - mf).squaredNorm();
          if (opt.layer_quantiles) {
            float* out = decoded[w * S + l].data() + static_cast<std::size_t>(job) * static_cast<std::size_t>(a_hat.size());
            for (Eigen::Index i = 0; i < a_hat.size(); ++i) out[i] = static_cast<float>(a_hat[i]);
          }
          sq_mf[at] = mf.squaredNorm();
          for (std::uint32_t c : r.at[w].counts[l]) layer_spk[at] += c;
        }
        float* pooled = pooled_counts.data() + (static_cast<std::size_t>(job) * windows + w) * neurons_total;
        for (const auto& layer : r.at[w].counts)
          for (std::uint32_t c : layer) *pooled++ = static_cast<float>(c);
        r.at[w].counts.clear();  // read: only the totals are kept
        readings[static_cast<std::size_t>(job) * windows + w] = std::move(r.at[w]);
      }
    });
  }
  snn_errors.rethrow();
  const auto accuracy = [&](auto prediction_of) {
    std::vector<double> acc;
    for (int t = 0; t < opt.trials; ++t) {
      int correct = 0;
      for (int s = 0; s < n; ++s) correct += prediction_of(static_cast<std::size_t>(t) * n + s) == test.labels[s];
      acc.push_back(static_cast<double>(correct) / n);
    }
    return acc;
  };
  res.acc_snn = accuracy([&](std::size_t j) { return res.predictions[j]; });
  double spike_sum = 0, trans_sum = 0;
  for (std::size_t j = 0; j < total; ++j) {
    spike_sum += static_cast<double>(spikes[j]);
    trans_sum += static_cast<double>(transitions[j]);
    res.euler_renormalized += renorm[j];
  }
  res.acc_snn_mean = mean_of(res.acc_snn);
  res.acc_snn_sd = sd_of(res.acc_snn);
  res.synops_mean = mean_of(res.synops);
  res.synops_sd = sd_of(res.synops);
  // No spiking neuron (a single integrating layer) means no spikes: 0, not 0/0.
  const auto per_neuron = [&](double spikes_total, double neurons) {
    return neurons == 0 ? 0.0 : spikes_total / static_cast<double>(total) / neurons;
  };
  res.spikes_per_neuron = per_neuron(spike_sum, static_cast<double>(res.spiking_neurons));
  res.transitions_per_sample = trans_sum / static_cast<double>(total);

  for (std::size_t w = 0; w < windows; ++w) {
    WindowResult win;
    win.T = opt.snn.checkpoints[w];
    const auto reading = [&](std::size_t j) -> const SampleRun& { return readings[j * windows + w]; };
    win.acc_snn = accuracy([&](std::size_t j) { return reading(j).prediction; });
    win.acc_snn_mean = mean_of(win.acc_snn);
    win.acc_snn_sd = sd_of(win.acc_snn);
    std::vector<double> synops(total);
    double spikes_w = 0, trans_w = 0, ties = 0;
    for (std::size_t j = 0; j < total; ++j) {
      synops[j] = reading(j).synops;
      spikes_w += static_cast<double>(reading(j).spikes);
      trans_w += static_cast<double>(reading(j).transitions);
      ties += reading(j).tie;
    }
    win.synops_mean = mean_of(synops);
    win.synops_sd = sd_of(synops);
    win.spikes_per_neuron = per_neuron(spikes_w, static_cast<double>(res.spiking_neurons));
    win.transitions_per_sample = trans_w / static_cast<double>(total);
    win.tie_fraction = ties / static_cast<double>(total);
    std::vector<float> counts;
    counts.reserve(total * neurons_total);
    for (std::size_t j = 0; j < total; ++j) {
      const float* c = pooled_counts.data() + (j * windows + w) * neurons_total;
      counts.insert(counts.end(), c, c + neurons_total);
    }
    if (!counts.empty()) {
      win.silent_fraction = static_cast<double>(std::count(counts.begin(), counts.end(), 0.0f)) /
                            static_cast<double>(counts.size());
      win.count_quantiles = quantiles_at(counts, kCountQuantileLevels);
    }
    for (std::size_t l = 0; l < S; ++l) {
      double dev = 0, ref = 0, layer_spikes = 0;
      for (std::size_t j = 0; j < total; ++j) {
        const std::size_t at = (j * windows + w) * S + l;
        dev += sq_dev[at];
        ref += sq_mf[at];
        layer_spikes += layer_spk[at];
      }
      win.layer_rate_rel_rmse.push_back(ref > 0 ? std::sqrt(dev / ref) : std::numeric_limits<double>::quiet_NaN());
      win.layer_spikes_per_neuron.push_back(per_neuron(layer_spikes, layer_units(net, l)));
      if (opt.layer_quantiles) win.layer_decoded_quantiles.push_back(quantiles_at(decoded[w * S + l], kLayerQuantileLevels));
    }
    res.windows.push_back(std::move(win));
  }
  return res;
}

}  // namespace

NetworkSimResult simulate_network(const Mlp& net, const Dataset& train, const Dataset& test,
                                  const std::vector<NeuronModel>& neurons, const NetworkSimOptions& opt) {
  return simulate_any(net, train, test, neurons, opt);
}

NetworkSimResult simulate_network(const Net& net, const Dataset& train, const Dataset& test,
                                  const std::vector<NeuronModel>& neurons, const NetworkSimOptions& opt) {
  return simulate_any(net, train, test, neurons, opt);
}

}  // namespace ctmc::sim
