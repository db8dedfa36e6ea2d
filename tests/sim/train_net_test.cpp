// Layer-graph training (train_net.hpp): every layer's forward pass against
// the independent double-precision reference of conv_reference.hpp, every
// backward pass and the whole loss's gradient against central finite
// differences of that reference in double, the VGG-11 builders, BatchNorm's
// running statistics, the files (unfolded state_dict, read back folded), and
// bit-identical weights for 1, 2 and 3 threads.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "conv_reference.hpp"
#include "ctmc/activations/activation.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/io/sha256.hpp"
#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/sim/nets/train_net.hpp"
#include "../test_temp_files.hpp"

using namespace ctmc::sim;
using namespace ctmc::sim::testing;

namespace {

// ---- the reference (double, one sample at a time) --------------------------

// torch.nn.BatchNorm2d in training mode over a batch: the batch mean and the
// biased variance over every sample's pixels of a channel.
std::vector<Image> ref_bn_train(std::vector<Image> xs, const std::vector<double>& gamma, const std::vector<double>& beta,
                                double eps) {
  const int C = xs[0].c;
  for (int c = 0; c < C; ++c) {
    double sum = 0, n = 0;
    for (const Image& x : xs)
      for (int y = 0; y < x.h; ++y)
        for (int t = 0; t < x.w; ++t) sum += x.at(c, y, t), ++n;
    const double mean = sum / n;
    double ss = 0;
    for (const Image& x : xs)
      for (int y = 0; y < x.h; ++y)
        for (int t = 0; t < x.w; ++t) ss += (x.at(c, y, t) - mean) * (x.at(c, y, t) - mean);
    const double invstd = 1 / std::sqrt(ss / n + eps);
    for (Image& x : xs)
      for (int y = 0; y < x.h; ++y)
        for (int t = 0; t < x.w; ++t) x.at(c, y, t) = (x.at(c, y, t) - mean) * invstd * gamma[std::size_t(c)] + beta[std::size_t(c)];
  }
  return xs;
}

Image ref_activate(Image x, const std::string& name) {
  if (name == "linear") return x;
  const auto act = ctmc::activations::parse_activation(name);
  for (double& v : x.v) v = act.eval(v);
  return x;
}

std::vector<double> to_doubles(const float* p, Eigen::Index n) { return std::vector<double>(p, p + n); }

// A layer's parameters in double (weights in PyTorch's row-major layout).
struct RefParams {
  std::vector<double> weight, bias;
};
RefParams params_of(const TrainLayer& L) {
  RefParams p;
  if (L.op == TrainOp::Linear) {
    const Eigen::MatrixXf rm = L.weight.transpose();
    p.weight = to_doubles(rm.data(), rm.size());
  } else {
    p.weight = to_doubles(L.weight.data(), L.weight.size());
  }
  p.bias = to_doubles(L.bias.data(), L.bias.size());
  return p;
}

// One layer of the reference on a batch (images in, images or flat vectors out as Images 1x1).
std::vector<Image> ref_layer(const TrainLayer& L, const RefParams& p, const std::vector<Image>& xs, bool training) {
  std::vector<Image> ys;
  if (L.op == TrainOp::BatchNorm2d) {
    if (training) ys = ref_bn_train(xs, p.weight, p.bias, L.eps);
    else
      for (const Image& x : xs)
        ys.push_back(ref_batchnorm(x, p.weight, p.bias, to_doubles(L.running_mean.data(), L.running_mean.size()),
                                   to_doubles(L.running_var.data(), L.running_var.size()), L.eps));
  } else {
    for (const Image& x : xs) {
      switch (L.op) {
        case TrainOp::Conv2d:
          ys.push_back(ref_conv2d(x, p.weight, p.bias, L.out_features, L.win.kh, L.win.kw, L.win.stride_h, L.win.stride_w,
                                  L.win.pad_h, L.win.pad_w));
          break;
        case TrainOp::AvgPool2d:
        case TrainOp::MaxPool2d:
          ys.push_back(ref_pool(x, L.op == TrainOp::MaxPool2d, L.win.kh, L.win.stride_h, L.win.pad_h, L.count_include_pad));
          break;
        case TrainOp::Flatten: ys.push_back(Image{int(x.v.size()), 1, 1, x.v}); break;
        case TrainOp::Linear: {
          const auto v = ref_linear(x.v, p.weight, p.bias, L.out_features);
          ys.push_back(Image{int(v.size()), 1, 1, v});
          break;
        }
        default: break;
      }
    }
  }
  for (Image& y : ys) y = ref_activate(std::move(y), L.activation);
  return ys;
}

// Mean softmax cross-entropy in double.
double ref_loss(const std::vector<Image>& logits, const std::vector<int>& labels) {
  double loss = 0;
  for (std::size_t k = 0; k < logits.size(); ++k) {
    const auto& z = logits[k].v;
    const double m = *std::max_element(z.begin(), z.end());
    double s = 0;
    for (double v : z) s += std::exp(v - m);
    loss += std::log(s) - (z[std::size_t(labels[k])] - m);
  }
  return loss / double(logits.size());
}

// Batches as Dataset columns (C-H-W) and as reference images.
Eigen::MatrixXf columns_of(const std::vector<Image>& xs) {
  Eigen::MatrixXf m(Eigen::Index(xs[0].v.size()), Eigen::Index(xs.size()));
  for (std::size_t k = 0; k < xs.size(); ++k)
    for (std::size_t i = 0; i < xs[k].v.size(); ++i) m(Eigen::Index(i), Eigen::Index(k)) = static_cast<float>(xs[k].v[i]);
  return m;
}
std::vector<Image> images_of(const Eigen::MatrixXf& cols, const Shape3& s) {
  std::vector<Image> out;
  for (Eigen::Index k = 0; k < cols.cols(); ++k) {
    Image im = make_image(s.c, s.h, s.w);
    for (Eigen::Index i = 0; i < cols.rows(); ++i) im.v[std::size_t(i)] = cols(i, k);
    out.push_back(im);
  }
  return out;
}
std::vector<Image> random_images(TestRng& rng, int n, const Shape3& s, double lo = -1, double hi = 1) {
  std::vector<Image> out;
  for (int k = 0; k < n; ++k) {
    Image im = make_image(s.c, s.h, s.w);
    im.v = as_floats(rng.vec(im.v.size(), lo, hi));
    out.push_back(im);
  }
  return out;
}

// The library's layer on those images, in its layout, back as images.
std::vector<Image> lib_layer(const TrainLayer& L, const std::vector<Image>& xs, bool training, LayerCache& cache, Eigen::MatrixXf& xin) {
  const Eigen::MatrixXf cols = columns_of(xs);
  xin = L.in.flat ? cols : to_pixel_rows(cols, L.in);
  Eigen::MatrixXf y;
  train_layer_forward(L, int(xs.size()), xin, y, cache, training);
  return images_of(L.out.flat ? y : to_sample_columns(y, L.out), L.out);
}

TrainLayer make_layer(TrainOp op, const Shape3& in, int out, Window2d win, bool bias, const std::string& act, std::uint64_t seed) {
  TrainNet net;
  net.input = in;
  TrainLayer L;
  L.op = op;
  L.out_features = out;
  L.win = win;
  L.has_bias = bias;
  L.activation = act;
  net.layers.push_back(L);
  if (op != TrainOp::Linear && op != TrainOp::Flatten) {
    TrainLayer f;
    f.op = TrainOp::Flatten;
    net.layers.push_back(f);
  }
  TrainLayer fc;  // a linear output layer, as every network ends
  fc.op = TrainOp::Linear;
  fc.out_features = 2;
  net.layers.push_back(fc);
  init_train_net(net, seed);
  TrainLayer out_layer = net.layers[0];
  if (op == TrainOp::BatchNorm2d) {  // not the initial 1 and 0: a general affine map
    TestRng rng(seed);
    for (Eigen::Index c = 0; c < out_layer.weight.size(); ++c) {
      out_layer.weight(c, 0) = static_cast<float>(rng.uniform(0.5, 1.5));
      out_layer.bias(c) = static_cast<float>(rng.uniform(-0.5, 0.5));
      out_layer.running_mean(c) = static_cast<float>(rng.uniform(-0.3, 0.3));
      out_layer.running_var(c) = static_cast<float>(rng.uniform(0.5, 2));
    }
  }
  return out_layer;
}

double max_abs_diff(const std::vector<Image>& a, const std::vector<Image>& b, double* scale = nullptr) {
  double d = 0, m = 0;
  for (std::size_t k = 0; k < a.size(); ++k)
    for (std::size_t i = 0; i < a[k].v.size(); ++i) {
      d = std::max(d, std::abs(a[k].v[i] - b[k].v[i]));
      m = std::max(m, std::abs(b[k].v[i]));
    }
  if (scale) *scale = m;
  return d;
}

// Central differences of f at every entry of v (h = 1e-6; f in double is
// smooth at the chosen points, so the difference error is about 1e-9),
// compared with the library's float gradient g: returns the largest error
// relative to the largest |gradient|.
double fd_error(std::vector<double>& v, const std::vector<double>& g, const std::function<double()>& f) {
  REQUIRE(v.size() == g.size());
  double err = 0, scale = 1e-12;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double keep = v[i], h = 1e-6;
    v[i] = keep + h;
    const double fp = f();
    v[i] = keep - h;
    const double fm = f();
    v[i] = keep;
    const double fd = (fp - fm) / (2 * h);
    err = std::max(err, std::abs(fd - g[i]));
    scale = std::max(scale, std::abs(fd));
  }
  return err / scale;
}

// Float rounding of the library's gradients (float sums of a few hundred
// terms) against the double differences.
constexpr double kGradTol = 2e-5;

// Checks one layer's backward pass: L(x, params) = sum R .* layer(x) with a
// fixed random R; its gradients in x, weight and bias against differences.
void check_layer_backward(const TrainLayer& L, int batch, std::uint64_t seed, const std::string& what) {
  TestRng rng(seed);
  std::vector<Image> xs = random_images(rng, batch, L.in);
  LayerCache cache;
  Eigen::MatrixXf xin;
  const std::vector<Image> y = lib_layer(L, xs, true, cache, xin);
  std::vector<Image> R = y;
  for (Image& r : R) r.v = as_floats(rng.vec(r.v.size(), -1, 1));
  Eigen::MatrixXf dy = columns_of(R);
  if (!L.out.flat) dy = to_pixel_rows(dy, L.out);
  Eigen::MatrixXf dx;
  LayerGrad g;
  train_layer_backward(L, batch, xin, cache, dy, &dx, g);
  RefParams p = params_of(L);
  const auto f = [&] {
    const auto out = ref_layer(L, p, xs, true);
    double s = 0;
    for (std::size_t k = 0; k < out.size(); ++k)
      for (std::size_t i = 0; i < out[k].v.size(); ++i) s += R[k].v[i] * out[k].v[i];
    return s;
  };
  // dx in the reference's order: sample by sample, C-H-W.
  const Eigen::MatrixXf dxc = L.in.flat ? dx : to_sample_columns(dx, L.in);
  std::vector<double> all_x, gx;
  for (std::size_t k = 0; k < xs.size(); ++k)
    for (std::size_t i = 0; i < xs[k].v.size(); ++i) gx.push_back(dxc(Eigen::Index(i), Eigen::Index(k)));
  double ex = 0;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    std::vector<double> gk(gx.begin() + std::ptrdiff_t(k * xs[k].v.size()), gx.begin() + std::ptrdiff_t((k + 1) * xs[k].v.size()));
    ex = std::max(ex, fd_error(xs[k].v, gk, f));
  }
  MESSAGE(what << ": finite-difference error relative to the largest gradient: input " << ex);
  CHECK(ex < kGradTol);
  if (L.trainable()) {
    std::vector<double> gw;
    if (L.op == TrainOp::Linear) {
      const Eigen::MatrixXf rm = g.dweight.transpose();
      gw = to_doubles(rm.data(), rm.size());
    } else {
      gw = to_doubles(g.dweight.data(), g.dweight.size());
    }
    const double ew = fd_error(p.weight, gw, f);
    MESSAGE(what << ": weight " << ew);
    CHECK(ew < kGradTol);
    if (!p.bias.empty()) {
      const double eb = fd_error(p.bias, to_doubles(g.dbias.data(), g.dbias.size()), f);
      MESSAGE(what << ": bias " << eb);
      CHECK(eb < kGradTol);
    }
  }
}

// n images of shape s whose class k in [0, classes) is a fixed random
// template plus noise: learnable, and the same for every run.
Dataset synthetic(const Shape3& s, int n, int classes, std::uint64_t seed) {
  TestRng rng(seed);
  std::vector<std::vector<double>> templates;
  for (int k = 0; k < classes; ++k) templates.push_back(rng.vec(std::size_t(s.size()), 0, 1));
  Dataset d;
  d.channels = s.c;
  d.rows = s.h;
  d.cols = s.w;
  d.images.resize(Eigen::Index(s.size()), n);
  for (int i = 0; i < n; ++i) {
    const int k = i % classes;
    d.labels.push_back(k);
    for (Eigen::Index j = 0; j < d.images.rows(); ++j)
      d.images(j, i) = static_cast<float>(std::clamp(templates[std::size_t(k)][std::size_t(j)] + rng.uniform(-0.3, 0.3), 0.0, 1.0));
  }
  return d;
}

std::string weights_sha(const TrainNet& net) {
  SafetensorsFile st;
  (void)train_net_manifest(net, st, nlohmann::json::object());
  const auto bytes = encode_safetensors("w", st);
  return ctmc::io::sha256_hex(bytes.data(), bytes.size());
}

}  // namespace

TEST_CASE("train_net layouts: pixel rows hold sample s's pixel (y, x) at row s*H*W + y*W + x, one column per channel") {
  const Shape3 s{2, 2, 3, false};
  Eigen::MatrixXf cols(12, 2);
  for (Eigen::Index k = 0; k < 2; ++k)
    for (Eigen::Index i = 0; i < 12; ++i) cols(i, k) = float(100 * k + i);
  const Eigen::MatrixXf rows = to_pixel_rows(cols, s);
  REQUIRE(rows.rows() == 12);
  REQUIRE(rows.cols() == 2);
  for (int k = 0; k < 2; ++k)
    for (int c = 0; c < 2; ++c)
      for (int y = 0; y < 2; ++y)
        for (int x = 0; x < 3; ++x) CHECK(rows(k * 6 + y * 3 + x, c) == cols((c * 2 + y) * 3 + x, k));
  CHECK(to_sample_columns(rows, s) == cols);
}

TEST_CASE("train_net forward: conv2d, BatchNorm (eval), pooling, flatten and linear match the double reference") {
  TestRng rng(7);
  const Shape3 in{3, 7, 6, false};
  struct Case {
    TrainOp op;
    int out;
    Window2d win;
    bool bias;
    std::string act;
  };
  const std::vector<Case> cases = {
      {TrainOp::Conv2d, 4, {3, 3, 1, 1, 1, 1}, true, "linear"},
      {TrainOp::Conv2d, 2, {3, 2, 2, 1, 1, 0}, false, "relu"},
      {TrainOp::Conv2d, 5, {3, 3, 2, 2, 1, 1}, true, "sigmoid"},
      {TrainOp::BatchNorm2d, 0, {}, true, "cliprelu_6"},
      {TrainOp::AvgPool2d, 0, {2, 2, 2, 2, 0, 0}, false, "linear"},
      {TrainOp::AvgPool2d, 0, {3, 3, 2, 2, 1, 1}, false, "linear"},
      {TrainOp::MaxPool2d, 0, {3, 3, 2, 2, 1, 1}, false, "linear"},
  };
  for (const Case& c : cases) {
    const TrainLayer L = make_layer(c.op, in, c.out, c.win, c.bias, c.act, 11);
    const auto xs = random_images(rng, 3, in);
    LayerCache cache;
    Eigen::MatrixXf xin;
    const auto got = lib_layer(L, xs, false, cache, xin);
    const auto want = ref_layer(L, params_of(L), xs, false);
    double scale = 0;
    const double d = max_abs_diff(got, want, &scale);
    CAPTURE(int(c.op));
    CHECK(got[0].c == want[0].c);
    CHECK(got[0].h == want[0].h);
    CHECK(got[0].w == want[0].w);
    CHECK(d <= 1e-6 * std::max(scale, 1.0));
  }
  // Average pooling that leaves the padding out of the divisor.
  TrainLayer avg = make_layer(TrainOp::AvgPool2d, in, 0, {3, 3, 2, 2, 1, 1}, false, "linear", 1);
  avg.count_include_pad = false;
  const auto xs = random_images(rng, 2, in);
  LayerCache cache;
  Eigen::MatrixXf xin;
  CHECK(max_abs_diff(lib_layer(avg, xs, false, cache, xin), ref_layer(avg, params_of(avg), xs, false)) < 1e-6);
  // Linear on flat inputs.
  const TrainLayer fc = make_layer(TrainOp::Linear, Shape3{9, 1, 1, true}, 4, {}, true, "softplus", 5);
  const auto vs = random_images(rng, 3, Shape3{9, 1, 1, true});
  CHECK(max_abs_diff(lib_layer(fc, vs, false, cache, xin), ref_layer(fc, params_of(fc), vs, false)) < 1e-6);
}

TEST_CASE("train_net backward: conv2d (stride, padding, bias), BatchNorm in training mode, pooling and linear against central differences") {
  const Shape3 in{2, 5, 6, false};
  check_layer_backward(make_layer(TrainOp::Conv2d, in, 3, {3, 3, 1, 1, 1, 1}, true, "linear", 1), 2, 21, "conv 3x3 s1 p1");
  check_layer_backward(make_layer(TrainOp::Conv2d, in, 3, {3, 3, 2, 2, 1, 1}, false, "linear", 2), 2, 22, "conv 3x3 s2 p1");
  check_layer_backward(make_layer(TrainOp::Conv2d, in, 2, {2, 3, 1, 2, 0, 1}, true, "sigmoid", 3), 2, 23, "conv 2x3 s(1,2) + sigmoid");
  check_layer_backward(make_layer(TrainOp::BatchNorm2d, in, 0, {}, true, "linear", 4), 3, 24, "batchnorm2d (training)");
  check_layer_backward(make_layer(TrainOp::BatchNorm2d, in, 0, {}, true, "softplus", 5), 2, 25, "batchnorm2d + softplus");
  check_layer_backward(make_layer(TrainOp::AvgPool2d, in, 0, {2, 2, 2, 2, 0, 0}, false, "linear", 6), 2, 26, "avgpool 2x2");
  check_layer_backward(make_layer(TrainOp::AvgPool2d, in, 0, {3, 3, 2, 2, 1, 1}, false, "linear", 7), 2, 27, "avgpool 3x3 s2 p1");
  // Random inputs have no ties, so the maximum is differentiable there.
  check_layer_backward(make_layer(TrainOp::MaxPool2d, in, 0, {2, 2, 2, 2, 0, 0}, false, "linear", 8), 2, 28, "maxpool 2x2");
  check_layer_backward(make_layer(TrainOp::Linear, Shape3{7, 1, 1, true}, 4, {}, true, "linear", 9), 3, 29, "linear");
}

TEST_CASE("train_net: the whole loss's gradient (conv, BatchNorm, activations, pooling, flatten, linear) against central differences") {
  TrainNet net;
  net.input = Shape3{2, 6, 6, false};
  const auto add = [&](TrainOp op, int out, Window2d win, bool bias, std::string act) {
    TrainLayer L;
    L.op = op;
    L.out_features = out;
    L.win = win;
    L.has_bias = bias;
    L.activation = std::move(act);
    net.layers.push_back(L);
  };
  add(TrainOp::Conv2d, 3, {3, 3, 1, 1, 1, 1}, true, "linear");
  add(TrainOp::BatchNorm2d, 0, {}, true, "softplus");
  add(TrainOp::Conv2d, 4, {3, 3, 2, 2, 1, 1}, false, "linear");
  add(TrainOp::BatchNorm2d, 0, {}, true, "sigmoid");
  add(TrainOp::AvgPool2d, 0, {2, 2, 1, 1, 0, 0}, false, "linear");
  add(TrainOp::Flatten, 0, {}, false, "linear");
  add(TrainOp::Linear, 3, {}, true, "linear");
  init_train_net(net, 5);
  TestRng rng(31);
  for (TrainLayer& L : net.layers)  // BatchNorm's gamma and beta away from 1 and 0
    if (L.op == TrainOp::BatchNorm2d)
      for (Eigen::Index c = 0; c < L.weight.size(); ++c) L.weight(c, 0) = float(rng.uniform(0.5, 1.5)), L.bias(c) = float(rng.uniform(-0.5, 0.5));
  std::vector<Image> xs = random_images(rng, 4, net.input);
  const std::vector<int> labels = {0, 2, 1, 2};
  const NetLossGradients lib = train_net_loss_gradients(net, columns_of(xs), labels);

  std::vector<RefParams> p;
  for (const TrainLayer& L : net.layers) p.push_back(params_of(L));
  const auto loss = [&] {
    std::vector<Image> a = xs;
    for (std::size_t l = 0; l < net.layers.size(); ++l) a = ref_layer(net.layers[l], p[l], a, true);
    return ref_loss(a, labels);
  };
  CHECK(lib.loss == doctest::Approx(loss()).epsilon(1e-6));
  double worst = 0;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const TrainLayer& L = net.layers[l];
    if (!L.trainable()) continue;
    std::vector<double> gw;
    if (L.op == TrainOp::Linear) {
      const Eigen::MatrixXf rm = lib.grads[l].dweight.transpose();
      gw = to_doubles(rm.data(), rm.size());
    } else {
      gw = to_doubles(lib.grads[l].dweight.data(), lib.grads[l].dweight.size());
    }
    const double ew = fd_error(p[l].weight, gw, loss);
    const std::vector<double> gb = to_doubles(lib.grads[l].dbias.data(), lib.grads[l].dbias.size());
    double eb = 0;
    if (l + 1 < net.layers.size() && net.layers[l + 1].op == TrainOp::BatchNorm2d && L.op == TrainOp::Conv2d) {
      // BatchNorm removes any constant added before it: the bias's gradient
      // is zero, here float rounding against the weights' gradients.
      const double gmax = lib.grads[l].dweight.cwiseAbs().maxCoeff();
      for (double g : gb) eb = std::max(eb, std::abs(g) / gmax);
    } else if (!gb.empty()) {
      eb = fd_error(p[l].bias, gb, loss);
    }
    MESSAGE("layer " << l + 1 << ": weight " << ew << ", bias " << eb);
    CHECK(ew < kGradTol);
    CHECK(eb < kGradTol);
    worst = std::max({worst, ew, eb});
  }
  std::vector<double> gx;
  for (Eigen::Index k = 0; k < lib.dinput.cols(); ++k)
    for (Eigen::Index i = 0; i < lib.dinput.rows(); ++i) gx.push_back(lib.dinput(i, k));
  double ex = 0;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    const std::size_t n = xs[k].v.size();
    ex = std::max(ex, fd_error(xs[k].v, std::vector<double>(gx.begin() + std::ptrdiff_t(k * n), gx.begin() + std::ptrdiff_t((k + 1) * n)), loss));
  }
  MESSAGE("whole loss: largest finite-difference error relative to the largest gradient: parameters " << worst << ", input " << ex);
  CHECK(ex < kGradTol);
}

TEST_CASE("vgg11 width 1/16: one training batch's loss and every parameter's gradient as PyTorch's autograd computes them") {
  // tests/fixtures/torch_vgg11/ (make_torch_vgg_fixture.py, PyTorch 1.13): a
  // trained VGG11Strided of the same plan and module names, and one
  // training-mode batch of 16 MNIST digits with PyTorch's loss and
  // gradients. Its state_dict is loaded into our vgg11() and the same batch
  // goes through train_net_loss_gradients. Float32 on both sides, other
  // summation orders: agreement to about 1e-5 of each tensor's largest
  // gradient (7.4e-6 at worst here), the check 1e-4.
  const std::string dir = std::string(CTMC_FIXTURES_DIR) + "/torch_vgg11/";
  const SafetensorsFile w = read_safetensors(dir + "torch_vgg11.safetensors");
  const SafetensorsFile g = read_safetensors(dir + "torch_vgg11_grads.safetensors");
  TrainNet net = vgg11(Shape3{1, 28, 28, false}, 1.0 / 16, "relu");
  init_train_net(net, 1);
  const auto copy = [](const Tensor& t, float* to, Eigen::Index n) {
    REQUIRE(static_cast<Eigen::Index>(t.values.size()) == n);
    for (Eigen::Index i = 0; i < n; ++i) to[i] = static_cast<float>(t.values[static_cast<std::size_t>(i)]);
  };
  for (TrainLayer& L : net.layers) {
    if (!L.trainable()) continue;
    const std::string n = L.name;
    if (L.op == TrainOp::Linear) {  // ours out x in (column-major), PyTorch's [out, in] row-major
      Eigen::MatrixXf rm(L.weight.cols(), L.weight.rows());
      copy(w.tensors.at(n + ".weight"), rm.data(), rm.size());
      L.weight = rm.transpose();
    } else {  // a conv's K x out column-major is [out][in][kh][kw] row-major; BatchNorm's gamma
      copy(w.tensors.at(n + ".weight"), L.weight.data(), L.weight.size());
    }
    if (L.bias.size() > 0) copy(w.tensors.at(n + ".bias"), L.bias.data(), L.bias.size());
    if (L.op == TrainOp::BatchNorm2d) {
      copy(w.tensors.at(n + ".running_mean"), L.running_mean.data(), L.running_mean.size());
      copy(w.tensors.at(n + ".running_var"), L.running_var.data(), L.running_var.size());
    }
  }
  const Tensor& bx = g.tensors.at("batch_x");
  const Tensor& by = g.tensors.at("batch_y");
  REQUIRE(bx.shape == std::vector<std::int64_t>{16, 1, 28, 28});
  Eigen::MatrixXf x(784, 16);
  copy(bx, x.data(), x.size());
  std::vector<int> labels;
  for (double v : by.values) labels.push_back(static_cast<int>(v));
  const NetLossGradients ours = train_net_loss_gradients(net, x, labels);
  const double torch_loss = g.tensors.at("loss").values.at(0);
  MESSAGE("loss: ours " << ours.loss << ", PyTorch's " << torch_loss);
  CHECK(ours.loss == doctest::Approx(torch_loss).epsilon(1e-5));
  int compared = 0;
  double worst = 0;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const TrainLayer& L = net.layers[l];
    if (!L.trainable()) continue;
    std::vector<std::pair<std::string, std::vector<double>>> mine;
    if (L.op == TrainOp::Linear) {
      const Eigen::MatrixXf rm = ours.grads[l].dweight.transpose();
      mine.push_back({"weight", to_doubles(rm.data(), rm.size())});
    } else {
      mine.push_back({"weight", to_doubles(ours.grads[l].dweight.data(), ours.grads[l].dweight.size())});
    }
    if (L.bias.size() > 0) mine.push_back({"bias", to_doubles(ours.grads[l].dbias.data(), ours.grads[l].dbias.size())});
    for (const auto& [what, ours_g] : mine) {
      const Tensor& ref = g.tensors.at("grad." + L.name + "." + what);
      REQUIRE(ref.values.size() == ours_g.size());
      double diff = 0, scale = 0;
      for (std::size_t i = 0; i < ours_g.size(); ++i) {
        diff = std::max(diff, std::abs(ours_g[i] - ref.values[i]));
        scale = std::max(scale, std::abs(ref.values[i]));
      }
      CAPTURE(L.name);
      CAPTURE(what);
      CHECK(scale > 0);
      CHECK(diff <= 1e-4 * scale);
      worst = std::max(worst, diff / scale);
      ++compared;
    }
  }
  MESSAGE("largest gradient difference from PyTorch's, relative to the tensor's largest gradient: " << worst);
  CHECK(compared == 13 * 3 + 2);  // 13 conv weights, 13 BatchNorm gammas and betas, the classifier's weight and bias
}

TEST_CASE("vgg11: the strided-convolution variant for 28x28, the average-pooling variant for 32x32x3, --width scales the channels") {
  CHECK(vgg11_channels(0.125) == std::vector<int>{8, 16, 32, 32, 64, 64, 64, 64});
  CHECK(vgg11_channels(1) == std::vector<int>{64, 128, 256, 256, 512, 512, 512, 512});
  CHECK(vgg11_channels(0.001) == std::vector<int>{1, 1, 1, 1, 1, 1, 1, 1});

  const TrainNet m = vgg11(Shape3{1, 28, 28, false}, 0.125, "relu");
  int convs = 0, bns = 0, strided = 0;
  std::vector<int> sizes;
  for (const TrainLayer& L : m.layers) {
    convs += L.op == TrainOp::Conv2d;
    bns += L.op == TrainOp::BatchNorm2d;
    CHECK(L.op != TrainOp::AvgPool2d);
    CHECK(L.op != TrainOp::MaxPool2d);
    if (L.op == TrainOp::Conv2d) {
      CHECK(L.win.kh == 3);
      CHECK(L.win.pad_h == 1);
      CHECK_FALSE(L.has_bias);
      if (L.win.stride_h == 2) {
        ++strided;
        sizes.push_back(L.out.h);
        CHECK(L.out.c == L.in.c);
      }
    }
    if (L.op == TrainOp::BatchNorm2d) CHECK(L.activation == "relu");
  }
  CHECK(convs == 13);  // 13 convolutions + the classifier: the 14 layers of Figure 5C
  CHECK(bns == 13);
  CHECK(strided == 5);
  CHECK(sizes == std::vector<int>{14, 7, 4, 2, 1});
  CHECK(m.layers.back().op == TrainOp::Linear);
  CHECK(m.layers.back().in.size() == 64);
  CHECK(m.output_size() == 10);

  const TrainNet c = vgg11(Shape3{3, 32, 32, false}, 0.25, "cliprelu_6");
  int pools = 0;
  convs = 0;
  for (const TrainLayer& L : c.layers) {
    pools += L.op == TrainOp::AvgPool2d;
    convs += L.op == TrainOp::Conv2d;
    if (L.op == TrainOp::Conv2d) CHECK(L.win.stride_h == 1);
  }
  CHECK(convs == 8);
  CHECK(pools == 5);
  CHECK(c.layers.back().in.size() == 128);

  CHECK_THROWS_WITH_AS(vgg11(Shape3{1, 32, 32, false}, 1, "relu"), doctest::Contains("arch: vgg11 takes [1, 28, 28]"), ctmc::InputError);
  CHECK_THROWS_WITH_AS(vgg11(Shape3{784, 1, 1, true}, 1, "relu"), doctest::Contains("arch:"), ctmc::InputError);
  CHECK_THROWS_WITH_AS(vgg11(Shape3{1, 28, 28, false}, 0, "relu"), doctest::Contains("width: must be in (0, 16]"), ctmc::InputError);
}

TEST_CASE("train_net: BatchNorm's running statistics move by momentum 0.1 with the unbiased batch variance; eval mode and the folded file agree") {
  const Dataset d = synthetic(Shape3{1, 28, 28, false}, 12, 3, 4);
  TrainNet net = vgg11(Shape3{1, 28, 28, false}, 1.0 / 64, "relu", 3);
  TrainConfig cfg;
  cfg.epochs = 1;
  cfg.batch_size = 12;  // one step on every image
  cfg.seed = 9;
  TrainNet init = net;
  init_train_net(init, cfg.seed);
  const NetTrainResult res = train_net(d, net, cfg);
  // The first BatchNorm's input in that step: the initial first convolution
  // of the images (the batch is the whole set; its order does not matter).
  LayerCache cache;
  Eigen::MatrixXf z;
  train_layer_forward(init.layers[0], d.size(), to_pixel_rows(d.images, init.input), z, cache, true);
  const TrainLayer& bn = res.net.layers[1];
  REQUIRE(bn.op == TrainOp::BatchNorm2d);
  CHECK(bn.num_batches_tracked == 1);
  const double n = double(z.rows());
  for (Eigen::Index c = 0; c < z.cols(); ++c) {
    double mean = 0, ss = 0;
    for (Eigen::Index i = 0; i < z.rows(); ++i) mean += z(i, c);
    mean /= n;
    for (Eigen::Index i = 0; i < z.rows(); ++i) ss += (z(i, c) - mean) * (z(i, c) - mean);
    CHECK(bn.running_mean(c) == doctest::Approx(0.1 * mean).epsilon(1e-5));
    CHECK(bn.running_var(c) == doctest::Approx(0.9 + 0.1 * ss / (n - 1)).epsilon(1e-5));
  }

  // Eval mode (running statistics) in the trainer's layout, against the
  // network read back from its files with BatchNorm folded.
  const Net loaded = train_net_as_loaded(res.net);
  CHECK(loaded.batchnorm_folded == 13);
  const Eigen::MatrixXf a = train_net_eval_logits(res.net, d.images), b = loaded.forward(d.images);
  CHECK((a - b).cwiseAbs().maxCoeff() <= 1e-4 * std::max(1.0f, a.cwiseAbs().maxCoeff()));

  // The files: an unfolded state_dict with num_batches_tracked as I64.
  const auto dir = ctmc::testing::temp_dir();
  const std::string path = (dir / "vgg_rs.json").string();
  save_train_net(path, res.net, {{"arch", "vgg11"}});
  const SafetensorsFile st = read_safetensors((dir / "vgg_rs.safetensors").string());
  CHECK(st.tensors.at("features.1.num_batches_tracked").dtype == "I64");
  CHECK(st.tensors.at("features.1.num_batches_tracked").values == std::vector<double>{1});
  CHECK(st.tensors.at("features.1.running_var").shape == std::vector<std::int64_t>{1});
  CHECK(st.tensors.at("features.0.weight").shape == std::vector<std::int64_t>{1, 1, 3, 3});
  CHECK(st.tensors.count("features.0.bias") == 0);
  CHECK(st.tensors.at("classifier.weight").shape == std::vector<std::int64_t>{3, 8});
  const Net file = load_net(path);
  CHECK(file.predict(d.images) == loaded.predict(d.images));
  CHECK(file.forward(d.images) == loaded.forward(d.images));
}

// Trains vgg11(shape, 1/32, activation) on d with each thread count; the weights' hashes must agree.
void check_thread_independent(const Dataset& d, const Shape3& shape, const std::string& activation, TrainConfig cfg,
                              const std::vector<int>& threads) {
  std::string first;
  for (int t : threads) {
    cfg.threads = t;
    const auto res = train_net(d, vgg11(shape, 1.0 / 32, activation, 4), cfg);
    const std::string h = weights_sha(res.net);
    MESSAGE(res.net.arch << ", width 1/32, threads " << t << ": weights SHA-256 " << h);
    if (first.empty()) first = h;
    CHECK(h == first);
  }
}

TEST_CASE("train_net: the same seed gives bit-identical weights for 1, 2 and 3 threads (both VGG-11 variants)") {
  TrainConfig cfg;
  cfg.epochs = 2;
  cfg.batch_size = 16;
  cfg.seed = 17;
  check_thread_independent(synthetic(Shape3{1, 28, 28, false}, 40, 4, 2), Shape3{1, 28, 28, false}, "relu", cfg, {1, 2, 3});
  cfg.epochs = 1;
  cfg.batch_size = 8;
  check_thread_independent(synthetic(Shape3{3, 32, 32, false}, 24, 3, 3), Shape3{3, 32, 32, false}, "cliprelu_6", cfg, {1, 3});
}

TEST_CASE("train_net: a small VGG-11 overfits a few dozen images; the last batch of one image is left out where BatchNorm sees 1x1") {
  const Dataset d = synthetic(Shape3{1, 28, 28, false}, 33, 4, 6);  // 33 = 2 x 16 + 1
  TrainConfig cfg;
  cfg.epochs = 40;  // BatchNorm's running estimates (momentum 0.1) settle in 80 steps
  cfg.batch_size = 16;
  cfg.learning_rate = 3e-3f;
  cfg.seed = 1;
  const auto res = train_net(d, vgg11(Shape3{1, 28, 28, false}, 1.0 / 16, "relu", 4), cfg);
  const Net net = train_net_as_loaded(res.net);
  const double acc = net.accuracy(d);
  MESSAGE("train accuracy after " << cfg.epochs << " epochs: " << acc << " (loss " << res.epochs.back().mean_loss << ")");
  CHECK(acc >= 0.9);
  CHECK(res.net.layers[1].num_batches_tracked == 2 * cfg.epochs);
}

TEST_CASE("train_net: batches of one image only, where BatchNorm sees 1x1 pixels, are refused before training, naming the option") {
  // Each took no optimisation step and returned the initial weights.
  const Dataset d = synthetic(Shape3{1, 28, 28, false}, 8, 4, 6);
  TrainConfig cfg;
  cfg.epochs = 2;
  cfg.seed = 1;
  const TrainNet net = vgg11(Shape3{1, 28, 28, false}, 1.0 / 32, "relu", 4);
  cfg.batch_size = 1;
  try {
    (void)train_net(d, net, cfg);
    FAIL("a batch of one image was accepted");
  } catch (const ctmc::InputError& e) {
    CHECK(e.input() == "batch_size");
    CHECK(std::string(e.detail()).find("1 cannot train vgg11-strided: BatchNorm layer 'features.") == 0);
    CHECK(std::string(e.detail()).find("sees 1x1 pixels") != std::string::npos);
  }
  cfg.batch_size = 16;
  try {
    (void)train_net(d.head(1), net, cfg);
    FAIL("one training image was accepted");
  } catch (const ctmc::InputError& e) {
    CHECK(e.input() == "data");
    CHECK(std::string(e.detail()).find("1 training image cannot train vgg11-strided") == 0);
  }
  // Two images in a batch of 16 (one batch of two) train: the weights move.
  const auto two = train_net(d.head(2), net, cfg);
  CHECK(two.net.layers[1].num_batches_tracked == cfg.epochs);
}
