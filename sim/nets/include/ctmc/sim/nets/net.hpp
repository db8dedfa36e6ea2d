// Layer graphs of source ANNs beyond the MLP (DESIGN.md sections 7-8): the
// layers a PyTorch CNN is made of, applied in sequence to one sample at a
// time in PyTorch's NCHW layout.
//
// A sample is a column of C*H*W floats in C-H-W order (all of channel 0 row by
// row, then channel 1, ...), the order of Dataset columns and of PyTorch's
// contiguous tensors, so that flatten is the identity on the data and only
// changes the shape. Every layer is an operation followed by an elementwise
// activation (activations/ names, "linear" for none):
//
//   conv2d      z[o,y,x] = b[o] + sum_{i,u,v} W[o,i,u,v] a[i, s_h y + u - p_h, s_w x + v - p_w]
//               (W is [out, in, kh, kw] as torch.nn.Conv2d; inputs outside
//               the image are the zero padding); output size
//               floor((H + 2 p_h - kh) / s_h) + 1, likewise for W.
//   avgpool2d   the mean over each window; with count_include_pad the padding
//               zeros count in the divisor (torch's default), without it only
//               the pixels inside the image do (ONNX's default).
//   maxpool2d   the maximum over each window's pixels inside the image.
//   flatten     C x H x W -> C*H*W (torch.flatten(x, 1)).
//   dense       z = W a + b, W [out, in] as torch.nn.Linear (mlp.hpp).
//   activation  the identity operation: an activation module that could not
//               be merged into the layer before it.
//
// BatchNorm (eval mode) y = gamma (z - mean) / sqrt(var + eps) + beta after a
// convolution is folded into it when the net is built (fold_batchnorm): the
// convolution's weights become W gamma / sqrt(var + eps) and its bias
// (b - mean) gamma / sqrt(var + eps) + beta, computed in double, stored as
// float.
//
// For the spiking engines: a spiking layer is a layer with a nonlinear
// activation; the layers between two of them (pooling, flatten, the
// identity, and the conv2d or dense layer that ends the stretch) are one
// linear map carrying the spikes (net_synapse.hpp: average pooling of spike
// traces is exact, maximum pooling is not, so the spiking engines refuse
// maxpool2d). to_mlp gives the Mlp of a dense-only graph, which the dense
// engines (IF baseline, MLP training, sweeps) take; train_net.hpp trains graphs.
#pragma once
#include <Eigen/Core>
#include <functional>
#include <string>
#include <vector>

#include "ctmc/sim/formats/dataset.hpp"
#include "ctmc/sim/nets/mlp.hpp"

namespace ctmc::sim {

// C x H x W; a flat vector of n values is {n, 1, 1} with flat = true.
struct Shape3 {
  int c = 0, h = 1, w = 1;
  bool flat = false;
  long long size() const { return static_cast<long long>(c) * h * w; }
  std::string text() const;  // "[C, H, W]" or "[N]" for a flat shape
};

enum class LayerKind { Dense, Conv2d, AvgPool2d, MaxPool2d, Flatten, Activation };
const char* layer_kind_name(LayerKind k);  // "dense", "conv2d", ... as the manifest spells them

struct Window2d {
  int kh = 1, kw = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
};

struct Conv2d {
  int in_channels = 0, out_channels = 0;
  Window2d win;
  std::vector<float> W;  // [out, in, kh, kw] row-major (PyTorch's layout)
  std::vector<float> b;  // out (zeros when the layer has no bias)
};

struct NetLayer {
  LayerKind kind = LayerKind::Dense;
  std::string name;                   // for messages: the manifest's "name" (an imported ONNX node's name), or ""
  int source_index = -1;              // for messages: its index in the manifest's "layers" (-1: none)
  std::string activation = "linear";  // applied after the operation
  DenseLayer dense;                   // kind == Dense (dense.activation unused)
  Conv2d conv;                        // kind == Conv2d
  Window2d pool;                      // AvgPool2d, MaxPool2d
  bool count_include_pad = true;      // AvgPool2d
  Shape3 in, out;                     // set by Net::infer_shapes
};

// BatchNorm2d's eval-mode parameters, one entry per channel.
struct BatchNorm2d {
  std::vector<double> gamma, beta, mean, var;
  double eps = 1e-5;
};

// Folds bn into conv (above). Returns the fold's relative error on probe
// inputs: the folded float convolution against conv then bn evaluated in
// double with the original parameters, max over outputs of |difference|
// divided by the largest |output| of the same channel, over 256 output
// positions per channel (spread over the image; where it has fewer, every
// position of as many probes as it takes). The probes are fixed
// pseudo-random inputs in [-1, 1] of conv's input shape `in`.
double fold_batchnorm(Conv2d& conv, const BatchNorm2d& bn, const Shape3& in);

// Largest relative BatchNorm folding error accepted: beyond it the folded
// float network would not reproduce the PyTorch network's outputs.
inline constexpr double kMaxBatchnormFoldError = 1e-5;

// The most values one sample may hold at any layer (2^28 floats, 1 GiB): a
// larger shape is a wrong manifest, not a network this tool evaluates.
inline constexpr long long kMaxSampleValues = 1LL << 28;

struct Net {
  Shape3 input;
  std::vector<NetLayer> layers;
  int batchnorm_folded = 0;          // BatchNorm layers folded at load
  double batchnorm_fold_error = 0;   // their largest fold_batchnorm error

  int input_size() const { return static_cast<int>(input.size()); }
  int output_size() const { return layers.empty() ? 0 : static_cast<int>(layers.back().out.size()); }

  // Sets every layer's in/out shapes from `input` and checks them. Throws
  // ctmc::InputError("<what>: layer N (<kind> <name>) ...") for: channels that
  // do not match, a kernel larger than its padded input, padding of half the
  // kernel or more (torch refuses it), a dense layer whose in differs from
  // the size it is given (after a flatten: "the flatten gives ..."), a dense
  // layer on an image without a flatten, a non-finite weight, an unknown
  // activation, a last layer that is not linear (its z are the logits).
  void infer_shapes(const std::string& what);

  // Logits (out x batch) for a batch x (input_size x batch, one C-H-W sample
  // per column). clip_k > 0 clamps every nonlinear activation before the
  // output to [0, K] after phi (clip-on-forward, as Mlp::forward).
  Eigen::MatrixXf forward(const Eigen::MatrixXf& x, float clip_k = 0) const;
  std::vector<int> predict(const Eigen::MatrixXf& x, float clip_k = 0) const;  // argmax, ties: lowest index
  // The most bytes forward() holds at once for a batch of `batch` samples on
  // `threads` threads: a layer's input and output (4 bytes a value) and, for
  // a convolution, each thread's im2col patches (its output pixels x C kh kw
  // values). `layer`, when given, is set to the index of that layer.
  double forward_bytes(std::int64_t batch, int threads, std::size_t* layer = nullptr) const;
  // The layer whose output first holds a value that is not finite (inf or
  // NaN) for the one sample x, as "layer N (<kind> <name>)"; empty when
  // every layer's values are finite.
  std::string first_non_finite_layer(const Eigen::VectorXf& x, float clip_k = 0) const;
  // The forward pass with activate(s, z) in place of the s-th nonlinear
  // activation (s = 0, 1, ... over the layers whose activation is not
  // "linear"), e.g. the mean field's stationary rates; returns the logits.
  Eigen::MatrixXf forward_with(const Eigen::MatrixXf& x,
                               const std::function<void(std::size_t, Eigen::MatrixXf&)>& activate) const;
  // The number of layers with a nonlinear activation (the spiking layers).
  std::size_t nonlinear_layer_count() const;
  double accuracy(const Dataset& d, float clip_k = 0) const;

  // True when only dense layers, flattens and activations
  // make it up; to_mlp then gives the same network as an Mlp (activations
  // merged into the dense layer before them). Throws InputError naming
  // `what` and the first other layer when there is none, saying where such
  // networks run (the ANN, the mean field and simulate_network).
  bool is_dense() const;
  Mlp to_mlp(const std::string& what) const;
};

// "layer N (layers[i], conv2d 'name')": how messages name layer l of a net
// (numbered as the manifest lists them).
std::string layer_label(const Net& net, std::size_t l);

// One layer's operation alone (no activation) on a batch, for tests and
// engines: in.size() x batch -> out.size() x batch.
Eigen::MatrixXf apply_layer_op(const NetLayer& layer, const Eigen::MatrixXf& x);

}  // namespace ctmc::sim
