// ANN -> mean-field -> spiking network evaluation on a data set (DESIGN.md
// section 7; paper sections 3.3-3.4, eqs. synops and decomp).
//
// For each spiking layer l (hidden layers, plus the output layer with
// readout = spike):
//   q99_l    99th percentile of layer l's ANN activations (hidden: a^l = phi(z^l);
//            output: the logits z^L, or phi(z^L) with OutputScale::Activation)
//            over all units and the training images, linear interpolation
//            between order statistics (numpy's default);
//   alpha_l  = r / q99_l (--scale q99) or r (--scale const), r = --rate, unless
//            given by hand (layer_alpha);
//   neurons  the layer's model with every rate times alpha_l / alpha_fit.
// A_ANN: the float ANN on the test images; A_MF: the mean-field network
// (every neuron replaced by its stationary rate, sim/engines/src/meanfield.hpp);
// A_SNN: one accuracy per trial (mean and sample sd over trials);
// Delta = A_ANN - A_SNN = (A_ANN - A_MF) + (A_MF - A_SNN), in percentage points.
// The network is a dense Mlp or a layer graph (net.hpp: convolutions, average
// pooling, flatten, dense); for a graph the spiking layers are its nonlinear
// layers (plus the output layer with readout = spike), q99_l is taken of
// the graph's activations at that layer (all channels and positions), and
// the spikes travel through the layers between them (net_synapse.hpp).
// Samples run in parallel (OpenMP); sample s of trial t draws only from
// stream_seed(seed, t, s), and totals are summed in sample order after the
// parallel loop, so every number is identical for any thread count.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ctmc/sim/formats/dataset.hpp"
#include "ctmc/sim/nets/mlp.hpp"
#include "ctmc/sim/nets/net.hpp"
#include "ctmc/sim/engines/spiking.hpp"
#include "ctmc/solvers/intervals.hpp"
#include "ctmc/solvers/model.hpp"

namespace ctmc::sim {

enum class ScaleMode { Q99, Const };
ScaleMode parse_scale_mode(const std::string& text, const std::string& option = "scale");
std::string scale_name(ScaleMode s);  // the text parse_scale_mode reads

// What q99 of a spiking output layer (readout spike) is taken of: the logits
// z^L (default), or its neurons' target activation phi(z^L), phi named by the
// output neuron model's meta.target (what `fit` records). A net whose output
// neurons are fitted to, say, a sigmoid otherwise has alpha_L = r / q99(z^L)
// and runs them several times too slow.
enum class OutputScale { Logits, Activation };
OutputScale parse_output_scale(const std::string& text, const std::string& option = "output_scale");
std::string output_scale_name(OutputScale s);  // the text parse_output_scale reads

// p-th percentile (0 <= p <= 100) with linear interpolation between order
// statistics: index p/100 * (n-1). InputError for an empty sample.
double percentile(std::vector<float> values, double p);

// Activations of every spiking layer on `data` (hidden a^l, then the logits
// when readout = spike), one matrix (units x samples) per layer.
std::vector<Eigen::MatrixXf> layer_activations(const Mlp& net, const Dataset& data, Readout readout);
std::vector<Eigen::MatrixXf> layer_activations(const Net& net, const Dataset& data, Readout readout);
// The p-th percentile (as percentile()) of each spiking layer's activations
// on `data`, streamed: a layer graph's activations over a train split are
// never held at once.
std::vector<double> layer_percentiles(const Net& net, const Dataset& data, Readout readout, double p);

struct NeuronModel {
  solvers::Model model;
  std::string source;  // file name, for messages and output
};

// Work bounds of simulate_network: (trial, sample) runs, and neuron-steps
// (trials x samples x steps x spiking neurons); beyond them a run is a typo
// (--trials 1e8) that would run for days or exhaust memory, refused up front.
constexpr double kMaxSampleRuns = 1e8;
constexpr double kMaxNeuronSteps = 1e12;
// And CTMC transitions, estimated before the spiking runs as trials x T x
// the sum over test images and spiking neurons of the stationary transition
// rate at the mean-field input (NeuronKernel::jump_rate): the exact sampler
// draws every transition (uniformization: at the largest exit rate, virtual
// jumps included, which the estimate then uses), so --rate 1e300 (rates
// ~1e300 per unit time) would never finish though its neuron-steps are few.
// The Euler sampler makes one move per step at most and is not bounded.
constexpr double kMaxTransitions = 1e12;
// The engine's speed for estimating a run's time before it starts (`check
// --max-seconds`): neuron-steps per CPU second of one core, measured with
// `check --threads 1` on the claims of tests/fixtures/torch_vgg11/
// peer_claims.json (a 14-layer VGG-11 of two-state ReLU neurons, the
// default kernel, scales and mean-field pass included) on a 2-core x86-64
// VM: 4.2e8 with the end-state sampler, 2.3e8 with the exact one; the
// slower, rounded down.
constexpr double kNeuronStepsPerCoreSecond = 2e8;
// neuron_steps at that speed on `threads` threads (0: OpenMP's count), at
// most one per core.
double estimated_network_seconds(double neuron_steps, int threads);

struct NetworkSimOptions {
  SpikingConfig snn;
  double rate = 3;  // r
  ScaleMode scale = ScaleMode::Q99;
  int trials = 1;
  // Trials first_trial .. first_trial + trials - 1: trial t of sample s draws
  // from stream_seed(seed, t, s), so a sweep can run one trial of a cell at
  // a time and get the numbers of the run with all of them.
  int first_trial = 0;
  std::uint64_t seed = 0;
  int threads = 0;  // 0: OpenMP's default
  int limit = 0;    // first `limit` test images (0: all)
  TestSubset subset;  // applied before `limit`
  OutputScale output_scale = OutputScale::Logits;
  // alpha_l of each spiking layer given by hand, overriding the scale rule
  // where not NaN (other codes set layer rates so); empty: none given.
  std::vector<double> layer_alpha;
  // q99_l of every spiking layer when the caller already has them
  // (layer_q99 on the same train split, neurons, readout and output scale;
  // a sweep computes them once per net); empty: computed here.
  std::vector<double> q99;
  // Also record, per spiking layer, the quantiles at kLayerQuantileLevels of
  // the decoded activations (each window) and of the mean-field activations
  // over every (neuron, run) pair (the paper's Figure 5C); off by default:
  // it keeps every decoded value of every run until the end.
  bool layer_quantiles = false;
};

// q99_l of every spiking layer on the train split (see the top of this file;
// `neurons` name the output layer's target for OutputScale::Activation). A
// layer graph's train split goes through it in batches, and only the top 1%
// of each layer's values is kept: the same number, in bounded memory.
std::vector<double> layer_q99(const Mlp& net, const Dataset& train, const std::vector<NeuronModel>& neurons,
                              Readout readout, OutputScale output_scale);
std::vector<double> layer_q99(const Net& net, const Dataset& train, const std::vector<NeuronModel>& neurons,
                              Readout readout, OutputScale output_scale);

// The readings of one window T (SpikingConfig::checkpoints) over every
// (trial, sample) run.
struct WindowResult {
  double T = 0;
  std::vector<double> acc_snn;  // per trial
  double acc_snn_mean = 0, acc_snn_sd = 0;
  double synops_mean = 0, synops_sd = 0;  // per sample, over all samples and trials
  double spikes_per_neuron = 0;           // per sample, mean over samples and trials
  double transitions_per_sample = 0, transitions_sd = 0;
  double tie_fraction = 0;
  // The SNN scored against the ANN and against the mean field on the same
  // images, pooled over the trials (n = samples x trials): n10 counts the
  // (trial, image) pairs the other classifies correctly and the SNN does not,
  // n01 the reverse, so difference() is A_ANN - A_SNN (A_MF - A_SNN) as a
  // fraction; what the paired intervals of the claims ledgers are taken of
  // (solvers/intervals.hpp).
  solvers::PairedCounts ann_vs_snn, mf_vs_snn;  // runs whose spike readout was tied (SampleRun::tie)
  // Per spiking layer: spikes per neuron per sample, and the decoded rates'
  // relative RMSE against the mean field, sqrt(sum (a_hat - a_MF)^2 /
  // sum a_MF^2) over the layer's neurons, samples and trials (NaN where
  // a_MF is 0 throughout).
  std::vector<double> layer_spikes_per_neuron, layer_rate_rel_rmse;
  // The distribution of N_i(T) over every (spiking neuron, run) pair of the
  // window, pooled over the spiking layers (the paper's per-neuron spike-count
  // quantiles, Figure 3B): the quantiles at kCountQuantileLevels (percentile()'s
  // interpolation) and the share of pairs with no spike.
  std::vector<double> count_quantiles;
  double silent_fraction = 0;
  // NetworkSimOptions::layer_quantiles: per spiking layer, the quantiles at
  // kLayerQuantileLevels of the decoded activations a_hat (SpikingNetwork::
  // decode: N / (alpha T) in activation units) over the layer's neurons and
  // every (trial, sample) run; empty otherwise.
  std::vector<std::vector<double>> layer_decoded_quantiles;
  // NetworkSimOptions::layer_quantiles: per spiking layer, the decoded
  // activations those quantiles are of, run-major (runs trial-major, as
  // NetworkSimResult::predictions; a run's block in the layer's neuron
  // order): what a bootstrap over the test images resamples
  // (sim/studies/grouped_quantiles.hpp). Empty otherwise.
  std::vector<std::vector<float>> layer_decoded;
};
// The levels of WindowResult::count_quantiles: median, q90, q99 and the maximum.
inline constexpr double kCountQuantileLevels[] = {50, 90, 99, 100};
// The levels of the per-layer activation quantiles (Figure 5C): q50, q90, q99.
inline constexpr double kLayerQuantileLevels[] = {50, 90, 99};

struct NetworkSimResult {
  int samples = 0;
  std::vector<double> q99, alpha, alpha_fit;  // per spiking layer
  // Per spiking layer: the neuron model's meta.domain (fit_domain_of; NaN, NaN
  // when it has none) and the fraction of the mean-field inputs H^l (all
  // units, all test samples) outside it, where the model's flux is
  // extrapolated rather than fitted (0 without a domain).
  std::vector<std::pair<double, double>> fit_domain;
  std::vector<double> outside_fit_domain;
  // NetworkSimOptions::layer_quantiles: per spiking layer, the quantiles at
  // kLayerQuantileLevels of the mean-field activations over the layer's
  // neurons and the test samples (needs a checkpoint; empty otherwise).
  std::vector<std::vector<double>> layer_mf_quantiles;
  double acc_ann = 0, acc_mf = 0;             // in [0, 1]
  // The ANN against the mean field on the test images: n10 the images the
  // ANN classifies correctly and the mean field does not, n01 the reverse.
  solvers::PairedCounts ann_vs_mf;
  std::vector<double> acc_snn;                // per trial
  double acc_snn_mean = 0, acc_snn_sd = 0;
  double synops_mean = 0, synops_sd = 0;  // per sample, over all samples and trials
  double spikes_per_neuron = 0;           // per sample, mean over samples and trials
  double transitions_per_sample = 0;
  std::uint64_t euler_renormalized = 0;
  std::size_t spiking_neurons = 0;
  std::int64_t steps = 0;
  // The spiking kernel the trials ran on (SpikingNetwork::kernel).
  Kernel kernel = Kernel::Reference;
  // One per SpikingConfig::checkpoints entry, in order.
  std::vector<WindowResult> windows;
  // Per (trial, sample), trial-major: for reproducibility checks.
  std::vector<int> predictions;
  std::vector<double> synops;
};

// `neurons`: one model per spiking layer, or a single model for all of them.
NetworkSimResult simulate_network(const Mlp& net, const Dataset& train, const Dataset& test,
                                  const std::vector<NeuronModel>& neurons, const NetworkSimOptions& opt);
// A layer graph (maxpool2d refused).
NetworkSimResult simulate_network(const Net& net, const Dataset& train, const Dataset& test,
                                  const std::vector<NeuronModel>& neurons, const NetworkSimOptions& opt);

}  // namespace ctmc::sim
