// Source ANNs for conversion (DESIGN.md section 7): a stack of dense layers
// z^l = W^l a^{l-1} + b^l, a^l = phi_l(z^l), with phi_l from activations/
// (parse_activation); the last layer is linear and its z are the logits.
//
// Layer interface: a layer is an affine map (in_size -> out_size, applied to
// a batch with one sample per column) followed by an elementwise activation.
// The spiking engines and training run these dense stacks; convolutional
// networks (conv2d, pooling, flatten, BatchNorm) are layer graphs (net.hpp),
// and Net::to_mlp gives the Mlp of a graph that has only dense layers.
#pragma once
#include <Eigen/Core>
#include <string>
#include <vector>

#include "ctmc/sim/formats/dataset.hpp"

namespace ctmc::sim {

struct DenseLayer {
  Eigen::MatrixXf W;       // out x in
  Eigen::VectorXf b;       // out
  std::string activation;  // activation name (parse_activation) for hidden layers, "linear" for the output layer

  int in_size() const { return static_cast<int>(W.cols()); }
  int out_size() const { return static_cast<int>(W.rows()); }
  // z = W a + b for every column a of the batch (in x batch -> out x batch).
  Eigen::MatrixXf affine(const Eigen::MatrixXf& a) const;
  // W^T g (out x batch -> in x batch): back-propagation through the layer.
  Eigen::MatrixXf affine_transpose(const Eigen::MatrixXf& g) const;
};

// Applies the named activation elementwise in place ("linear" is the
// identity). Throws ctmc::InputError for an unknown name.
void apply_activation(const std::string& name, Eigen::MatrixXf& z);

struct Mlp {
  std::vector<DenseLayer> layers;

  int input_size() const { return layers.empty() ? 0 : layers.front().in_size(); }
  int output_size() const { return layers.empty() ? 0 : layers.back().out_size(); }

  // Logits (out x batch) for a batch x (in x batch). clip_k > 0 clamps every
  // hidden activation to [0, K] after phi (clip-on-forward evaluation).
  Eigen::MatrixXf forward(const Eigen::MatrixXf& x, float clip_k = 0) const;
  // The hidden activations a^1 .. a^{L-1} (one matrix per hidden layer,
  // out_l x batch) for the batch, e.g. for the layer scales q99_l.
  std::vector<Eigen::MatrixXf> hidden_activations(const Eigen::MatrixXf& x, float clip_k = 0) const;
  // argmax of the logits per column (ties: the lowest index).
  std::vector<int> predict(const Eigen::MatrixXf& x, float clip_k = 0) const;
  // Fraction of samples of d classified correctly, in [0, 1].
  double accuracy(const Dataset& d, float clip_k = 0) const;

  // Checks consecutive layer sizes match, b sizes match W, every weight is
  // finite, hidden activations parse and the last layer is "linear". Throws
  // ctmc::InputError("<what>: ...") otherwise.
  void validate(const std::string& what) const;
};

}  // namespace ctmc::sim
