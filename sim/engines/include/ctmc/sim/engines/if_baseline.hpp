// Integrate-and-fire conversion baseline for the same ANNs (paper Appendix
// "Baseline"; data-based normalisation of Diehl et al. 2015 and Rueckauer et
// al. 2017, reset by subtraction).
//
// Normalisation: lambda_l = the p-th percentile (p = 99.9 or 100) of layer l's
// ANN activations on the training images (hidden a^l; the logits for a
// spiking output layer), lambda_0 = 1 (pixels lie in [0, 1]);
//   W~^l = W^l lambda_{l-1} / lambda_l,   b~^l = b^l / lambda_l,   threshold 1.
// Discrete time t = 1..T (T = --if-steps); in every step the layers update in
// order, so a spike reaches the next layer in the same step:
//   v^1 += W~^1 x + b~^1 (the pixels as a constant analog current),
//   v^l += W~^l s^{l-1}(t) + b~^l,   s^l(t) = [v^l >= 1],   v^l -= s^l(t),
// with v^l(0) = v0 (0 or 0.5 of the threshold). A neuron fires at most once per
// step, so its rate N/T approximates min(a, lambda) / lambda.
// Readout: spike (the output layer is IF too; argmax of its spike counts,
// ties by the summed output input, then the lowest index) or integrate (the
// output layer sums W~^L s^{L-1} + b~^L without threshold; argmax).
// SynOps = sum over spiking layers l < L of sum_i N^l_i fanout_i (eq. synops).
// The simulation is deterministic (no random numbers).
//
// A layer graph (net.hpp: convolutions, average pooling, flatten, dense)
// runs the same rules stage by stage (net_synapse.hpp): spiking layer s is
// the s-th nonlinear layer, its input the stage's affine map z = A a + c of
// the spikes of layer s-1 (of the image for s = 0), so
//   v^s += (lambda_{s-1} / lambda_s) A s^{s-1}(t) + c / lambda_s,
// each spike scattered through its kernel slice, and SynOps count each spike
// times its neuron's real fanout (the nonzero entries of A e_i: fewer at a
// padded border, position-dependent for a strided convolution). lambda comes
// from a streamed percentile (layer_percentiles), equal to the dense one.
// Max pooling is refused as in the spiking engine (net_synapse.hpp says why).
//
// Errors: ctmc::InputError when a hidden activation is not relu or cliprelu_K
// (IF rates approximate a rectified linear map only), when a percentile is not
// positive, or for T < 1 or v0 outside [0, 1).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ctmc/sim/formats/dataset.hpp"
#include "ctmc/sim/nets/mlp.hpp"
#include "ctmc/sim/nets/net.hpp"
#include "ctmc/sim/engines/net_synapse.hpp"
#include "ctmc/sim/engines/spiking.hpp"

namespace ctmc::sim {

// Neuron-steps (test images x --if-steps x spiking neurons) beyond which an
// IF run is a typo, refused up front.
constexpr double kMaxIfNeuronSteps = 1e10;

struct IfOptions {
  double percentile = 99.9;  // 99.9 ("p99.9") or 100 ("p100")
  double v0 = 0;             // initial membrane, fraction of the threshold
  int steps = 32;            // T, in time steps
  Readout readout = Readout::Spike;
  int threads = 0;
  int limit = 0;  // first `limit` test images (0: all)
  TestSubset subset;  // applied before `limit`
};

// "p99.9" -> 99.9, "p100" -> 100 (any "pX" with 0 < X <= 100).
double parse_if_norm(const std::string& text, const std::string& option = "if_norm");

struct IfSampleRun {
  int prediction = -1;
  std::vector<std::vector<std::uint32_t>> counts;  // per spiking layer
  double synops = 0;
  std::uint64_t spikes = 0;
};

class IfNetwork {
 public:
  // lambda: one normalisation scale per spiking layer.
  IfNetwork(const Mlp& net, std::vector<double> lambda, const IfOptions& opt);
  IfNetwork(const Net& net, std::vector<double> lambda, const IfOptions& opt);
  IfSampleRun run(const float* x) const;
  // The run read out after each of `checkpoints` steps (increasing, at least
  // 1; opt.steps is not read): one per checkpoint, each the same as run(x)
  // with that many steps, since steps 1..t do not depend on the window.
  std::vector<IfSampleRun> run(const float* x, const std::vector<int>& checkpoints) const;
  std::size_t spiking_neurons() const { return spiking_neurons_; }
  const std::vector<double>& lambda() const { return lambda_; }

 private:
  void check_options() const;
  std::vector<IfSampleRun> run_graph(const float* x, const std::vector<int>& checkpoints) const;
  void read_out(int t, const std::vector<int>& checkpoints, const IfSampleRun& so_far, const Eigen::VectorXd& out_sum,
                std::vector<IfSampleRun>& runs) const;
  // The prediction and SynOps of a finished run (counts filled in).
  void finish(IfSampleRun& out, const Eigen::VectorXd& out_sum) const;

  const Mlp* net_ = nullptr;
  std::vector<double> lambda_;
  IfOptions opt_;
  std::size_t spiking_neurons_ = 0;
  std::vector<Eigen::MatrixXd> w_;  // W~^l
  std::vector<Eigen::VectorXd> b_;  // b~^l (a graph's: c / lambda_l)
  std::vector<std::vector<std::uint32_t>> fanout_;
  // A layer graph's stages (unscaled weights) and their spike weights
  // lambda_{l-1} / lambda_l (lambda_{-1} = 1; 1 for a non-spiking output).
  std::vector<LinearChain> chains_;
  std::vector<double> spike_weight_;
};

struct IfResult {
  int samples = 0;
  std::vector<double> lambda;
  double acc_ann = 0, acc_if = 0;
  double synops_mean = 0, synops_sd = 0, spikes_per_neuron = 0;
  std::vector<int> predictions;
};

IfResult simulate_if(const Mlp& net, const Dataset& train, const Dataset& test, const IfOptions& opt);
IfResult simulate_if(const Net& net, const Dataset& train, const Dataset& test, const IfOptions& opt);

// lambda_l of the normalisation above: the p-th percentile of each spiking
// layer's ANN activations on `train` (opt.percentile, opt.readout). It depends
// on neither T nor v0, so a grid over those computes it once per percentile.
std::vector<double> if_scales(const Mlp& net, const Dataset& train, const IfOptions& opt);
std::vector<double> if_scales(const Net& net, const Dataset& train, const IfOptions& opt);

// simulate_if with lambda given (if_scales of the train split, the same
// options' percentile and readout), read out after each of `steps`
// (increasing; opt.steps is not read): one result per entry, the same as
// simulate_if's with opt.steps that entry. A grid over T runs once.
std::vector<IfResult> simulate_if_scaled(const Mlp& net, std::vector<double> lambda, const Dataset& test,
                                         const IfOptions& opt, const std::vector<int>& steps);
std::vector<IfResult> simulate_if_scaled(const Net& net, std::vector<double> lambda, const Dataset& test,
                                         const IfOptions& opt, const std::vector<int>& steps);

}  // namespace ctmc::sim
