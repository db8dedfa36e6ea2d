#include "ctmc/sim/engines/network_sim.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include "ctmc/activations/activation.hpp"
#include "meanfield.hpp"
#include "ctmc/sim/neurons/neuron_kernel.hpp"
#include "ctmc/sim/neurons/rng.hpp"
#include "ctmc/sim/engines/stats.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/core/loop_errors.hpp"

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

std::string scale_name(ScaleMode s) { return s == ScaleMode::Q99 ? "q99" : "const"; }

std::string output_scale_name(OutputScale s) { return s == OutputScale::Logits ? "logits" : "activation"; }

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

// The options' own checks, in the order a user meets them, and the test
// images they select. T and dt are checked by SpikingNetwork.
template <class NetT>
Dataset checked_test_subset(const NetT& net, const Dataset& test_all, const std::vector<NeuronModel>& neurons,
                            const NetworkSimOptions& opt) {
  check_net(net);
  const std::size_t S = spiking_layer_count(net, opt.snn.readout);
  if (neurons.size() != 1 && neurons.size() != S)
    throw InputError("neurons", fmt::format("{} models given; give one for all spiking layers or {} (one per layer)",
                                            neurons.size(), S));
  if (opt.trials < 1) throw InputError("trials", fmt::format("{} must be at least 1", opt.trials));
  if (opt.first_trial < 0) throw InputError(fmt::format("first trial {} must be at least 0", opt.first_trial));
  if (!(opt.rate > 0) || !std::isfinite(opt.rate)) throw InputError("rate", fmt::format("{} must be positive", opt.rate));
  Dataset test = simulation_subset(test_all, opt.limit, net.input_size(), net.output_size(), opt.subset);
  if (!opt.layer_alpha.empty() && opt.layer_alpha.size() != S)
    throw InputError("layer_alpha", fmt::format("{} values given for {} spiking layers", opt.layer_alpha.size(), S));
  if (opt.output_scale == OutputScale::Activation && opt.snn.readout != Readout::Spike)
    throw InputError("output_scale", "activation needs the spike readout (the integrating output layer has no scale)");
  for (double a : opt.layer_alpha)
    if (!std::isnan(a) && (!(a > 0) || !std::isfinite(a)))
      throw InputError("layer_alpha", fmt::format("{} is not a positive finite number", a));
  const auto units = static_cast<double>(spiking_neuron_count(net, opt.snn.readout));
  const double runs = static_cast<double>(opt.trials) * test.size();
  const double steps = std::round(opt.snn.T / opt.snn.dt);
  if (runs > kMaxSampleRuns)
    throw InputError("trials", fmt::format("{} trials x {} test images = {:.3g} sample runs, beyond the budget of "
                                           "{:.0e}; lower trials or limit",
                                           opt.trials, test.size(), runs, kMaxSampleRuns));
  if (std::isfinite(steps) && runs * steps * units > kMaxNeuronSteps)
    throw InputError("T", fmt::format("{:.3g} neuron-steps ({} trials x {} test images x {:.3g} steps x {} "
                                      "spiking neurons), beyond the budget of {:.0e}; lower T, trials or limit, or "
                                      "raise dt",
                                      runs * steps * units, opt.trials, test.size(), steps, units, kMaxNeuronSteps));
  return test;
}

// Each spiking layer's kernel at its scale alpha_l = r / q99_l (or r, or
// the value given by hand), and its mean-field rate function alpha_fit
// F(H) (eq. 4); res gets q99, alpha, alpha_fit and the fit domains.
struct ScaledLayers {
  std::vector<SpikingLayer> layers;
  std::vector<RateFunction> rates;
};

template <class NetT>
ScaledLayers scale_layers(const NetT& net, const Dataset& train, const std::vector<NeuronModel>& neurons,
                          const NetworkSimOptions& opt, NetworkSimResult& res) {
  const std::size_t S = spiking_layer_count(net, opt.snn.readout);
  // The q99 come from the train split; without training images (it said
  // "percentile: empty sample") the const scale still works, and q99 is
  // reported as NaN.
  if (train.size() == 0 && opt.scale == ScaleMode::Q99)
    throw InputError("data", "no training images, and the q99 scale takes the layer scales from the train split; "
                             "add training images or use the const scale");
  const std::vector<double> q99s =
      opt.q99.empty() ? layer_q99(net, train, neurons, opt.snn.readout, opt.output_scale) : opt.q99;
  if (q99s.size() != S)
    throw InputError(fmt::format("{} q99 values given for {} spiking layers", q99s.size(), S));
  ScaledLayers out;
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
    out.layers.push_back({NeuronKernel(nm.model, alpha / afit, nm.source), alpha});
    out.rates.push_back(ctmc_rate_function(NeuronKernel(nm.model, 1.0, nm.source), afit));
  }
  return out;
}

// The mean-field pass over the test images. res gets A_MF, the share of
// inputs outside each layer's fit domain and (layer_quantiles) the
// mean-field activations' quantiles; the spiking pass gets the rest.
struct MeanFieldPass {
  // Per sample, each spiking layer's mean-field activations (kept when
  // windows are read out: their decoded rates are compared with these).
  std::vector<std::vector<Eigen::VectorXd>> acts;
  // Per sample: the mean-field network classifies it correctly.
  std::vector<bool> correct;
  // Expected CTMC transitions per unit time of all samples' spiking neurons
  // at their mean-field inputs, summed in sample order: the work estimate
  // for kMaxTransitions. The uniformization sampler draws jumps at the
  // largest exit rate Lambda, virtual ones included.
  double jump_rate = 0;
};

template <class NetT>
MeanFieldPass mean_field_pass(const NetT& net, const Dataset& test, const ScaledLayers& scaled,
                              const NetworkSimOptions& opt, NetworkSimResult& res) {
  const std::size_t S = scaled.layers.size();
  const int n = test.size();
  std::vector<int> mf_pred(n);
  // Inputs outside each layer's fit domain, per sample (summed after the loop).
  std::vector<std::vector<std::int64_t>> outside(S, std::vector<std::int64_t>(static_cast<std::size_t>(n), 0));
  std::vector<double> jump_rates(static_cast<std::size_t>(n), 0.0);
  const std::size_t windows = opt.snn.checkpoints.size();
  MeanFieldPass pass;
  pass.acts.resize(windows ? static_cast<std::size_t>(n) : 0);
  const bool uniformized = opt.snn.sampler == SamplerKind::Uniformization;
  // The rate functions solve each neuron's chain and throw InputError for an
  // input where it has no unique stationary law (two closed classes).
  LoopErrors mf_errors;
#pragma omp parallel for schedule(dynamic, 8)
  for (int s = 0; s < n; ++s)
    mf_errors.run(s, [&] {
      const auto mf = mean_field_forward(net, test.images.col(s).data(), scaled.rates, opt.snn.readout);
      mf_pred[s] = mf.prediction;
      if (windows) pass.acts[static_cast<std::size_t>(s)] = mf.activations;
      for (std::size_t l = 0; l < S; ++l) {
        const auto [lo, hi] = res.fit_domain[l];  // NaN without a domain: no input counts as outside
        const NeuronKernel& kernel = scaled.layers[l].kernel;
        for (double h : mf.inputs[l]) {
          jump_rates[static_cast<std::size_t>(s)] += uniformized ? kernel.max_exit_rate(h) : kernel.jump_rate(h);
          outside[l][static_cast<std::size_t>(s)] += h < lo || h > hi;
        }
      }
    });
  mf_errors.rethrow();
  int mf_correct = 0;
  pass.correct.resize(static_cast<std::size_t>(n));
  for (int s = 0; s < n; ++s) {
    pass.correct[static_cast<std::size_t>(s)] = mf_pred[s] == test.labels[s];
    mf_correct += mf_pred[s] == test.labels[s];
  }
  res.acc_mf = static_cast<double>(mf_correct) / n;
  if (opt.layer_quantiles && windows)
    for (std::size_t l = 0; l < S; ++l) {
      std::vector<float> values;
      for (const auto& acts : pass.acts)
        for (double a : acts[l]) values.push_back(static_cast<float>(a));
      res.layer_mf_quantiles.push_back(quantiles_at(values, kLayerQuantileLevels));
    }
  for (std::size_t l = 0; l < S; ++l) {
    std::int64_t count = 0;
    for (auto c : outside[l]) count += c;
    const double inputs = static_cast<double>(n) * static_cast<double>(layer_units(net, l));
    res.outside_fit_domain.push_back(static_cast<double>(count) / inputs);
  }
  for (double r : jump_rates) pass.jump_rate += r;
  return pass;
}

// After SpikingNetwork, which refuses a bad --T/--dt first. Not for the
// Euler sampler: at most one move per neuron and step, whatever the rates.
void check_transition_budget(const NetworkSimOptions& opt, double jump_rate) {
  const double expected = static_cast<double>(opt.trials) * opt.snn.T * jump_rate;
  if (opt.snn.sampler == SamplerKind::Euler || expected <= kMaxTransitions) return;
  const bool uniformized = opt.snn.sampler == SamplerKind::Uniformization;
  throw InputError(
      "rate", fmt::format(
                  "about {:.3g} {} expected ({} trials x T = {:g} x {:.3g} per unit time, summed over the test "
                  "images' spiking neurons at their mean-field inputs), beyond the budget of {:.0e}; lower rate "
                  "(alpha_l scales every rate), T, trials or limit",
                  expected, uniformized ? "uniformization jumps (virtual ones included)" : "CTMC transitions",
                  opt.trials, opt.snn.T, jump_rate, kMaxTransitions));
}

// What the (trial, sample) runs leave beyond res.predictions and res.synops,
// indexed by run (trial-major), window and spiking layer. Each run writes
// only its own entries; the sums over runs are taken afterwards in run
// order, so the thread count does not change them.
struct TrialRecords {
  std::size_t runs = 0, windows = 0, layers = 0, neurons = 0;
  std::vector<std::uint64_t> spikes, transitions, renorm;  // per run
  std::vector<SampleRun> readings;                          // per (run, window)
  // Per (run, window, layer): the squared deviation of the decoded rates from
  // the mean field, the mean field's square, and the layer's spikes.
  std::vector<double> sq_dev, sq_mf, layer_spikes;
  std::vector<float> pooled_counts;  // per (run, window): every spiking neuron's count, layers concatenated
  // layer_quantiles: per (window, layer), every run's decoded activations, run-major.
  std::vector<std::vector<float>> decoded;

  // Index of (run, window), and of (run, window, layer).
  std::size_t at(std::size_t run, std::size_t w) const { return run * windows + w; }
  std::size_t at(std::size_t run, std::size_t w, std::size_t l) const { return at(run, w) * layers + l; }
  const SampleRun& reading(std::size_t run, std::size_t w) const { return readings[at(run, w)]; }
  const float* counts(std::size_t run, std::size_t w) const { return pooled_counts.data() + at(run, w) * neurons; }
};

template <class NetT>
TrialRecords run_trials(const NetT& net, const SpikingNetwork& snn, const Dataset& test,
                        const std::vector<std::vector<Eigen::VectorXd>>& mf_acts, const NetworkSimOptions& opt,
                        NetworkSimResult& res) {
  const int n = test.size();
  TrialRecords rec;
  rec.runs = static_cast<std::size_t>(opt.trials) * n;
  rec.windows = opt.snn.checkpoints.size();
  rec.layers = spiking_layer_count(net, opt.snn.readout);
  rec.neurons = snn.spiking_neurons();
  const std::size_t total = rec.runs, windows = rec.windows, S = rec.layers;
  res.predictions.assign(total, -1);
  res.synops.assign(total, 0);
  rec.spikes.resize(total);
  rec.transitions.resize(total);
  rec.renorm.resize(total);
  rec.readings.resize(total * windows);
  rec.sq_dev.resize(total * windows * S);
  rec.sq_mf.resize(total * windows * S);
  rec.layer_spikes.resize(total * windows * S);
  rec.pooled_counts.resize(total * windows * rec.neurons);
  rec.decoded.resize(opt.layer_quantiles ? windows * S : 0);
  for (std::size_t w = 0; w < rec.decoded.size(); ++w)
    rec.decoded[w].resize(total * static_cast<std::size_t>(layer_units(net, w % S)));
  const std::int64_t jobs = static_cast<std::int64_t>(total);
  LoopErrors snn_errors;  // the samplers evaluate the kernels, which can throw like the mean field
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t job = 0; job < jobs; ++job) {
    snn_errors.run(job, [&] {
      const int t = opt.first_trial + static_cast<int>(job / n), s = static_cast<int>(job % n);
      const auto run = static_cast<std::size_t>(job);
      SampleRun r = snn.run(test.images.col(s).data(), sample_stream_seed(opt.seed, t, s));
      res.predictions[run] = r.prediction;
      res.synops[run] = r.synops;
      rec.spikes[run] = r.spikes;
      rec.transitions[run] = r.transitions;
      rec.renorm[run] = r.euler_renormalized;
      for (std::size_t w = 0; w < windows; ++w) {
        for (std::size_t l = 0; l < S; ++l) {
          const Eigen::VectorXd& mf = mf_acts[static_cast<std::size_t>(s)][l];
          const std::size_t at = rec.at(run, w, l);
          const Eigen::VectorXd a_hat = snn.decode(r.at[w], l);
          rec.sq_dev[at] = (a_hat - mf).squaredNorm();
          if (opt.layer_quantiles) {
            float* out = rec.decoded[w * S + l].data() + run * static_cast<std::size_t>(a_hat.size());
            for (Eigen::Index i = 0; i < a_hat.size(); ++i) out[i] = static_cast<float>(a_hat[i]);
          }
          rec.sq_mf[at] = mf.squaredNorm();
          for (std::uint32_t c : r.at[w].counts[l]) rec.layer_spikes[at] += c;
        }
        float* pooled = rec.pooled_counts.data() + rec.at(run, w) * rec.neurons;
        for (const auto& layer : r.at[w].counts)
          for (std::uint32_t c : layer) *pooled++ = static_cast<float>(c);
        r.at[w].counts.clear();  // read: only the totals are kept
        rec.readings[rec.at(run, w)] = std::move(r.at[w]);
      }
    });
  }
  snn_errors.rethrow();
  return rec;
}

// A_SNN of each trial, from the prediction of run j (trial-major).
template <class PredictionOf>
std::vector<double> trial_accuracies(const Dataset& test, int trials, PredictionOf prediction_of) {
  const int n = test.size();
  std::vector<double> acc;
  for (int t = 0; t < trials; ++t) {
    int correct = 0;
    for (int s = 0; s < n; ++s) correct += prediction_of(static_cast<std::size_t>(t) * n + s) == test.labels[s];
    acc.push_back(static_cast<double>(correct) / n);
  }
  return acc;
}

// Classifier X against classifier Y on the same (trial, image) pairs, trial-
// major, both correct-per-pair predicates: n10 where only X is right.
template <class XRight, class YRight>
solvers::PairedCounts paired_counts(std::size_t pairs, XRight x_right, YRight y_right) {
  solvers::PairedCounts c;
  c.n = pairs;
  for (std::size_t j = 0; j < pairs; ++j) {
    const bool x = x_right(j), y = y_right(j);
    c.n10 += x && !y;
    c.n01 += !x && y;
  }
  return c;
}

// Spikes per neuron and sample; no spiking neuron (a single integrating
// layer) means no spikes: 0, not 0/0.
double per_neuron(double spikes, std::size_t runs, double neurons) {
  return neurons == 0 ? 0.0 : spikes / static_cast<double>(runs) / neurons;
}

// The readings at checkpoint w, summed over the runs.
template <class NetT>
WindowResult window_result(const NetT& net, const Dataset& test, const TrialRecords& rec, std::size_t w,
                           const NetworkSimOptions& opt, const NetworkSimResult& res,
                           const std::vector<bool>& ann_correct, const std::vector<bool>& mf_correct) {
  const std::size_t total = rec.runs;
  WindowResult win;
  win.T = opt.snn.checkpoints[w];
  win.acc_snn = trial_accuracies(test, opt.trials, [&](std::size_t j) { return rec.reading(j, w).prediction; });
  win.acc_snn_mean = mean_of(win.acc_snn);
  win.acc_snn_sd = sd_of(win.acc_snn);
  const auto n = static_cast<std::size_t>(test.size());
  const auto snn_right = [&](std::size_t j) { return rec.reading(j, w).prediction == test.labels[j % n]; };
  win.ann_vs_snn = paired_counts(total, [&](std::size_t j) { return ann_correct[j % n]; }, snn_right);
  win.mf_vs_snn = paired_counts(total, [&](std::size_t j) { return mf_correct[j % n]; }, snn_right);
  std::vector<double> synops(total), transitions(total);
  double spikes = 0, ties = 0;
  for (std::size_t j = 0; j < total; ++j) {
    synops[j] = rec.reading(j, w).synops;
    transitions[j] = static_cast<double>(rec.reading(j, w).transitions);
    spikes += static_cast<double>(rec.reading(j, w).spikes);
    ties += rec.reading(j, w).tie;
  }
  win.synops_mean = mean_of(synops);
  win.synops_sd = sd_of(synops);
  win.spikes_per_neuron = per_neuron(spikes, total, static_cast<double>(res.spiking_neurons));
  win.transitions_per_sample = std::accumulate(transitions.begin(), transitions.end(), 0.0) / static_cast<double>(total);
  win.transitions_sd = sd_of(transitions);
  win.tie_fraction = ties / static_cast<double>(total);
  std::vector<float> counts;
  counts.reserve(total * rec.neurons);
  for (std::size_t j = 0; j < total; ++j) counts.insert(counts.end(), rec.counts(j, w), rec.counts(j, w) + rec.neurons);
  if (!counts.empty()) {
    win.silent_fraction =
        static_cast<double>(std::count(counts.begin(), counts.end(), 0.0f)) / static_cast<double>(counts.size());
    win.count_quantiles = quantiles_at(counts, kCountQuantileLevels);
  }
  for (std::size_t l = 0; l < rec.layers; ++l) {
    double dev = 0, ref = 0, layer_spikes = 0;
    for (std::size_t j = 0; j < total; ++j) {
      dev += rec.sq_dev[rec.at(j, w, l)];
      ref += rec.sq_mf[rec.at(j, w, l)];
      layer_spikes += rec.layer_spikes[rec.at(j, w, l)];
    }
    win.layer_rate_rel_rmse.push_back(ref > 0 ? std::sqrt(dev / ref) : std::numeric_limits<double>::quiet_NaN());
    win.layer_spikes_per_neuron.push_back(per_neuron(layer_spikes, total, layer_units(net, l)));
    if (opt.layer_quantiles) {
      const std::vector<float>& decoded = rec.decoded[w * rec.layers + l];
      win.layer_decoded_quantiles.push_back(quantiles_at(decoded, kLayerQuantileLevels));
      win.layer_decoded.push_back(decoded);
    }
  }
  return win;
}

// The whole window's totals, then one WindowResult per checkpoint.
template <class NetT>
void summarise(const NetT& net, const Dataset& test, const TrialRecords& rec, const NetworkSimOptions& opt,
               const std::vector<bool>& ann_correct, const std::vector<bool>& mf_correct, NetworkSimResult& res) {
  const std::size_t total = rec.runs;
  res.acc_snn = trial_accuracies(test, opt.trials, [&](std::size_t j) { return res.predictions[j]; });
  double spikes = 0, transitions = 0;
  for (std::size_t j = 0; j < total; ++j) {
    spikes += static_cast<double>(rec.spikes[j]);
    transitions += static_cast<double>(rec.transitions[j]);
    res.euler_renormalized += rec.renorm[j];
  }
  res.acc_snn_mean = mean_of(res.acc_snn);
  res.acc_snn_sd = sd_of(res.acc_snn);
  res.synops_mean = mean_of(res.synops);
  res.synops_sd = sd_of(res.synops);
  res.spikes_per_neuron = per_neuron(spikes, total, static_cast<double>(res.spiking_neurons));
  res.transitions_per_sample = transitions / static_cast<double>(total);
  for (std::size_t w = 0; w < rec.windows; ++w)
    res.windows.push_back(window_result(net, test, rec, w, opt, res, ann_correct, mf_correct));
}

template <class NetT>
NetworkSimResult simulate_any(const NetT& net, const Dataset& train, const Dataset& test_all,
                              const std::vector<NeuronModel>& neurons, const NetworkSimOptions& opt) {
  const Dataset test = checked_test_subset(net, test_all, neurons, opt);
  const ctmc::ThreadScope threads(opt.threads);
  NetworkSimResult res;
  res.samples = test.size();
  ScaledLayers scaled = scale_layers(net, train, neurons, opt, res);
  // The float forward of the source network, per image for the paired
  // comparisons (the same predictions Net::accuracy scores).
  const std::vector<int> ann_pred = net.predict(test.images);
  std::vector<bool> ann_correct(ann_pred.size());
  int ann_right = 0;
  for (std::size_t s = 0; s < ann_pred.size(); ++s) {
    ann_correct[s] = ann_pred[s] == test.labels[s];
    ann_right += ann_correct[s];
  }
  res.acc_ann = ann_pred.empty() ? 0.0 : double(ann_right) / double(ann_pred.size());
  const MeanFieldPass mf = mean_field_pass(net, test, scaled, opt, res);
  res.ann_vs_mf = paired_counts(ann_correct.size(), [&](std::size_t s) { return ann_correct[s]; },
                                [&](std::size_t s) { return mf.correct[s]; });
  const SpikingNetwork snn(net, std::move(scaled.layers), opt.snn);
  res.steps = snn.steps();
  res.spiking_neurons = snn.spiking_neurons();
  res.kernel = snn.kernel();
  check_transition_budget(opt, mf.jump_rate);
  const TrialRecords rec = run_trials(net, snn, test, mf.acts, opt, res);
  summarise(net, test, rec, opt, ann_correct, mf.correct, res);
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

double estimated_network_seconds(double neuron_steps, int threads) {
  const int cores = std::max(1, omp_get_num_procs());
  const int used = std::clamp(threads > 0 ? threads : omp_get_max_threads(), 1, cores);
  return neuron_steps / (kNeuronStepsPerCoreSecond * used);
}

}  // namespace ctmc::sim
