// The synapses of a spiking layer graph (DESIGN.md section 7; paper section
// 3.3, eqs. trace and synops): what carries the spikes of one spiking layer
// to the input of the next.
//
// A layer graph (net.hpp) is cut after every layer with a nonlinear
// activation: stage s = 0, 1, ... is the stretch of layers from the one after
// the (s-1)-th nonlinear layer up to the s-th (the last stage: up to the
// output layer). Stage s's operations compose to one affine map
// z = A a + c of its input a (the image for stage 0, the rates of spiking
// layer s-1 otherwise), and stage s's neurons are spiking layer s+1 in the
// paper's numbering: H^{s+1}(t) = c + A x(t) / alpha_s with x the spike
// traces (trace.hpp). c is the stage applied to 0 (its last weighted layer's
// bias, pushed through what follows); a spike of neuron i adds the column
// A e_i, scaled, to the current. So a stage [avgpool2d, conv2d] scatters a
// spike to the pooling windows that hold the pixel and each of those through
// the kernel slice W[:, c_i, :, :]; [flatten, dense] adds a column of W.
// Spikes are sparse (about one neuron in several hundred per step), so this
// scatter is done spike by spike; a stage of one convolution also has a
// dense per-step gather with the same sums (add_step_dense), which the
// spiking engine takes for a dense enough step (SpikingConfig::conv_path).
//
// SynOps (eq. synops) count each spike times its neuron's fanout: the number
// of entries of the column A e_i that are not zero (a pixel at the border of
// a padded convolution reaches fewer outputs than an interior one, and a
// strided convolution's fanout depends on the position).
//
// maxpool2d has no such linear map (the maximum of traces is not the trace
// of the maximum), so a stage that holds one is refused (InputError naming
// the layer and what to use instead).
#pragma once
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ctmc/sim/nets/net.hpp"

namespace ctmc::sim {

// Layers [first, last] of a Net (indices into Net::layers).
struct NetStage {
  std::size_t first = 0, last = 0;
};

// The stages of a net (above): one per nonlinear layer, then the output
// stage. InputError "<what>: layer N (maxpool2d ...): ..." for a max pooling.
std::vector<NetStage> spiking_stages(const Net& net, const std::string& what);

// Per-thread work space of LinearChain::add_spike (the spike's image after
// each pooling or identity of the stage).
struct ChainScratch {
  std::vector<std::pair<std::uint32_t, double>> a, b;
  std::vector<double> dense;  // the step's input values for add_step_dense
  std::vector<float> dense_f;  // the same for the float overload
};

// One stage as the synapses of a spiking layer.
class LinearChain {
 public:
  // The stage's last weighted layer's (conv2d or dense) weights divided by
  // `scale` (alpha of the spiking layer before it, 1 for stage 0), in float
  // as the dense engine's W^l / alpha_{l-1}; a stage without a weighted
  // layer divides the spike instead.
  LinearChain(const Net& net, NetStage stage, double scale);

  int in_size() const { return in_size_; }
  int out_size() const { return out_size_; }
  // c: the stage applied to 0 (the float ANN's operations), as doubles.
  const std::vector<double>& bias() const { return bias_; }

  // cur += c * (A e_i) / scale, target by target. For a dense stage this is
  // cur[r] += c * W~(r, i) for r = 0, 1, ... (the dense engine's bits).
  void add_spike(std::uint32_t i, double c, double* cur, ChainScratch& scratch) const;
  // The nonzero entries of A e_i, for every input i (SynOps).
  std::vector<std::uint32_t> fanouts() const;

  // The layout in which the spiking engine keeps the current this chain
  // feeds. A stage that ends in a convolution stores it channel-last
  // (H-W-C: target (o, y, x) at (y W + x) C + o), so that a spike's kernel
  // slice W[:, c, u, v] lands on C contiguous targets, one vectorisable run
  // per kernel offset; otherwise in the C-H-W order of the targets. A layout
  // only moves where a target's current lives: each target receives the same
  // additions in the same order as through add_spike.
  bool channel_last() const { return channel_last_; }
  const Shape3& out_shape() const { return out_shape_; }
  // Position of target t (C-H-W index) in the stored current.
  std::uint32_t stored_index(std::uint32_t t) const;
  // add_spike into a current kept in the stored layout.
  void add_spike_stored(std::uint32_t i, double c, double* cur, ChainScratch& scratch) const;

  // The dense per-step alternative to add_spike_stored, for a stage of one
  // convolution (dense_capable): src holds each input's value c of the step
  // (0 for an input that did not spike), and each target gathers its inputs
  // in ascending input index, skipping the zeros. So when the step's spikes
  // come in ascending index, every target receives the same additions in
  // the same order as from add_spike_stored spike by spike (bit for bit).
  bool dense_capable() const { return dense_capable_; }
  void add_step_dense(const double* src, double* cur) const;
  // The fast kernel's float32 synapses: the same targets, in the same order,
  // as the two above, each product and sum rounded to float. A convolution
  // takes the spike's value (after any pooling before it) rounded to float
  // times its float weights; any other last operation adds its double
  // product rounded to float. So the float event-driven and dense paths
  // agree bit for bit as the double ones do.
  void add_spike_stored(std::uint32_t i, double c, float* cur, ChainScratch& scratch) const;
  void add_step_dense(const float* src, float* cur) const;

  // One layer of the stage, its weights already divided by the scale.
  struct Op {
    LayerKind kind = LayerKind::Activation;
    Shape3 in, out;
    Window2d win;
    bool count_include_pad = true;
    Eigen::MatrixXf dense;       // Dense: out x in, column-major
    std::vector<float> conv_t;   // Conv2d: W as [in][kh][kw][out]
    // Conv2d and pooling: per input row y', the (kernel row u, output row y)
    // pairs with s y + u - p = y'; likewise per input column.
    std::vector<std::vector<std::pair<int, int>>> rows, cols;
  };

 private:
  template <class Add>
  void visit(std::uint32_t i, double c, ChainScratch& scratch, Add&& add) const;
  // The value v0 at input i through every operation but the last (ops_ not
  // empty), then last(op, j, v) for each (index, value) of that image.
  template <class Last>
  void through_ops(std::uint32_t i, double v0, ChainScratch& scratch, Last&& last) const;

  std::vector<Op> ops_;
  std::vector<double> bias_;
  double spike_scale_ = 1;  // 1 / scale when no layer of the stage has weights
  int in_size_ = 0, out_size_ = 0;
  Shape3 out_shape_;
  bool channel_last_ = false, dense_capable_ = false;
};

}  // namespace ctmc::sim
