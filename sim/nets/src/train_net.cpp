// Layer-graph training (train_net.hpp): forward and backward of every layer
// on pixel-row batches, the VGG-11 builders, Adam, and the state_dict files.
#include "ctmc/sim/nets/train_net.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <tuple>

#include "ctmc/core/errors.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/sim/nets/manifest.hpp"
#include "dense_kernels.hpp"
#include "train_common.hpp"

namespace ctmc::sim {
namespace {

// The manifest's type of each operation, in TrainOp's order.
const char* op_name(TrainOp op) {
  static constexpr const char* kNames[] = {"conv2d", "batchnorm2d", "avgpool2d", "maxpool2d", "flatten", "linear"};
  return kNames[static_cast<int>(op)];
}

std::string at(const TrainNet& net, std::size_t l) {
  const TrainLayer& L = net.layers[l];
  return fmt::format("layer {} ({}{})", l + 1, op_name(L.op), L.name.empty() ? "" : " '" + L.name + "'");
}

int window_out(int n, int k, int stride, int pad) { return (n + 2 * pad - k) / stride + 1; }

// The column of the im2col matrix that input channel c, kernel row u and
// column v fill: PyTorch's [out, in, kh, kw] weight order.
inline int patch_col(const Window2d& w, int c, int u, int v) { return (c * w.kh + u) * w.kw + v; }

// Sums of a column in double, in row order (fixed whatever the threads).
double column_sum(const float* p, Eigen::Index n) {
  double s = 0;
  for (Eigen::Index i = 0; i < n; ++i) s += p[i];
  return s;
}

// ---- convolution ----------------------------------------------------------

void conv_forward(const TrainLayer& L, int B, const Eigen::MatrixXf& x, Eigen::MatrixXf& y, LayerCache& cache) {
  const Shape3 &in = L.in, &out = L.out;
  const Window2d& w = L.win;
  const Eigen::Index IP = Eigen::Index(in.h) * in.w, OP = Eigen::Index(out.h) * out.w;
  Eigen::MatrixXf& P = cache.patches;
  P.resize(B * OP, Eigen::Index(in.c) * w.kh * w.kw);
  // One sample per iteration, each filling its own rows.
#pragma omp parallel for schedule(static) if (B > 1)
  for (int s = 0; s < B; ++s)
    for (int c = 0; c < in.c; ++c)
      for (int u = 0; u < w.kh; ++u)
        for (int v = 0; v < w.kw; ++v) {
          float* dst = P.col(patch_col(w, c, u, v)).data() + s * OP;
          const float* src = x.col(c).data() + s * IP;
          for (int oy = 0; oy < out.h; ++oy) {
            const int iy = oy * w.stride_h + u - w.pad_h;
            for (int ox = 0; ox < out.w; ++ox) {
              const int ix = ox * w.stride_w + v - w.pad_w;
              dst[oy * out.w + ox] = iy >= 0 && iy < in.h && ix >= 0 && ix < in.w ? src[iy * in.w + ix] : 0.0f;
            }
          }
        }
  detail::gemm_nn(y, P, L.weight);
  if (L.has_bias) y.rowwise() += L.bias.transpose();
}

void conv_backward(const TrainLayer& L, int B, const LayerCache& cache, const Eigen::MatrixXf& dy, Eigen::MatrixXf* dx,
                   LayerGrad& g) {
  const Shape3 &in = L.in, &out = L.out;
  const Window2d& w = L.win;
  const Eigen::Index IP = Eigen::Index(in.h) * in.w, OP = Eigen::Index(out.h) * out.w;
  detail::gemm_tn(g.dweight, cache.patches, dy);  // patches^T dy: K x out
  if (L.has_bias) {
    g.dbias.resize(dy.cols());
#pragma omp parallel for schedule(static)
    for (Eigen::Index o = 0; o < dy.cols(); ++o) g.dbias(o) = static_cast<float>(column_sum(dy.col(o).data(), dy.rows()));
  }
  if (!dx) return;
  Eigen::MatrixXf dP;
  detail::gemm_nt(dP, dy, L.weight);  // dy W^T: the gradient of every patch value
  dx->setZero(B * IP, in.c);
  // col2im, one sample per iteration in a fixed order within it.
#pragma omp parallel for schedule(static) if (B > 1)
  for (int s = 0; s < B; ++s)
    for (int c = 0; c < in.c; ++c)
      for (int u = 0; u < w.kh; ++u)
        for (int v = 0; v < w.kw; ++v) {
          const float* src = dP.col(patch_col(w, c, u, v)).data() + s * OP;
          float* dst = dx->col(c).data() + s * IP;
          for (int oy = 0; oy < out.h; ++oy) {
            const int iy = oy * w.stride_h + u - w.pad_h;
            if (iy < 0 || iy >= in.h) continue;
            for (int ox = 0; ox < out.w; ++ox) {
              const int ix = ox * w.stride_w + v - w.pad_w;
              if (ix >= 0 && ix < in.w) dst[iy * in.w + ix] += src[oy * out.w + ox];
            }
          }
        }
}

// ---- BatchNorm --------------------------------------------------------------

void bn_forward(const TrainLayer& L, const Eigen::MatrixXf& x, Eigen::MatrixXf& y, LayerCache& cache, bool training) {
  const Eigen::Index n = x.rows(), C = x.cols();
  cache.mean.assign(std::size_t(C), 0.0);
  cache.var.assign(std::size_t(C), 0.0);
  cache.invstd.assign(std::size_t(C), 0.0);
  cache.xhat.resize(n, C);
  y.resize(n, C);
#pragma omp parallel for schedule(static)
  for (Eigen::Index c = 0; c < C; ++c) {
    const float* xc = x.col(c).data();
    double mean, var;
    if (training) {
      mean = column_sum(xc, n) / double(n);
      double ss = 0;
      for (Eigen::Index i = 0; i < n; ++i) ss += (xc[i] - mean) * (xc[i] - mean);
      var = ss / double(n);
    } else {
      mean = L.running_mean(c);
      var = L.running_var(c);
    }
    const double invstd = 1.0 / std::sqrt(var + L.eps);
    const float gamma = L.weight(c, 0), beta = L.bias(c);
    float* xh = cache.xhat.col(c).data();
    float* yc = y.col(c).data();
    for (Eigen::Index i = 0; i < n; ++i) {
      xh[i] = static_cast<float>((xc[i] - mean) * invstd);
      yc[i] = gamma * xh[i] + beta;
    }
    cache.mean[std::size_t(c)] = mean;
    cache.var[std::size_t(c)] = var;
    cache.invstd[std::size_t(c)] = invstd;
  }
}

// Training mode: dx = gamma invstd / n (n dy - sum dy - xhat sum(dy xhat)),
// the gradient through the batch statistics; evaluation mode: gamma invstd dy.
void bn_backward(const TrainLayer& L, const LayerCache& cache, const Eigen::MatrixXf& dy, Eigen::MatrixXf* dx, LayerGrad& g,
                 bool training) {
  const Eigen::Index n = dy.rows(), C = dy.cols();
  g.dweight.resize(C, 1);
  g.dbias.resize(C);
  if (dx) dx->resize(n, C);
#pragma omp parallel for schedule(static)
  for (Eigen::Index c = 0; c < C; ++c) {
    const float* d = dy.col(c).data();
    const float* xh = cache.xhat.col(c).data();
    double sum_dy = 0, sum_dy_xhat = 0;
    for (Eigen::Index i = 0; i < n; ++i) {
      sum_dy += d[i];
      sum_dy_xhat += double(d[i]) * xh[i];
    }
    g.dweight(c, 0) = static_cast<float>(sum_dy_xhat);
    g.dbias(c) = static_cast<float>(sum_dy);
    if (!dx) continue;
    const double k = double(L.weight(c, 0)) * cache.invstd[std::size_t(c)];
    float* o = dx->col(c).data();
    if (training) {
      const double mean_dy = sum_dy / double(n), mean_dy_xhat = sum_dy_xhat / double(n);
      for (Eigen::Index i = 0; i < n; ++i) o[i] = static_cast<float>(k * (d[i] - mean_dy - xh[i] * mean_dy_xhat));
    } else {
      for (Eigen::Index i = 0; i < n; ++i) o[i] = static_cast<float>(k * d[i]);
    }
  }
}

// ---- pooling ----------------------------------------------------------------

// Calls f(input row offset within the sample, weight) for each pixel of
// output (oy, ox)'s window inside the image; returns the average's divisor.
template <class F>
int pool_window(const TrainLayer& L, int oy, int ox, F&& f) {
  const Window2d& w = L.win;
  const int y0 = oy * w.stride_h - w.pad_h, x0 = ox * w.stride_w - w.pad_w;
  int inside = 0;
  for (int iy = std::max(y0, 0); iy < std::min(y0 + w.kh, L.in.h); ++iy)
    for (int ix = std::max(x0, 0); ix < std::min(x0 + w.kw, L.in.w); ++ix, ++inside) f(iy * L.in.w + ix);
  // torch's divisor with count_include_pad: the window clipped to the padded image.
  const int hy = std::min(y0 + w.kh, L.in.h + w.pad_h) - y0, hx = std::min(x0 + w.kw, L.in.w + w.pad_w) - x0;
  return L.count_include_pad ? hy * hx : inside;
}

void pool_forward(const TrainLayer& L, int B, const Eigen::MatrixXf& x, Eigen::MatrixXf& y, LayerCache& cache) {
  const Eigen::Index IP = Eigen::Index(L.in.h) * L.in.w, OP = Eigen::Index(L.out.h) * L.out.w;
  const bool is_max = L.op == TrainOp::MaxPool2d;
  y.resize(B * OP, L.in.c);
  if (is_max) cache.argmax.assign(std::size_t(y.size()), 0);
#pragma omp parallel for schedule(static) if (B > 1)
  for (int s = 0; s < B; ++s)
    for (int c = 0; c < L.in.c; ++c) {
      const float* src = x.col(c).data() + s * IP;
      for (int oy = 0; oy < L.out.h; ++oy)
        for (int ox = 0; ox < L.out.w; ++ox) {
          const Eigen::Index r = s * OP + oy * L.out.w + ox;
          float acc = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
          int best = -1;
          const int div = pool_window(L, oy, ox, [&](int i) {
            if (!is_max) acc += src[i];
            else if (src[i] > acc || best < 0) acc = src[i], best = i;
          });
          y(r, c) = is_max ? acc : acc / static_cast<float>(div);
          if (is_max) cache.argmax[std::size_t(c * y.rows() + r)] = static_cast<int>(s * IP + best);
        }
    }
}

void pool_backward(const TrainLayer& L, int B, const LayerCache& cache, const Eigen::MatrixXf& dy, Eigen::MatrixXf& dx) {
  const Eigen::Index IP = Eigen::Index(L.in.h) * L.in.w, OP = Eigen::Index(L.out.h) * L.out.w;
  const bool is_max = L.op == TrainOp::MaxPool2d;
  dx.setZero(B * IP, L.in.c);
#pragma omp parallel for schedule(static) if (B > 1)
  for (int s = 0; s < B; ++s)
    for (int c = 0; c < L.in.c; ++c)
      for (int oy = 0; oy < L.out.h; ++oy)
        for (int ox = 0; ox < L.out.w; ++ox) {
          const Eigen::Index r = s * OP + oy * L.out.w + ox;
          if (is_max) {
            dx(cache.argmax[std::size_t(c * dy.rows() + r)], c) += dy(r, c);
            continue;
          }
          const int div = pool_window(L, oy, ox, [](int) {});
          const float g = dy(r, c) / static_cast<float>(div);
          pool_window(L, oy, ox, [&](int i) { dx(s * IP + i, c) += g; });
        }
}

// ---- linear -------------------------------------------------------------------

void linear_backward(const TrainLayer& L, const Eigen::MatrixXf& x, const Eigen::MatrixXf& dy, Eigen::MatrixXf* dx, LayerGrad& g) {
  detail::gemm_nt(g.dweight, dy, x);
  if (L.has_bias) {
    g.dbias.resize(dy.rows());
#pragma omp parallel for schedule(static)
    for (Eigen::Index o = 0; o < dy.rows(); ++o) {
      double s = 0;
      for (Eigen::Index k = 0; k < dy.cols(); ++k) s += dy(o, k);
      g.dbias(o) = static_cast<float>(s);
    }
  }
  if (dx) detail::gemm_tn(*dx, L.weight, dy);
}

}  // namespace

// ---- layouts -------------------------------------------------------------------

Eigen::MatrixXf to_pixel_rows(const Eigen::MatrixXf& cols, const Shape3& s) {
  const Eigen::Index P = Eigen::Index(s.h) * s.w, B = cols.cols();
  Eigen::MatrixXf out(B * P, s.c);
  for (int c = 0; c < s.c; ++c)
    for (Eigen::Index k = 0; k < B; ++k) out.col(c).segment(k * P, P) = cols.col(k).segment(c * P, P);
  return out;
}

Eigen::MatrixXf to_sample_columns(const Eigen::MatrixXf& rows, const Shape3& s) {
  const Eigen::Index P = Eigen::Index(s.h) * s.w, B = rows.rows() / std::max<Eigen::Index>(P, 1);
  Eigen::MatrixXf out(P * s.c, B);
  for (int c = 0; c < s.c; ++c)
    for (Eigen::Index k = 0; k < B; ++k) out.col(k).segment(c * P, P) = rows.col(c).segment(k * P, P);
  return out;
}

// ---- layers -------------------------------------------------------------------

void train_layer_forward(const TrainLayer& L, int B, const Eigen::MatrixXf& x, Eigen::MatrixXf& y, LayerCache& cache,
                         bool training) {
  switch (L.op) {
    case TrainOp::Conv2d: conv_forward(L, B, x, y, cache); break;
    case TrainOp::BatchNorm2d: bn_forward(L, x, y, cache, training); break;
    case TrainOp::AvgPool2d:
    case TrainOp::MaxPool2d: pool_forward(L, B, x, y, cache); break;
    case TrainOp::Flatten: y = to_sample_columns(x, L.in); break;
    case TrainOp::Linear:
      detail::gemm_nn(y, L.weight, x);
      if (L.has_bias) y.colwise() += L.bias;
      break;
  }
  if (L.activation == "linear") cache.dphi.resize(0, 0);
  else detail::activate(detail::resolve_activation(L.activation), y, &cache.dphi);
}

namespace {
void layer_backward(const TrainLayer& L, int B, const Eigen::MatrixXf& x, const LayerCache& cache, Eigen::MatrixXf& dy,
                    Eigen::MatrixXf* dx, LayerGrad& g, bool training) {
  if (cache.dphi.size() > 0) dy.array() *= cache.dphi.array();
  switch (L.op) {
    case TrainOp::Conv2d: conv_backward(L, B, cache, dy, dx, g); break;
    case TrainOp::BatchNorm2d: bn_backward(L, cache, dy, dx, g, training); break;
    case TrainOp::AvgPool2d:
    case TrainOp::MaxPool2d:
      if (dx) pool_backward(L, B, cache, dy, *dx);
      break;
    case TrainOp::Flatten:
      if (dx) *dx = to_pixel_rows(dy, L.in);
      break;
    case TrainOp::Linear: linear_backward(L, x, dy, dx, g); break;
  }
}
}  // namespace

void train_layer_backward(const TrainLayer& L, int B, const Eigen::MatrixXf& x, const LayerCache& cache, Eigen::MatrixXf& dy,
                          Eigen::MatrixXf* dx, LayerGrad& g) {
  const ctmc::EigenThreadScope eigen_serial(1);  // dense_kernels.hpp
  layer_backward(L, B, x, cache, dy, dx, g, true);
}

// ---- the network ----------------------------------------------------------------

void TrainNet::infer_shapes(const std::string& what) {
  if (layers.empty()) throw InputError(what, "network has no layers");
  Shape3 s = input;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    TrainLayer& L = layers[l];
    const std::string where = at(*this, l);
    L.in = s;
    const bool image_op = L.op == TrainOp::Conv2d || L.op == TrainOp::BatchNorm2d || L.op == TrainOp::AvgPool2d ||
                          L.op == TrainOp::MaxPool2d || L.op == TrainOp::Flatten;
    if (image_op && s.flat) throw InputError(what, where + " needs an image input [C, H, W], got the flat " + s.text());
    if (L.op == TrainOp::Linear && !s.flat) throw InputError(what, where + " is given the image " + s.text() + ": flatten it first");
    if (L.op == TrainOp::Conv2d || L.op == TrainOp::AvgPool2d || L.op == TrainOp::MaxPool2d) {
      const Window2d& w = L.win;
      if (w.kh < 1 || w.kw < 1 || w.stride_h < 1 || w.stride_w < 1 || w.pad_h < 0 || w.pad_w < 0)
        throw InputError(what, where + " needs a kernel and stride of at least 1 and padding of at least 0");
      if (w.kh > s.h + 2 * w.pad_h || w.kw > s.w + 2 * w.pad_w)
        throw InputError(what, fmt::format("{}: its {}x{} kernel is larger than its padded input {}x{}", where, w.kh, w.kw,
                                           s.h + 2 * w.pad_h, s.w + 2 * w.pad_w));
      // torch refuses it: a pooling window wholly inside the padding has no pixel.
      if (L.op != TrainOp::Conv2d && (2 * w.pad_h > w.kh || 2 * w.pad_w > w.kw))
        throw InputError(what, where + ": padding is more than half its kernel");
      const int c = L.op == TrainOp::Conv2d ? L.out_features : s.c;
      if (c < 1) throw InputError(what, where + " has no output channels");
      s = Shape3{c, window_out(s.h, w.kh, w.stride_h, w.pad_h), window_out(s.w, w.kw, w.stride_w, w.pad_w), false};
    } else if (L.op == TrainOp::Flatten) {
      s = Shape3{static_cast<int>(s.size()), 1, 1, true};
    } else if (L.op == TrainOp::Linear) {
      if (L.out_features < 1) throw InputError(what, where + " has no outputs");
      s = Shape3{L.out_features, 1, 1, true};
    }
    L.out = s;
    if (L.activation != "linear") (void)detail::resolve_activation(L.activation);
  }
  if (!s.flat) throw InputError(what, "the network's output is the image " + s.text() + ": end it with flatten and linear");
  if (layers.back().activation != "linear") throw InputError(what, "the last layer must be linear (its outputs are the logits)");
}

void init_train_net(TrainNet& net, std::uint64_t seed) {
  net.infer_shapes("network");
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    TrainLayer& L = net.layers[l];
    if (L.op == TrainOp::BatchNorm2d) {
      const int C = L.in.c;
      L.weight = Eigen::MatrixXf::Ones(C, 1);
      L.bias = Eigen::VectorXf::Zero(C);
      L.running_mean = Eigen::VectorXf::Zero(C);
      L.running_var = Eigen::VectorXf::Ones(C);
      L.num_batches_tracked = 0;
      continue;
    }
    if (L.op != TrainOp::Conv2d && L.op != TrainOp::Linear) continue;
    const bool conv = L.op == TrainOp::Conv2d;
    const int fan_in = conv ? L.in.c * L.win.kh * L.win.kw : static_cast<int>(L.in.size());
    const float bound = 1.0f / std::sqrt(float(fan_in));
    auto g = detail::stream_rng(seed, detail::kInitStream, l);
    if (conv) {
      // K x out column-major is the [out, in, kh, kw] tensor's row-major order.
      L.weight.resize(fan_in, L.out_features);
      for (Eigen::Index i = 0; i < L.weight.size(); ++i) L.weight.data()[i] = detail::uniform(g, -bound, bound);
    } else {
      L.weight.resize(L.out_features, fan_in);
      for (Eigen::Index i = 0; i < L.weight.rows(); ++i)
        for (Eigen::Index j = 0; j < L.weight.cols(); ++j) L.weight(i, j) = detail::uniform(g, -bound, bound);
    }
    L.bias.resize(L.has_bias ? L.out_features : 0);
    for (Eigen::Index i = 0; i < L.bias.size(); ++i) L.bias(i) = detail::uniform(g, -bound, bound);
  }
}

std::vector<int> vgg11_channels(double width) {
  std::vector<int> out;
  for (int c : {64, 128, 256, 256, 512, 512, 512, 512}) out.push_back(std::max(1, static_cast<int>(std::lround(c * width))));
  return out;
}

TrainNet vgg11(const Shape3& input, double width, const std::string& activation, int classes) {
  if (!(width > 0 && width <= 16)) throw InputError("width", fmt::format("must be in (0, 16] (a scale of VGG-11's channels), got {:g}", width));
  const bool strided = !input.flat && input.c == 1 && input.h == 28 && input.w == 28;
  const bool cifar = !input.flat && input.c == 3 && input.h == 32 && input.w == 32;
  if (!strided && !cifar)
    throw InputError("arch", fmt::format("vgg11 takes [1, 28, 28] images (MNIST family: the strided-convolution VGG-11) or [3, "
                                         "32, 32] (CIFAR-10), not {}",
                                         input.text()));
  TrainNet net;
  net.input = input;
  net.arch = strided ? "vgg11-strided" : "vgg11-cifar";
  int module = 0, channels = input.c;
  const auto conv_bn_act = [&](int out, int stride) {
    TrainLayer conv;
    conv.op = TrainOp::Conv2d;
    conv.name = fmt::format("features.{}", module++);
    conv.win = Window2d{3, 3, stride, stride, 1, 1};
    conv.has_bias = false;
    conv.out_features = out;
    TrainLayer bn;
    bn.op = TrainOp::BatchNorm2d;
    bn.name = fmt::format("features.{}", module++);
    bn.activation = activation;
    bn.activation_module = fmt::format("features.{}", module++);
    net.layers.push_back(std::move(conv));
    net.layers.push_back(std::move(bn));
    channels = out;
  };
  const std::vector<int> ch = vgg11_channels(width);
  for (std::size_t i = 0; i < ch.size(); ++i) {
    conv_bn_act(ch[i], 1);
    if (i == 0 || i == 1 || i == 3 || i == 5 || i == 7) {  // the plan's M
      if (strided) {
        conv_bn_act(channels, 2);
      } else {
        TrainLayer pool;
        pool.op = TrainOp::AvgPool2d;
        pool.name = fmt::format("features.{}", module++);
        pool.win = Window2d{2, 2, 2, 2, 0, 0};
        net.layers.push_back(std::move(pool));
      }
    }
  }
  TrainLayer flat;
  flat.op = TrainOp::Flatten;
  flat.name = "flatten";
  net.layers.push_back(std::move(flat));
  TrainLayer fc;
  fc.op = TrainOp::Linear;
  fc.name = "classifier";
  fc.out_features = classes;
  net.layers.push_back(std::move(fc));
  net.infer_shapes("vgg11");
  return net;
}

namespace {

struct Workspace {
  std::vector<Eigen::MatrixXf> A;  // A[0] the input (pixel rows or flat), A[l+1] layer l's output
  std::vector<LayerCache> caches;
  std::vector<LayerGrad> grads;
  Eigen::MatrixXf G, dx;
  double loss = 0;
  int correct = 0;
};

void check_batch(const TrainNet& net, const Eigen::MatrixXf& x, const std::vector<int>& labels) {
  if (x.rows() != net.input_size())
    throw InputError("data", fmt::format("images have {} values, the network takes {} ({})", x.rows(), net.input_size(), net.input.text()));
  if (static_cast<Eigen::Index>(labels.size()) != x.cols() || x.cols() == 0)
    throw InputError("labels", "need one label per image (and at least one image)");
  for (int y : labels)
    if (y < 0 || y >= net.output_size()) throw InputError("labels", fmt::format("label {} is outside 0..{}", y, net.output_size() - 1));
}

// Forward in training mode, loss, backward; dinput when want_dinput.
void run_batch(const TrainNet& net, const Eigen::MatrixXf& x, const std::vector<int>& labels, Workspace& ws, bool want_dinput) {
  const std::size_t L = net.layers.size();
  const int B = static_cast<int>(x.cols());
  ws.A.resize(L + 1);
  ws.caches.resize(L);
  ws.grads.resize(L);
  ws.A[0] = net.input.flat ? x : to_pixel_rows(x, net.input);
  for (std::size_t l = 0; l < L; ++l) train_layer_forward(net.layers[l], B, ws.A[l], ws.A[l + 1], ws.caches[l], true);
  std::tie(ws.loss, ws.correct) = detail::softmax_cross_entropy(ws.A[L], labels, ws.G);
  for (std::size_t l = L; l-- > 0;) {
    const bool need_dx = l > 0 || want_dinput;
    layer_backward(net.layers[l], B, ws.A[l], ws.caches[l], ws.G, need_dx ? &ws.dx : nullptr, ws.grads[l], true);
    if (need_dx) std::swap(ws.G, ws.dx);
  }
}

}  // namespace

NetLossGradients train_net_loss_gradients(const TrainNet& net, const Eigen::MatrixXf& x, const std::vector<int>& labels) {
  check_batch(net, x, labels);
  const ctmc::EigenThreadScope eigen_serial(1);  // dense_kernels.hpp
  Workspace ws;
  run_batch(net, x, labels, ws, true);
  NetLossGradients out;
  out.loss = ws.loss;
  out.correct = ws.correct;
  out.grads = std::move(ws.grads);
  out.caches = std::move(ws.caches);
  out.dinput = net.input.flat ? ws.G : to_sample_columns(ws.G, net.input);
  return out;
}

Eigen::MatrixXf train_net_eval_logits(const TrainNet& net, const Eigen::MatrixXf& x) {
  if (x.rows() != net.input_size()) throw InputError("data", "images do not have the network's input size");
  const ctmc::EigenThreadScope eigen_serial(1);
  Eigen::MatrixXf a = net.input.flat ? x : to_pixel_rows(x, net.input), b;
  LayerCache cache;
  for (const TrainLayer& L : net.layers) {
    train_layer_forward(L, static_cast<int>(x.cols()), a, b, cache, false);
    std::swap(a, b);
  }
  return a;
}

namespace {

// Adam's moments, shaped as each layer's parameters, and its step count.
struct NetAdam {
  std::vector<LayerGrad> m, v;
  std::int64_t step = 0;
  explicit NetAdam(const TrainNet& net) : m(net.layers.size()) {
    for (std::size_t l = 0; l < net.layers.size(); ++l) {
      m[l].dweight = Eigen::MatrixXf::Zero(net.layers[l].weight.rows(), net.layers[l].weight.cols());
      m[l].dbias = Eigen::VectorXf::Zero(net.layers[l].bias.size());
    }
    v = m;
  }
};

// One optimiser step after run_batch on a batch of B images: Adam on every
// parameter, and BatchNorm's running estimates as torch.nn.BatchNorm2d
// moves them, running <- (1 - momentum) running + momentum batch, with the
// unbiased variance of the batch's B*H*W values per channel.
void apply_step(TrainNet& net, const Workspace& ws, NetAdam& adam, const TrainConfig& cfg, int B) {
  const auto [step_size, inv_sqrt_bc2] = detail::adam_step_factors(cfg, ++adam.step);
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    TrainLayer& Lr = net.layers[l];
    if (!Lr.trainable()) continue;
    const LayerGrad& g = ws.grads[l];
    detail::adam_update(Lr.weight.data(), g.dweight.data(), adam.m[l].dweight.data(), adam.v[l].dweight.data(), Lr.weight.size(), cfg,
                        step_size, inv_sqrt_bc2);
    detail::adam_update(Lr.bias.data(), g.dbias.data(), adam.m[l].dbias.data(), adam.v[l].dbias.data(), Lr.bias.size(), cfg, step_size,
                        inv_sqrt_bc2);
    if (Lr.op != TrainOp::BatchNorm2d) continue;
    const double count = double(B) * Lr.in.h * Lr.in.w, mom = Lr.momentum;
    const LayerCache& c = ws.caches[l];
    for (int ch = 0; ch < Lr.in.c; ++ch) {
      Lr.running_mean(ch) = static_cast<float>((1 - mom) * Lr.running_mean(ch) + mom * c.mean[std::size_t(ch)]);
      Lr.running_var(ch) = static_cast<float>((1 - mom) * Lr.running_var(ch) + mom * c.var[std::size_t(ch)] * count / (count - 1));
    }
    ++Lr.num_batches_tracked;
  }
}

// BatchNorm's smallest count of values per channel in a batch of one image.
long long min_batchnorm_pixels(const TrainNet& net) {
  long long out = std::numeric_limits<long long>::max();
  for (const TrainLayer& L : net.layers)
    if (L.op == TrainOp::BatchNorm2d) out = std::min(out, static_cast<long long>(L.in.h) * L.in.w);
  return out;
}

}  // namespace

void check_some_batch_trains(const TrainNet& net, const Dataset& d, const TrainConfig& cfg) {
  if (min_batchnorm_pixels(net) != 1 || (cfg.batch_size > 1 && d.size() > 1)) return;
  const auto it = std::find_if(net.layers.begin(), net.layers.end(), [](const TrainLayer& L) {
    return L.op == TrainOp::BatchNorm2d && L.in.h == 1 && L.in.w == 1;
  });
  const std::string why = fmt::format(
      "BatchNorm layer '{}' sees 1x1 pixels, so a batch of one image has one value per channel and no batch "
      "variance (torch refuses such a batch too): no optimisation step could be taken",
      it->name);
  const std::string what = net.arch.empty() ? "this network" : net.arch;
  if (cfg.batch_size == 1) throw InputError("batch_size", fmt::format("1 cannot train {}: {}; give 2 or more", what, why));
  throw InputError("data", fmt::format("1 training image cannot train {}: {}; give 2 or more training images (--train-limit)",
                                       what, why));
}

namespace {

EpochStats train_epoch(TrainNet& net, const Dataset& d, const TrainConfig& cfg, int epoch, NetAdam& adam, Workspace& ws) {
  // A batch with a single value per channel has no variance (torch refuses
  // it): such a batch (a last batch of one image when a BatchNorm sees 1x1
  // pixels) is left out of its epoch.
  const bool skip_single = min_batchnorm_pixels(net) == 1;
  std::vector<int> order, labels;
  detail::epoch_order(order, d.size(), cfg.seed, epoch);
  Eigen::MatrixXf X;
  double loss_sum = 0;
  long long correct = 0, seen = 0;
  const int batches = (d.size() + cfg.batch_size - 1) / cfg.batch_size;
  for (int bi = 0; bi < batches; ++bi) {
    const int start = bi * cfg.batch_size, B = std::min(cfg.batch_size, d.size() - start);
    if (B == 1 && skip_single) continue;
    detail::gather_batch(d, order, start, B, X, labels);
    run_batch(net, X, labels, ws, false);
    apply_step(net, ws, adam, cfg, B);
    loss_sum += ws.loss * B;
    correct += ws.correct;
    seen += B;
    if (cfg.progress && (bi % 8 == 0 || bi + 1 == batches)) detail::draw_progress(epoch, cfg.epochs, bi + 1, batches, loss_sum / double(seen));
  }
  return {epoch, loss_sum / double(std::max(seen, 1LL)), double(correct) / double(std::max(seen, 1LL))};
}

}  // namespace

TrainMemory train_net_memory(const TrainNet& net, int batch, int threads) {
  TrainMemory m;
  const double B = batch;
  constexpr double kScored = 256;  // Net::predict's images per forward pass
  double scoring = 0;
  double kept = B * static_cast<double>(net.input.size()) * 2;  // the gathered batch and its pixel rows
  double largest_patches = 0, largest_layer = 0;
  for (const TrainLayer& L : net.layers) {
    const double in = static_cast<double>(L.in.size()), out = static_cast<double>(L.out.size());
    kept += B * out;
    if (L.activation != "linear") kept += B * out;  // phi'
    switch (L.op) {
      case TrainOp::Conv2d: {
        const double k = double(L.in.c) * L.win.kh * L.win.kw;
        const double patches = B * double(L.out.h) * L.out.w * k;
        kept += patches;
        largest_patches = std::max(largest_patches, patches);
        m.parameters += k * L.out_features + (L.has_bias ? L.out_features : 0);
        m.largest_layer = std::max(m.largest_layer, k * L.out_features);
        scoring = std::max(scoring, kScored * (in + out) + std::min<double>(std::max(threads, 1), kScored) *
                                                               double(L.out.h) * L.out.w * k);
        break;
      }
      case TrainOp::BatchNorm2d:
        kept += B * in;
        m.parameters += 4.0 * L.in.c;
        break;
      case TrainOp::MaxPool2d: kept += B * out; break;  // argmax, one int per output value
      case TrainOp::Linear:
        m.parameters += in * L.out_features + (L.has_bias ? L.out_features : 0);
        m.largest_layer = std::max(m.largest_layer, in * L.out_features);
        break;
      default: break;
    }
    largest_layer = std::max({largest_layer, B * in, B * out});
    scoring = std::max(scoring, kScored * (in + out));
  }
  m.batch_bytes = 4.0 * (kept + largest_patches + 2 * largest_layer);
  m.evaluation_bytes = 4.0 * scoring;
  return m;
}

NetTrainResult train_net(const Dataset& d, TrainNet net, const TrainConfig& cfg) {
  net.infer_shapes("network");
  detail::check_training(d, cfg, net.output_size());
  if (d.features() != net.input_size() ||
      (!net.input.flat && (d.channels != net.input.c || d.rows != net.input.h || d.cols != net.input.w)))
    throw InputError("data", fmt::format("images are [{}, {}, {}] (C, H, W), the network takes {}", d.channels, d.rows, d.cols,
                                         net.input.text()));
  check_some_batch_trains(net, d, cfg);
  init_train_net(net, cfg.seed);

  const ctmc::ThreadScope threads(cfg.threads);
  const ctmc::EigenThreadScope eigen_serial(1);  // dense_kernels.hpp
  NetAdam adam(net);
  Workspace ws;
  NetTrainResult res;
  const auto t0 = std::chrono::steady_clock::now();
  for (int epoch = 1; epoch <= cfg.epochs; ++epoch) res.epochs.push_back(train_epoch(net, d, cfg, epoch, adam, ws));
  if (cfg.progress) std::fprintf(stderr, "\n");
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const TrainLayer& L : net.layers)
    if (!L.weight.allFinite() || !L.bias.allFinite() || !L.running_var.allFinite())
      throw InputError("train: the weights diverged to non-finite values (lower the learning rate)");
  res.net = std::move(net);
  return res;
}

// ---- files ------------------------------------------------------------------------

namespace {
Tensor f32(std::vector<std::int64_t> shape, const float* p, Eigen::Index n) {
  Tensor t;
  t.shape = std::move(shape);
  t.values.assign(p, p + n);
  return t;
}
nlohmann::json hw_pair(int a, int b) { return nlohmann::json::array({a, b}); }
}  // namespace

nlohmann::json train_net_manifest(const TrainNet& net, SafetensorsFile& st, const nlohmann::json& meta) {
  using nlohmann::json;
  st = SafetensorsFile{};
  st.metadata["format"] = "pt";  // as safetensors.torch.save_file writes
  json layers = json::array();
  for (const TrainLayer& L : net.layers) {
    json j = {{"type", op_name(L.op)}};
    if (!L.name.empty()) j["name"] = L.name;
    const std::string w = L.name + ".weight", b = L.name + ".bias";
    switch (L.op) {
      case TrainOp::Conv2d:
        j["weight"] = w;
        st.tensors[w] = f32({L.out_features, L.in.c, L.win.kh, L.win.kw}, L.weight.data(), L.weight.size());
        if (L.has_bias) {
          j["bias"] = b;
          st.tensors[b] = f32({L.out_features}, L.bias.data(), L.bias.size());
        }
        j["in_channels"] = L.in.c;
        j["out_channels"] = L.out_features;
        j["kernel_size"] = hw_pair(L.win.kh, L.win.kw);
        j["stride"] = hw_pair(L.win.stride_h, L.win.stride_w);
        j["padding"] = hw_pair(L.win.pad_h, L.win.pad_w);
        break;
      case TrainOp::BatchNorm2d: {
        const std::int64_t C = L.in.c;
        for (const char* k : {"weight", "bias", "running_mean", "running_var"}) j[k] = L.name + "." + k;
        st.tensors[w] = f32({C}, L.weight.data(), C);
        st.tensors[b] = f32({C}, L.bias.data(), C);
        st.tensors[L.name + ".running_mean"] = f32({C}, L.running_mean.data(), C);
        st.tensors[L.name + ".running_var"] = f32({C}, L.running_var.data(), C);
        st.tensors[L.name + ".num_batches_tracked"] = Tensor{"I64", {}, {double(L.num_batches_tracked)}};
        j["num_features"] = C;
        j["eps"] = L.eps;
        break;
      }
      case TrainOp::AvgPool2d:
      case TrainOp::MaxPool2d:
        j["kernel_size"] = hw_pair(L.win.kh, L.win.kw);
        j["stride"] = hw_pair(L.win.stride_h, L.win.stride_w);
        j["padding"] = hw_pair(L.win.pad_h, L.win.pad_w);
        if (L.op == TrainOp::AvgPool2d) j["count_include_pad"] = L.count_include_pad;
        break;
      case TrainOp::Flatten: break;
      case TrainOp::Linear: {
        const Eigen::Index O = L.weight.rows(), I = L.weight.cols();
        const Eigen::MatrixXf rowmajor = L.weight.transpose();  // [out, in] row-major
        j["weight"] = w;
        st.tensors[w] = f32({O, I}, rowmajor.data(), rowmajor.size());
        if (L.has_bias) {
          j["bias"] = b;
          st.tensors[b] = f32({O}, L.bias.data(), L.bias.size());
        }
        j["in"] = I;
        j["out"] = O;
        break;
      }
    }
    layers.push_back(std::move(j));
    if (L.activation != "linear") {
      json a = {{"type", "activation"}, {"activation", L.activation}};
      if (!L.activation_module.empty()) a["name"] = L.activation_module;
      layers.push_back(std::move(a));
    }
  }
  json input = net.input.flat ? json::array({net.input.c}) : json::array({net.input.c, net.input.h, net.input.w});
  return {{"format", "ctmc-snn-mlp"}, {"version", 1}, {"weights", ""}, {"weights_sha256", ""}, {"input", input},
          {"layers", layers}, {"meta", meta}};
}

Net train_net_as_loaded(const TrainNet& net) {
  SafetensorsFile st;
  const nlohmann::json m = train_net_manifest(net, st, nlohmann::json::object());
  return net_from_manifest(m, st, "trained network", "trained network weights");
}

void save_train_net(const std::string& manifest_path, const TrainNet& net, const nlohmann::json& meta) {
  SafetensorsFile st;
  nlohmann::json m = train_net_manifest(net, st, meta);
  save_manifest(manifest_path, std::move(m), st);
}

}  // namespace ctmc::sim
