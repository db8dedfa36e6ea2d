// Layer graphs (sim/nets/net.hpp): convolution, pooling, flatten and the BatchNorm
// fold against the direct double-precision reference of conv_reference.hpp
// and against hand-computed cases; shape errors naming the layer.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>

#include "conv_reference.hpp"
#include "ctmc/sim/nets/net.hpp"
#include "meanfield.hpp"  // sim/src (internal): the mean-field network
#include "ctmc/core/errors.hpp"

using namespace ctmc::sim;
using namespace ctmc::sim::testing;
using ctmc::InputError;

namespace {

// float32 sums of a few hundred products of values in [-1, 1] against the
// same sums in double: a few hundred float roundings, well under 1e-5.
constexpr double kFloatSumTolerance = 1e-5;

NetLayer conv_layer(int in, int out, int k, int stride, int pad, const std::vector<double>& w, const std::vector<double>& b) {
  NetLayer L;
  L.kind = LayerKind::Conv2d;
  L.conv.in_channels = in;
  L.conv.out_channels = out;
  L.conv.win = Window2d{k, k, stride, stride, pad, pad};
  L.conv.W.assign(w.begin(), w.end());
  L.conv.b.assign(b.begin(), b.end());
  if (L.conv.b.empty()) L.conv.b.assign(std::size_t(out), 0.0f);
  return L;
}

NetLayer pool_layer(bool max, int k, int stride, int pad, bool include_pad = true) {
  NetLayer L;
  L.kind = max ? LayerKind::MaxPool2d : LayerKind::AvgPool2d;
  L.pool = Window2d{k, k, stride, stride, pad, pad};
  L.count_include_pad = include_pad;
  return L;
}

NetLayer simple(LayerKind k) {
  NetLayer L;
  L.kind = k;
  return L;
}

NetLayer dense_layer(int in, int out, const std::vector<double>& w, const std::vector<double>& b) {
  NetLayer L;
  L.kind = LayerKind::Dense;
  L.dense.W.resize(out, in);
  L.dense.b.resize(out);
  for (int o = 0; o < out; ++o) {
    L.dense.b(o) = static_cast<float>(b[std::size_t(o)]);
    for (int i = 0; i < in; ++i) L.dense.W(o, i) = static_cast<float>(w[std::size_t(o) * in + i]);
  }
  return L;
}

Eigen::MatrixXf batch_of(const std::vector<Image>& xs) {
  Eigen::MatrixXf m(static_cast<Eigen::Index>(xs[0].v.size()), static_cast<Eigen::Index>(xs.size()));
  for (std::size_t j = 0; j < xs.size(); ++j)
    for (std::size_t i = 0; i < xs[j].v.size(); ++i) m(Eigen::Index(i), Eigen::Index(j)) = static_cast<float>(xs[j].v[i]);
  return m;
}

double max_abs_diff(const Eigen::VectorXf& got, const std::vector<double>& want) {
  REQUIRE(static_cast<std::size_t>(got.size()) == want.size());
  double d = 0;
  for (std::size_t i = 0; i < want.size(); ++i) d = std::max(d, std::abs(double(got(Eigen::Index(i))) - want[i]));
  return d;
}

template <class F>
void check_layer_error(F&& f, const std::string& fragment) {
  try {
    f();
    FAIL("no InputError containing " << fragment);
  } catch (const InputError& e) {
    CHECK_MESSAGE(std::string(e.what()).find(fragment) != std::string::npos, e.what());
  }
}

}  // namespace

TEST_CASE("conv2d by hand: 1 channel 3x3, 2x2 kernel, stride 2, padding 1") {
  // Input 1..9 row by row; padded it is a 5x5 with a zero border; windows at
  // padded rows/cols {0,1} and {2,3}:
  //   (0,0): [0 0; 0 1] -> 4*1            = 4
  //   (0,1): [0 0; 2 3] -> 3*2 + 4*3      = 18
  //   (1,0): [0 4; 0 7] -> 2*4 + 4*7      = 36
  //   (1,1): [5 6; 8 9] -> 5+12+24+36     = 77     (kernel [1 2; 3 4], bias 0.5)
  Net net;
  net.input = Shape3{1, 3, 3, false};
  net.layers.push_back(conv_layer(1, 1, 2, 2, 1, {1, 2, 3, 4}, {0.5}));
  net.layers.push_back(simple(LayerKind::Flatten));
  net.infer_shapes("net");
  CHECK(net.layers[0].out.h == 2);
  CHECK(net.layers[0].out.w == 2);
  Eigen::MatrixXf x(9, 1);
  for (int i = 0; i < 9; ++i) x(i, 0) = float(i + 1);
  const Eigen::MatrixXf y = net.forward(x);
  CHECK(y(0, 0) == 4.5f);
  CHECK(y(1, 0) == 18.5f);
  CHECK(y(2, 0) == 36.5f);
  CHECK(y(3, 0) == 77.5f);
}

TEST_CASE("pooling by hand: average with and without the padding in the divisor, maximum with padding") {
  // 1 channel 2x3 input [1 2 3; 4 5 6], 2x2 windows, stride 2, padding 1:
  // windows cover padded rows {0,1},{2,3} -> image rows {-1,0},{1,2}; cols {-1,0},{1,2}.
  //   (0,0): {1}      (0,1): {2,3}      (1,0): {4}      (1,1): {5,6}
  Net net;
  net.input = Shape3{1, 2, 3, false};
  Eigen::MatrixXf x(6, 1);
  x << 1, 2, 3, 4, 5, 6;
  const auto run = [&](NetLayer p) {
    net.layers = {p, simple(LayerKind::Flatten)};
    net.infer_shapes("net");
    return Eigen::VectorXf(net.forward(x).col(0));
  };
  // count_include_pad: each window lies inside the padded 4x5 image: divisor 4.
  const Eigen::VectorXf a = run(pool_layer(false, 2, 2, 1, true));
  CHECK(a(0) == doctest::Approx(1.0 / 4));
  CHECK(a(1) == doctest::Approx(5.0 / 4));
  CHECK(a(2) == doctest::Approx(4.0 / 4));
  CHECK(a(3) == doctest::Approx(11.0 / 4));
  const Eigen::VectorXf b = run(pool_layer(false, 2, 2, 1, false));
  CHECK(b(0) == doctest::Approx(1.0));
  CHECK(b(1) == doctest::Approx(2.5));
  CHECK(b(2) == doctest::Approx(4.0));
  CHECK(b(3) == doctest::Approx(5.5));
  x = -x;  // the padding must not win a maximum of negative values
  const Eigen::VectorXf m = run(pool_layer(true, 2, 2, 1));
  CHECK(m(0) == -1.0f);
  CHECK(m(1) == -2.0f);
  CHECK(m(2) == -4.0f);
  CHECK(m(3) == -5.0f);
}

TEST_CASE("conv2d against the direct reference: channels, strides, paddings, kernels, several samples") {
  struct Case {
    int c, h, w, out, k, s, p;
  };
  for (const Case cs : {Case{1, 7, 7, 3, 3, 1, 1}, Case{3, 8, 6, 4, 3, 2, 1}, Case{2, 5, 9, 5, 5, 1, 2},
                        Case{4, 6, 6, 2, 1, 1, 0}, Case{2, 9, 7, 3, 4, 3, 0}, Case{3, 4, 4, 6, 3, 2, 2}}) {
    CAPTURE(cs.c);
    CAPTURE(cs.k);
    CAPTURE(cs.s);
    CAPTURE(cs.p);
    TestRng rng(static_cast<std::uint64_t>(cs.c * 100 + cs.k * 10 + cs.s));
    const auto w = as_floats(rng.vec(std::size_t(cs.out) * cs.c * cs.k * cs.k, -1, 1));
    const auto b = as_floats(rng.vec(std::size_t(cs.out), -1, 1));
    std::vector<Image> xs;
    for (int n = 0; n < 3; ++n) {
      Image x = make_image(cs.c, cs.h, cs.w);
      x.v = as_floats(rng.vec(x.v.size(), -1, 1));
      xs.push_back(x);
    }
    Net net;
    net.input = Shape3{cs.c, cs.h, cs.w, false};
    net.layers = {conv_layer(cs.c, cs.out, cs.k, cs.s, cs.p, w, b), simple(LayerKind::Flatten)};
    net.infer_shapes("net");
    const Eigen::MatrixXf y = net.forward(batch_of(xs));
    for (std::size_t n = 0; n < xs.size(); ++n) {
      const Image ref = ref_conv2d(xs[n], w, b, cs.out, cs.k, cs.k, cs.s, cs.s, cs.p, cs.p);
      CHECK(net.layers[0].out.h == ref.h);
      CHECK(net.layers[0].out.w == ref.w);
      CHECK(max_abs_diff(y.col(Eigen::Index(n)), ref.v) < kFloatSumTolerance);
    }
  }
}

TEST_CASE("flatten is PyTorch's C-H-W order: a linear layer picking element k sees conv output (c, y, x) at k = (c H + y) W + x") {
  TestRng rng(7);
  const int C = 3, H = 5, W = 4, O = 2, k = 3;
  const auto w = as_floats(rng.vec(std::size_t(O) * C * k * k, -1, 1));
  const auto b = as_floats(rng.vec(std::size_t(O), -1, 1));
  Image x = make_image(C, H, W);
  x.v = as_floats(rng.vec(x.v.size(), 0, 1));
  const Image ref = ref_conv2d(x, w, b, O, k, k, 1, 1, 1, 1);  // O x 5 x 4
  const int n = O * ref.h * ref.w;
  // Row r of the linear layer picks flattened element perm(r): a permutation
  // that visits the elements in W-H-C order, so each output row knows which
  // (c, y, x) it must show.
  std::vector<double> lw(std::size_t(n) * n, 0.0), lb(std::size_t(n), 0.0);
  std::vector<double> want;
  int r = 0;
  for (int xx = 0; xx < ref.w; ++xx)
    for (int yy = 0; yy < ref.h; ++yy)
      for (int c = 0; c < O; ++c, ++r) {
        lw[std::size_t(r) * n + std::size_t((c * ref.h + yy) * ref.w + xx)] = 1.0;
        want.push_back(ref.at(c, yy, xx));
      }
  Net net;
  net.input = Shape3{C, H, W, false};
  net.layers = {conv_layer(C, O, k, 1, 1, w, b), simple(LayerKind::Flatten), dense_layer(n, n, lw, lb)};
  net.infer_shapes("net");
  CHECK(max_abs_diff(net.forward(batch_of({x})).col(0), want) < kFloatSumTolerance);
}

TEST_CASE("a small CNN (conv, relu, maxpool, conv, avgpool, flatten, linear) against the reference") {
  TestRng rng(11);
  const auto w1 = as_floats(rng.vec(4 * 2 * 9, -1, 1)), b1 = as_floats(rng.vec(4, -0.5, 0.5));
  const auto w2 = as_floats(rng.vec(3 * 4 * 9, -1, 1)), b2 = as_floats(rng.vec(3, -0.5, 0.5));
  const auto w3 = as_floats(rng.vec(5 * 3 * 2 * 2, -1, 1)), b3 = as_floats(rng.vec(5, -0.5, 0.5));
  Net net;
  net.input = Shape3{2, 10, 10, false};
  NetLayer c1 = conv_layer(2, 4, 3, 1, 1, w1, b1);
  c1.activation = "relu";
  NetLayer c2 = conv_layer(4, 3, 3, 1, 0, w2, b2);
  c2.activation = "sigmoid";
  net.layers = {c1, pool_layer(true, 2, 2, 0), c2, pool_layer(false, 2, 1, 0), simple(LayerKind::Flatten), dense_layer(12, 5, w3, b3)};
  net.infer_shapes("net");
  CHECK(net.output_size() == 5);
  std::vector<Image> xs;
  for (int n = 0; n < 4; ++n) {
    Image x = make_image(2, 10, 10);
    x.v = as_floats(rng.vec(x.v.size(), 0, 1));
    xs.push_back(x);
  }
  const Eigen::MatrixXf y = net.forward(batch_of(xs));
  for (std::size_t n = 0; n < xs.size(); ++n) {
    Image a = ref_relu(ref_conv2d(xs[n], w1, b1, 4, 3, 3, 1, 1, 1, 1));
    a = ref_pool(a, true, 2, 2, 0);                       // 4 x 5 x 5
    a = ref_conv2d(a, w2, b2, 3, 3, 3, 1, 1, 0, 0);       // 3 x 3 x 3
    for (double& v : a.v) v = 1 / (1 + std::exp(-v));
    a = ref_pool(a, false, 2, 1, 0);                      // 3 x 2 x 2
    CHECK(max_abs_diff(y.col(Eigen::Index(n)), ref_linear(a.v, w3, b3, 5)) < kFloatSumTolerance);
  }
}

TEST_CASE("BatchNorm fold: the folded convolution matches conv then BatchNorm in double to 1e-5 relative") {
  TestRng rng(3);
  const int C = 3, O = 4, k = 3;
  const auto w = as_floats(rng.vec(std::size_t(O) * C * k * k, -1, 1)), b = as_floats(rng.vec(O, -1, 1));
  BatchNorm2d bn;
  bn.gamma = rng.vec(O, 0.5, 2);
  bn.beta = rng.vec(O, -1, 1);
  bn.mean = rng.vec(O, -0.5, 0.5);
  bn.var = rng.vec(O, 0.01, 4);
  bn.eps = 1e-5;
  Net net;
  net.input = Shape3{C, 6, 6, false};
  net.layers = {conv_layer(C, O, k, 2, 1, w, b), simple(LayerKind::Flatten)};
  net.infer_shapes("net");
  const double err = fold_batchnorm(net.layers[0].conv, bn, net.layers[0].in);
  MESSAGE("fold_batchnorm relative error " << err);
  CHECK(err < kMaxBatchnormFoldError);
  CHECK(err > 0);  // the folded weights were rounded to float: an error of exactly 0 would mean no comparison
  Image x = make_image(C, 6, 6);
  x.v = as_floats(rng.vec(x.v.size(), 0, 1));
  const Image ref = ref_batchnorm(ref_conv2d(x, w, b, O, k, k, 2, 2, 1, 1), bn.gamma, bn.beta, bn.mean, bn.var, bn.eps);
  const Eigen::VectorXf y = net.forward(batch_of({x})).col(0);
  for (int o = 0; o < O; ++o) {
    double scale = 0, diff = 0;
    for (int i = 0; i < ref.h * ref.w; ++i) {
      const std::size_t at = std::size_t(o * ref.h * ref.w + i);
      scale = std::max(scale, std::abs(ref.v[at]));
      diff = std::max(diff, std::abs(double(y(Eigen::Index(at))) - ref.v[at]));
    }
    CHECK(diff / scale < kMaxBatchnormFoldError);
  }
}

TEST_CASE("BatchNorm fold on a 1x1 output: a channel whose first probe output is 0 is measured over 256 probes") {
  // fold_batchnorm's first probe value (its generator, written out here): the
  // BatchNorm's mean makes that probe's output exactly 0, so one probe (the
  // whole output of a 1x1 layer, as the end of a strided VGG-11) would give
  // the float rounding of the folded parameters a relative error of infinity.
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  const double x0 = static_cast<float>(static_cast<double>(state >> 11) * 0x1p-52 - 1.0);
  Net net;
  net.input = Shape3{1, 1, 1, false};
  net.layers = {conv_layer(1, 1, 1, 1, 0, {0.7}, {0.1}), simple(LayerKind::Flatten)};
  net.infer_shapes("net");
  BatchNorm2d bn;
  bn.gamma = {1.3};
  bn.beta = {0};
  bn.mean = {double(0.7f) * x0 + double(0.1f)};
  bn.var = {0.3};
  const double err = fold_batchnorm(net.layers[0].conv, bn, net.layers[0].in);
  MESSAGE("fold_batchnorm relative error on a 1x1 output " << err);
  CHECK(err < 1e-6);
}

TEST_CASE("shape errors name the layer") {
  Net net;
  net.input = Shape3{1, 4, 4, false};
  net.layers = {conv_layer(1, 2, 7, 1, 1, std::vector<double>(2 * 49, 0.1), {}), simple(LayerKind::Flatten)};
  check_layer_error([&] { net.infer_shapes("n.json"); }, "layer 1 (conv2d): its 7x7 kernel is larger than its padded input 6x6");
  net.layers = {conv_layer(2, 2, 3, 1, 1, std::vector<double>(2 * 2 * 9, 0.1), {}), simple(LayerKind::Flatten)};
  check_layer_error([&] { net.infer_shapes("n.json"); }, "layer 1 (conv2d) takes 2 channels but is given 1");
  // 1x4x4 -> conv 3x3 pad 1 -> 2x4x4 = 32 values; the linear layer takes 30.
  net.layers = {conv_layer(1, 2, 3, 1, 1, std::vector<double>(2 * 9, 0.1), {}), simple(LayerKind::Flatten),
                dense_layer(30, 2, std::vector<double>(60, 0.1), {0, 0})};
  check_layer_error([&] { net.infer_shapes("n.json"); }, "layer 3 (dense) takes 30 inputs but the flatten before it gives 32 ([2, 4, 4] flattened)");
  net.layers = {conv_layer(1, 2, 3, 1, 1, std::vector<double>(2 * 9, 0.1), {}), dense_layer(32, 2, std::vector<double>(64, 0.1), {0, 0})};
  check_layer_error([&] { net.infer_shapes("n.json"); }, "layer 2 (dense) is given the image [2, 4, 4]: it needs a flatten before it");
  net.layers = {pool_layer(true, 5, 1, 0), simple(LayerKind::Flatten)};
  check_layer_error([&] { net.infer_shapes("n.json"); }, "layer 1 (maxpool2d): its 5x5 kernel is larger than its padded input 4x4");
  net.layers = {conv_layer(1, 2, 3, 1, 1, std::vector<double>(2 * 9, 0.1), {})};
  check_layer_error([&] { net.infer_shapes("n.json"); }, "the network's output is the image [2, 4, 4]");
  net.input = Shape3{1, 65536, 65536, false};
  check_layer_error([&] { net.infer_shapes("n.json"); }, "the input [1, 65536, 65536] holds 4294967296 values per sample, more than");
}

TEST_CASE("a conv net is no MLP: to_mlp names the layer and where such nets run") {
  Net net;
  net.input = Shape3{1, 4, 4, false};
  net.layers = {conv_layer(1, 2, 3, 1, 1, std::vector<double>(2 * 9, 0.1), {}), simple(LayerKind::Flatten),
                dense_layer(32, 2, std::vector<double>(64, 0.1), {0, 0})};
  net.layers[0].activation = "relu";
  net.infer_shapes("n.json");
  CHECK_FALSE(net.is_dense());
  check_layer_error([&] { (void)net.to_mlp("n.json"); }, "layer 1 (conv2d): this reader takes dense layers only; a network with convolutions or pooling is a layer graph");
}

TEST_CASE("mean field of a layer graph: with nu = phi it predicts as the ANN; on a dense graph as the MLP mean field") {
  TestRng rng(13);
  const auto w1 = as_floats(rng.vec(3 * 2 * 9, -1, 1)), b1 = as_floats(rng.vec(3, -0.5, 0.5));
  const auto w2 = as_floats(rng.vec(4 * 12, -1, 1)), b2 = as_floats(rng.vec(4, -0.5, 0.5));
  Net net;
  net.input = Shape3{2, 5, 5, false};
  NetLayer c1 = conv_layer(2, 3, 3, 2, 1, w1, b1);  // 3 x 3 x 3
  c1.activation = "relu";
  net.layers = {c1, pool_layer(false, 2, 1, 0), simple(LayerKind::Flatten), dense_layer(12, 4, w2, b2)};
  net.infer_shapes("net");
  std::vector<Image> xs;
  for (int n = 0; n < 16; ++n) {
    Image x = make_image(2, 5, 5);
    x.v = as_floats(rng.vec(x.v.size(), 0, 1));
    xs.push_back(x);
  }
  const Eigen::MatrixXf x = batch_of(xs);
  const RateFunction relu = [](double h) { return h > 0 ? h : 0.0; };
  const RateFunction sigmoid = [](double h) { return 1 / (1 + std::exp(-h)); };  // strictly increasing: argmax kept
  CHECK(mean_field_predict(net, x, {relu}, Readout::Integrate) == net.predict(x));
  CHECK(mean_field_predict(net, x, {relu, sigmoid}, Readout::Spike) == net.predict(x));
  CHECK_THROWS_AS(mean_field_predict(net, x, {relu}, Readout::Spike), InputError);

  // A dense graph against mean_field_forward on the same network as an Mlp, with a rate that is not phi.
  const auto w3 = as_floats(rng.vec(6 * 50, -0.3, 0.3)), b3 = as_floats(rng.vec(6, -0.5, 0.5));
  const auto w4 = as_floats(rng.vec(3 * 6, -1, 1)), b4 = as_floats(rng.vec(3, -0.5, 0.5));
  Net dense;
  dense.input = Shape3{2, 5, 5, false};
  NetLayer d1 = dense_layer(50, 6, w3, b3);
  d1.activation = "relu";
  dense.layers = {simple(LayerKind::Flatten), d1, dense_layer(6, 3, w4, b4)};
  dense.infer_shapes("dense");
  REQUIRE(dense.is_dense());
  const Mlp mlp = dense.to_mlp("dense");
  const RateFunction soft = [](double h) { return std::log1p(std::exp(h)); };
  const auto got = mean_field_predict(dense, x, {soft}, Readout::Integrate);
  for (std::size_t n = 0; n < xs.size(); ++n)
    CHECK(got[n] == mean_field_forward(mlp, x.col(Eigen::Index(n)).data(), {soft}, Readout::Integrate).prediction);
}

TEST_CASE("the forward pass gives the same bits for 1, 2 and 3 threads") {
  TestRng rng(17);
  const auto w1 = as_floats(rng.vec(8 * 3 * 9, -1, 1)), b1 = as_floats(rng.vec(8, -0.5, 0.5));
  const auto w2 = as_floats(rng.vec(5 * 8 * 16, -0.2, 0.2)), b2 = as_floats(rng.vec(5, -0.5, 0.5));
  Net net;
  net.input = Shape3{3, 8, 8, false};
  NetLayer c1 = conv_layer(3, 8, 3, 2, 1, w1, b1);  // 8 x 4 x 4
  c1.activation = "softplus";
  net.layers = {c1, simple(LayerKind::Flatten), dense_layer(128, 5, w2, b2)};
  net.infer_shapes("net");
  std::vector<Image> xs;
  for (int n = 0; n < 37; ++n) {
    Image x = make_image(3, 8, 8);
    x.v = as_floats(rng.vec(x.v.size(), 0, 1));
    xs.push_back(x);
  }
  const Eigen::MatrixXf x = batch_of(xs);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const Eigen::MatrixXf y1 = net.forward(x);
  omp_set_num_threads(2);
  const Eigen::MatrixXf y2 = net.forward(x);
  omp_set_num_threads(3);
  const Eigen::MatrixXf y3 = net.forward(x);
  omp_set_num_threads(saved);
  CHECK(y1 == y2);
  CHECK(y1 == y3);
}
