// Shared by the layer-graph engine tests (net_spiking_test.cpp,
// net_if_test.cpp): small nets built by hand, with weights that are small
// multiples of a power of two (dyadic), so that sums of them are exact in
// double whatever their order.
#pragma once
#include <random>
#include <vector>

#include "ctmc/sim/nets/mlp.hpp"
#include "ctmc/sim/nets/net.hpp"

namespace ctmc::sim::testing {

inline NetLayer dense_layer(const DenseLayer& d) {
  NetLayer L;
  L.kind = LayerKind::Dense;
  L.dense = d;
  L.activation = d.activation;
  return L;
}

inline NetLayer conv_layer(int in_c, int out_c, Window2d win, std::vector<float> W, std::vector<float> b, const char* act) {
  NetLayer L;
  L.kind = LayerKind::Conv2d;
  L.conv.in_channels = in_c;
  L.conv.out_channels = out_c;
  L.conv.win = win;
  L.conv.W = std::move(W);
  L.conv.b = std::move(b);
  L.activation = act;
  return L;
}

inline NetLayer plain(LayerKind k, Window2d pool = {}) {
  NetLayer L;
  L.kind = k;
  L.pool = pool;
  return L;
}

inline std::vector<float> dyadic(std::size_t n, std::mt19937& g, float unit) {
  std::uniform_int_distribution<int> w(-8, 8);
  std::vector<float> v(n);
  for (float& x : v) x = w(g) * unit;
  return v;
}

// The 8-6-5-3 MLP written as a layer graph on a 2 x 2 x 2 image: layer 1 a
// convolution whose kernel covers the whole image (no padding: one output
// position, the dense layer), layer 2 a 1 x 1 convolution, then flatten and
// the dense output layer.
inline Net as_conv_net(const Mlp& m) {
  Net net;
  net.input = Shape3{2, 2, 2, false};
  const auto& d1 = m.layers[0];
  std::vector<float> W1(d1.W.size()), b1(d1.b.data(), d1.b.data() + d1.b.size());
  // W[o, c, u, v] = W1(o, (c * 2 + u) * 2 + v): C-H-W order is the column order.
  for (int o = 0; o < d1.W.rows(); ++o)
    for (int k = 0; k < 8; ++k) W1[static_cast<std::size_t>(o) * 8 + k] = d1.W(o, k);
  net.layers.push_back(conv_layer(2, 6, Window2d{2, 2, 1, 1, 0, 0}, W1, b1, "relu"));
  const auto& d2 = m.layers[1];
  std::vector<float> W2(d2.W.size()), b2(d2.b.data(), d2.b.data() + d2.b.size());
  for (int o = 0; o < d2.W.rows(); ++o)
    for (int i = 0; i < d2.W.cols(); ++i) W2[static_cast<std::size_t>(o) * d2.W.cols() + i] = d2.W(o, i);
  net.layers.push_back(conv_layer(6, 5, Window2d{}, W2, b2, "relu"));
  net.layers.push_back(plain(LayerKind::Flatten));
  net.layers.push_back(dense_layer(m.layers[2]));
  net.infer_shapes("conv net");
  return net;
}

inline Net as_dense_net(const Mlp& m) {
  Net net;
  net.input = Shape3{m.input_size(), 1, 1, true};
  for (const auto& d : m.layers) net.layers.push_back(dense_layer(d));
  net.infer_shapes("dense net");
  return net;
}

// Flatten, then a linear layer of `in` inputs to 2 outputs, every weight w.
inline void add_readout(Net& net, int in, float w) {
  net.layers.push_back(plain(LayerKind::Flatten));
  DenseLayer d;
  d.W = Eigen::MatrixXf::Constant(2, in, w);
  d.b = Eigen::VectorXf::Zero(2);
  d.activation = "linear";
  net.layers.push_back(dense_layer(d));
}

// A small conv net: 1 x 4 x 4 -> conv 3x3 pad 1 (2 channels, relu) ->
// conv 3x3 stride 2 pad 1 (3 channels, relu) -> 3 x 2 x 2 -> flatten ->
// dense 12 -> 2. W2[0, 0, 1, 1] = 0: a zero weight is no synapse.
inline Net small_conv_net(unsigned seed) {
  std::mt19937 g(seed);
  Net net;
  net.input = Shape3{1, 4, 4, false};
  net.layers.push_back(conv_layer(1, 2, Window2d{3, 3, 1, 1, 1, 1}, dyadic(18, g, 0.125f), dyadic(2, g, 0.0625f), "relu"));
  std::vector<float> W2 = dyadic(54, g, 0.125f);
  for (float& w : W2)
    if (w == 0) w = 0.5f;
  W2[4] = 0;  // [0, 0, 1, 1]
  net.layers.push_back(conv_layer(2, 3, Window2d{3, 3, 2, 2, 1, 1}, W2, dyadic(3, g, 0.0625f), "relu"));
  add_readout(net, 12, 0.25f);
  net.infer_shapes("small conv net");
  return net;
}

}  // namespace ctmc::sim::testing
