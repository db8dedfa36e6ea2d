// Spiking network of CTMC neurons converted from an ANN (DESIGN.md section
// 7; paper section 3.3, eqs. trace and synops): a dense Mlp (mlp.hpp) or a
// layer graph with convolutions and pooling (net.hpp).
//
// Layer l = 1..L of the ANN computes z^l = W^l a^{l-1} + b^l. In the SNN,
//   layer 1:   H^1 = W^1 x + b^1, the pixels as a constant analog current;
//   layer l>1: H^l_j(t) = b^l_j + sum_i (W^l_ji / alpha_{l-1}) x_i(t), x_i the
//              integral-preserving exponential trace of neuron i's spikes
//              (trace.hpp, which also states the update order);
// and neuron j of layer l runs the fitted chain with every rate times
// alpha_l / alpha_fit (its stationary rate approximates alpha_l phi(H)). H is
// held for each step of length dt and the chain moves by the chosen sampler
// (sampler.hpp); a network starts with every neuron in its model's first
// state and every trace at 0. For a layer graph, "layer l" is the l-th stage
// of net_synapse.hpp (the layers up to and including the l-th nonlinear one,
// then the output stage) and W^l, b^l its composed affine map: H^1 is the
// stage applied to the image, and a spike scatters the stage's column
// (a convolution's kernel slice, through any average pooling before it)
// into the next layer's current, event by event (LinearChain; a dense
// enough step of a convolution is gathered per output pixel instead, with
// the same sums: SpikingConfig::conv_path). A layer
// graph of dense layers gives the Mlp's spikes bit for bit (same stream,
// same operations in the same order). maxpool2d is refused.
//
// Readout: `spike` makes layer L spiking too (prediction = argmax of its spike
// counts, ties broken by the time-averaged H^L, then the lowest index);
// `integrate` leaves layer L non-spiking (prediction = argmax of the
// time-averaged H^L). Decoding: a_hat^l_i = N^l_i(T) / (T alpha_l).
// SynOps(x) = sum over spiking layers l < L of sum_i N^l_i(T) fanout_i, with
// fanout_i the number of nonzero weights in column i of W^{l+1} (for a
// layer graph: the targets neuron i really reaches, LinearChain::fanouts).
//
// Errors: ctmc::InputError for a T that is not a positive multiple of dt, a
// non-positive tau or alpha, checkpoints that are not increasing multiples
// of dt within (0, T], layer/kernel counts that do not match the network, a
// maxpool2d in a layer graph, the vectorised or fast kernel asked of a
// sampler they do not run, or the fast kernel asked of a chain beyond four
// states or two exits per state.
#pragma once
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ctmc/sim/nets/mlp.hpp"
#include "ctmc/sim/nets/net.hpp"
#include "ctmc/sim/engines/net_synapse.hpp"
#include "ctmc/sim/neurons/neuron_kernel.hpp"
#include "ctmc/sim/neurons/sampler.hpp"
#include "ctmc/sim/neurons/trace.hpp"

namespace ctmc::sim {

enum class Readout { Spike, Integrate };
Readout parse_readout(const std::string& text, const std::string& option = "readout");
std::string readout_name(Readout r);
// The layers that spike under a readout (every layer with `spike`, all but
// the linear output layer with `integrate`), and the neurons they hold.
std::size_t spiking_layer_count(const Mlp& net, Readout readout);
std::size_t spiking_neuron_count(const Mlp& net, Readout readout);
// The same for a layer graph (one spiking layer per nonlinear layer, plus the
// output layer with `spike`).
std::size_t spiking_layer_count(const Net& net, Readout readout);
std::size_t spiking_neuron_count(const Net& net, Readout readout);

// The random stream of one (trial, sample) pair: stream_seed(seed, trial,
// sample) of rng.hpp, so results do not depend on which thread runs a sample.
std::uint64_t sample_stream_seed(std::uint64_t seed, std::uint64_t trial, std::uint64_t sample);

// Time steps per sample beyond which T / dt is a typo (T = 1e300), refused.
constexpr double kMaxSteps = 1e9;

// The steps of a window T: T / dt when T is a positive multiple of dt
// (relative tolerance 1e-9) within kMaxSteps; InputError naming `what`
// (e.g. "T") otherwise.
std::int64_t window_steps(double T, double dt, const std::string& what);

// The spiking kernel a run asks for (--kernel). Vectorised: the exact and
// end-state samplers on structure-of-arrays layers, one Philox4x32-10 stream
// per neuron, for an Mlp and a layer graph alike (every conv_path).
// Reference: the per-neuron loop, one xoshiro256** stream per sample,
// consumed in neuron order. Fast (spiking_fast.cpp): the exact and end-state
// samplers with float32 structure-of-arrays lanes (current, H, state, exit
// rate; the hazard budget in double; eight lanes where the CPU has AVX, four
// with SSE2, the same bits either way), one Philox4x32-10 block serving four
// 32-bit draws of a neuron, and float32 synapses for an Mlp; a chain beyond
// four states or two exits per state is refused (InputError naming the
// kernel). Auto: the fast kernel for the exact and end-state samplers where
// every layer's chain fits its lanes, else the vectorised one. The three
// sample the same law from different random numbers, so a seeded run's
// figures differ between them within statistical error
// (scripts/compare-kernels.py). Uniformization and euler run on the
// reference kernel whatever is asked.
enum class Kernel { Auto, Reference, Vectorised, Fast };

struct SpikingConfig {
  double T = 50, dt = 0.005, tau = 0.02;
  SamplerKind sampler = SamplerKind::Exact;
  Readout readout = Readout::Spike;
  TraceWeight trace_weight = TraceWeight::Integral;
  // Windows T_1 < T_2 < ... <= T (each a positive multiple of dt) at which a
  // run also reads out its counts (SampleRun::at). A sample's path up to T_k
  // does not depend on where the window ends (one random stream, consumed in
  // step order), so the reading at T_k equals a separate run with T = T_k
  // and the same stream: a sweep over T costs its largest T. Empty: none.
  std::vector<double> checkpoints;
  // The kernel the exact and end-state samplers run on (Kernel);
  // uniformization and euler always run on the reference kernel.
  Kernel kernel = Kernel::Auto;
  // How a layer graph carries a step's spikes into a stage of one
  // convolution (net_synapse.hpp): Auto chooses per layer and step by the
  // step's spike density (dense from kDenseConvDensity of the stage's inputs
  // on); Event always scatters spike by spike; Dense always gathers per
  // output pixel. Every choice gives the same currents bit for bit, hence
  // the same spikes: a target receives the same additions in the same order
  // (ascending spike index). A step whose spikes do not come in ascending
  // index (the first spiking layer's event calendar orders them by jump
  // time) is scattered in its own order whatever this says.
  enum class ConvPath { Auto, Event, Dense };
  ConvPath conv_path = ConvPath::Auto;
};

// A kernel from its option text: "auto", "reference", "vectorised" or
// "fast"; InputError naming `option` for another name.
Kernel parse_kernel(const std::string& text, const std::string& option = "kernel");
// InputError naming `option` for the vectorised or fast kernel asked of a
// sampler it does not run (uniformization and euler run on the reference
// kernel).
void check_kernel(Kernel kernel, SamplerKind sampler, const std::string& option = "kernel");
// "auto", "reference", "vectorised" or "fast": the text parse_kernel reads.
const char* kernel_name(Kernel kernel);
// The kernel a run with `cfg` uses: Reference, Vectorised or Fast;
// `fast_fits`: every spiking layer's chain fits the fast kernel's lanes (at
// most 4 states and 2 exits per state), which Auto needs to choose it.
Kernel kernel_used(const SpikingConfig& cfg, bool fast_fits);
// "auto", "event" or "dense" (SpikingConfig::ConvPath).
SpikingConfig::ConvPath parse_conv_path(const std::string& text, const std::string& option = "conv_path");
// The text parse_conv_path reads.
const char* conv_path_name(SpikingConfig::ConvPath path);

// Auto's switch: a step whose spikes number at least this fraction of the
// stage's inputs goes the dense way (calibrated with bench_conv).
extern const double kDenseConvDensity;

// One spiking layer: the kernel already scaled by alpha_l / alpha_fit.
struct SpikingLayer {
  NeuronKernel kernel;
  double alpha = 1;  // alpha_l, for decoding and for W^{l+1} / alpha_l
};

struct SampleRun {
  double T = 0;  // the window [0, T] this reading covers
  int prediction = -1;
  // Spike readout: the output spike count's maximum is shared by several
  // outputs, so the time-averaged H^L decided the prediction.
  bool tie = false;
  std::vector<std::vector<std::uint32_t>> counts;  // N^l_i(T), one vector per spiking layer
  Eigen::VectorXd mean_output_input;               // time average of H^L over the window
  double synops = 0;
  std::uint64_t spikes = 0;       // all spiking layers
  std::uint64_t transitions = 0;  // CTMC jumps, all spiking layers
  std::uint64_t euler_renormalized = 0;
  std::uint64_t budget_updates = 0;  // StepCounts::budget_updates (the fast kernel; 0 for the others)
  // Per layer l (0-based, index l - 1 for l >= 1): the steps whose spikes of
  // layer l - 1 reached layer l by the dense path (SpikingConfig::conv_path).
  std::vector<std::uint32_t> dense_steps;
  // The readings at SpikingConfig::checkpoints, in order (their own `at` empty).
  std::vector<SampleRun> at;
};

class SpikingNetwork {
 public:
  // `layers` holds one entry per spiking layer: L-1 for readout = integrate,
  // L for readout = spike.
  SpikingNetwork(const Mlp& net, std::vector<SpikingLayer> layers, SpikingConfig cfg);
  // A layer graph (shapes inferred, as load_net gives it); the reference
  // kernel only.
  SpikingNetwork(const Net& net, std::vector<SpikingLayer> layers, SpikingConfig cfg);
  // The samplers point into layers_: copying would leave them dangling.
  SpikingNetwork(const SpikingNetwork&) = delete;
  SpikingNetwork& operator=(const SpikingNetwork&) = delete;

  std::int64_t steps() const { return steps_; }
  const SpikingConfig& config() const { return cfg_; }
  // The kernel run() uses (kernel_used with this network's chains).
  Kernel kernel() const { return kernel_used(cfg_, fast_fits_); }
  std::size_t spiking_layers() const { return layers_.size(); }
  std::size_t spiking_neurons() const;
  double alpha(std::size_t l) const { return layers_[l].alpha; }
  // The neurons of layer l (0-based; l = L-1 is the output layer).
  int layer_size(std::size_t l) const { return sizes_[l]; }
  // fanout_i of spiking layer l's neurons (l < L-1), for SynOps.
  const std::vector<std::uint32_t>& fanout(std::size_t l) const { return fanout_[l]; }

  // Simulates one sample (x: input_size floats) over [0, T].
  SampleRun run(const float* x, std::uint64_t stream_seed) const;

  // a_hat = N(T) / (T alpha_l) for spiking layer l, T the reading's window.
  Eigen::VectorXd decode(const SampleRun& r, std::size_t l) const;

 private:
  template <SamplerKind K>
  SampleRun run_impl(const float* x, std::uint64_t stream_seed) const;
  // The exact and end-state samplers on the vectorised kernel (spiking.cpp).
  template <SamplerKind K>
  SampleRun run_vec(const float* x, std::uint64_t stream_seed) const;
  // The same samplers on the fast kernel (spiking_fast.cpp).
  template <SamplerKind K>
  SampleRun run_fast(const float* x, std::uint64_t stream_seed) const;
  // The per-step loop the three kernels share (step_loop.hpp), over one
  // kernel's state and lane pass: ReferenceSteps and VectorisedSteps
  // (spiking.cpp), FastSteps (spiking_fast.cpp).
  template <class Steps>
  SampleRun step_loop(Steps& s) const;
  template <SamplerKind K>
  struct ReferenceSteps;
  template <SamplerKind K>
  struct VectorisedSteps;
  template <SamplerKind K>
  struct FastSteps;
  // Every layer's chain fits the fast kernel's lanes (set by configure).
  bool fast_fits_ = false;
  // The checks and samplers both constructors share, once layers_ is set.
  void configure();
  // H^1 for input x (double, zero pixels skipped).
  Eigen::VectorXd layer1_input(const float* x) const;
  // Adds the step's spikes of layer l-1 (c = weight * count) to layer l's
  // current (for a layer graph in chains_[l]'s stored layout); true when it
  // took the dense path.
  bool transmit(std::size_t l, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& fired, double weight,
                double* cur, ChainScratch& scratch) const;
  // Prediction, tie, SynOps and totals of `out` (its counts set) after
  // `steps` steps of window T, with h_sum the sum of H^L over those steps.
  void read_out(SampleRun& out, const Eigen::VectorXd& h_sum, std::int64_t steps, double T,
                const StepCounts& counts) const;

  const Mlp* net_ = nullptr;  // null for a layer graph
  // A layer graph's stages as synapses: chains_[l] feeds layer l (chains_[0]
  // the image); empty for an Mlp.
  std::vector<LinearChain> chains_;
  std::vector<int> sizes_;                  // neurons per layer, l = 0..L-1
  std::vector<std::vector<double>> bias_;   // b^l per layer (l = 0 unused)
  std::vector<SpikingLayer> layers_;
  std::vector<StepSampler> samplers_;
  SpikingConfig cfg_;
  TraceKernel trace_;
  std::int64_t steps_ = 0;
  std::vector<std::int64_t> checkpoint_steps_;
  // W^l / alpha_{l-1} for l >= 2 (index l-1), column-major so that a spike of
  // presynaptic neuron i adds one contiguous column.
  std::vector<Eigen::MatrixXf> w_scaled_;
  std::vector<std::vector<std::uint32_t>> fanout_;  // per spiking layer l < L
};

}  // namespace ctmc::sim
