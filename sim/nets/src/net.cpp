// Layer graphs (net.hpp): shape inference, the ANN forward pass and the
// BatchNorm fold.
#include "ctmc/sim/nets/net.hpp"
#include "prediction.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ctmc/core/errors.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/core/quote.hpp"
#include "dense_kernels.hpp"
#include "ctmc/core/loop_errors.hpp"

namespace ctmc::sim {

std::string Shape3::text() const { return flat ? fmt::format("[{}]", c) : fmt::format("[{}, {}, {}]", c, h, w); }

const char* layer_kind_name(LayerKind k) {
  switch (k) {
    case LayerKind::Dense: return "dense";
    case LayerKind::Conv2d: return "conv2d";
    case LayerKind::AvgPool2d: return "avgpool2d";
    case LayerKind::MaxPool2d: return "maxpool2d";
    case LayerKind::Flatten: return "flatten";
    case LayerKind::Activation: return "activation";
  }
  return "?";
}

std::string layer_label(const Net& net, std::size_t l) {
  const NetLayer& L = net.layers[l];
  const std::string name = L.name.empty() ? "" : " " + quote_excerpt(L.name);
  // Numbered as the manifest lists them (merged activations and folded
  // BatchNorms leave gaps), from 1 as everywhere in the tool.
  if (L.source_index >= 0)
    return fmt::format("layer {} (layers[{}], {}{})", L.source_index + 1, L.source_index, layer_kind_name(L.kind), name);
  return fmt::format("layer {} ({}{})", l + 1, layer_kind_name(L.kind), name);
}

namespace {

std::string label(const Net& net, std::size_t l) { return layer_label(net, l); }

// Output extent of a window sliding over n pixels (floor mode, as PyTorch's
// default ceil_mode = False).
int window_out(int n, int k, int stride, int pad) { return (n + 2 * pad - k) / stride + 1; }

void check_window(const std::string& what, const std::string& at, const Shape3& in, const Window2d& w, bool pooling) {
  if (in.flat) throw InputError(what, at + " needs an image input [C, H, W], got the flat " + in.text());
  if (w.kh < 1 || w.kw < 1 || w.stride_h < 1 || w.stride_w < 1 || w.pad_h < 0 || w.pad_w < 0)
    throw InputError(what, at + " needs a kernel and stride of at least 1 and padding of at least 0");
  if (w.kh > in.h + 2 * w.pad_h || w.kw > in.w + 2 * w.pad_w)
    throw InputError(what, fmt::format("{}: its {}x{} kernel is larger than its padded input {}x{} ({}x{} with padding {},{})", at,
                                       w.kh, w.kw, in.h + 2 * w.pad_h, in.w + 2 * w.pad_w, in.h, in.w, w.pad_h, w.pad_w));
  // torch refuses it: a window wholly inside the padding has no pixel.
  if (pooling && (2 * w.pad_h > w.kh || 2 * w.pad_w > w.kw))
    throw InputError(what, fmt::format("{}: padding {},{} is more than half its {}x{} kernel", at, w.pad_h, w.pad_w, w.kh, w.kw));
}

bool all_finite(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

// One sample of a convolution: in (C x H x W) -> out (O x OH x OW), both
// C-H-W order. im2col into a (OH*OW) x (C*kh*kw) patch matrix times W^T gives
// the output as (OH*OW) x O column-major, i.e. channel-major: C-H-W order.
void conv_sample(const Conv2d& cv, const Shape3& in, const Shape3& out, const float* x, float* y,
                 Eigen::MatrixXf& patches, const Eigen::MatrixXf& Wt) {
  const Window2d& w = cv.win;
  const int P = out.h * out.w, K = cv.in_channels * w.kh * w.kw;
  patches.resize(P, K);
  for (int i = 0; i < cv.in_channels; ++i)
    for (int u = 0; u < w.kh; ++u)
      for (int v = 0; v < w.kw; ++v) {
        float* col = patches.col((i * w.kh + u) * w.kw + v).data();
        for (int oy = 0; oy < out.h; ++oy) {
          const int iy = oy * w.stride_h + u - w.pad_h;
          for (int ox = 0; ox < out.w; ++ox) {
            const int ix = ox * w.stride_w + v - w.pad_w;
            col[oy * out.w + ox] = iy >= 0 && iy < in.h && ix >= 0 && ix < in.w ? x[(i * in.h + iy) * in.w + ix] : 0.0f;
          }
        }
      }
  Eigen::Map<Eigen::MatrixXf> Y(y, P, cv.out_channels);
  Y.noalias() = patches * Wt;
  for (int o = 0; o < cv.out_channels; ++o) Y.col(o).array() += cv.b[std::size_t(o)];
}

void pool_sample(const NetLayer& L, const float* x, float* y) {
  const Window2d& w = L.pool;
  const Shape3 &in = L.in, &out = L.out;
  const bool is_max = L.kind == LayerKind::MaxPool2d;
  for (int c = 0; c < in.c; ++c)
    for (int oy = 0; oy < out.h; ++oy)
      for (int ox = 0; ox < out.w; ++ox) {
        const int y0 = oy * w.stride_h - w.pad_h, x0 = ox * w.stride_w - w.pad_w;
        float acc = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
        int inside = 0;
        for (int iy = std::max(y0, 0); iy < std::min(y0 + w.kh, in.h); ++iy)
          for (int ix = std::max(x0, 0); ix < std::min(x0 + w.kw, in.w); ++ix) {
            const float v = x[(c * in.h + iy) * in.w + ix];
            acc = is_max ? std::max(acc, v) : acc + v;
            ++inside;
          }
        if (!is_max) {
          // torch's divisor with count_include_pad: the window clipped to the
          // padded image (the padding counts, nothing beyond it).
          const int hy = std::min(y0 + w.kh, in.h + w.pad_h) - y0, hx = std::min(x0 + w.kw, in.w + w.pad_w) - x0;
          acc /= static_cast<float>(L.count_include_pad ? hy * hx : inside);
        }
        y[(c * out.h + oy) * out.w + ox] = acc;
      }
}

}  // namespace

Eigen::MatrixXf apply_layer_op(const NetLayer& L, const Eigen::MatrixXf& x) {
  switch (L.kind) {
    case LayerKind::Dense: return L.dense.affine(x);
    case LayerKind::Flatten:
    case LayerKind::Activation: return x;
    default: break;
  }
  Eigen::MatrixXf y(L.out.size(), x.cols());
  Eigen::MatrixXf Wt;
  if (L.kind == LayerKind::Conv2d) {
    const Conv2d& cv = L.conv;
    const int K = cv.in_channels * cv.win.kh * cv.win.kw;
    // W [out, in*kh*kw] row-major is W^T column-major.
    Wt = Eigen::Map<const Eigen::MatrixXf>(cv.W.data(), K, cv.out_channels);
  }
  // One sample per iteration, each by the same single-threaded code: results
  // do not depend on the thread count.
  const ctmc::EigenThreadScope eigen_serial(1);
  LoopErrors errors;
#pragma omp parallel if (x.cols() > 1)
  {
    Eigen::MatrixXf patches;
#pragma omp for schedule(dynamic)
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      errors.run(j, [&] {
        if (L.kind == LayerKind::Conv2d) conv_sample(L.conv, L.in, L.out, x.col(j).data(), y.col(j).data(), patches, Wt);
        else pool_sample(L, x.col(j).data(), y.col(j).data());
      });
  }
  errors.rethrow();
  return y;
}

void Net::infer_shapes(const std::string& what) {
  if (layers.empty()) throw InputError(what, "network has no layers");
  if (input.size() <= 0) throw InputError(what, "the network's input shape is empty");
  if (input.size() > kMaxSampleValues)
    throw InputError(what, fmt::format("the input {} holds {} values per sample, more than the {} accepted", input.text(), input.size(),
                                       kMaxSampleValues));
  Shape3 s = input;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    NetLayer& L = layers[l];
    const std::string at = label(*this, l);
    L.in = s;
    switch (L.kind) {
      case LayerKind::Dense: {
        const DenseLayer& d = L.dense;
        if (d.W.rows() == 0 || d.W.cols() == 0) throw InputError(what, at + " has an empty weight matrix");
        if (d.b.size() != d.W.rows())
          throw InputError(what, fmt::format("{}: bias has {} entries, weight has {} rows", at, d.b.size(), d.W.rows()));
        if (!s.flat && s.size() != s.c)
          throw InputError(what, fmt::format("{} is given the image {}: it needs a flatten before it", at, s.text()));
        if (d.W.cols() != s.size()) {
          const bool after_flatten = l > 0 && layers[l - 1].kind == LayerKind::Flatten;
          throw InputError(what, fmt::format("{} takes {} inputs but {} gives {}{}", at, d.W.cols(),
                                             after_flatten ? "the flatten before it" : l == 0 ? "the input" : label(*this, l - 1),
                                             s.size(), after_flatten ? " (" + layers[l - 1].in.text() + " flattened)" : ""));
        }
        if (!d.W.allFinite() || !d.b.allFinite()) throw InputError(what, at + " has a non-finite weight or bias");
        s = Shape3{static_cast<int>(d.W.rows()), 1, 1, true};
        break;
      }
      case LayerKind::Conv2d: {
        const Conv2d& cv = L.conv;
        check_window(what, at, s, cv.win, false);
        if (cv.in_channels != s.c)
          throw InputError(what, fmt::format("{} takes {} channels but is given {} ({})", at, cv.in_channels, s.c, s.text()));
        if (cv.out_channels < 1) throw InputError(what, at + " has no output channels");
        if (cv.W.size() != std::size_t(cv.out_channels) * cv.in_channels * cv.win.kh * cv.win.kw ||
            cv.b.size() != std::size_t(cv.out_channels))
          throw InputError(what, at + ": weight or bias size does not match its channels and kernel");
        if (!all_finite(cv.W) || !all_finite(cv.b)) throw InputError(what, at + " has a non-finite weight or bias");
        s = Shape3{cv.out_channels, window_out(s.h, cv.win.kh, cv.win.stride_h, cv.win.pad_h),
                   window_out(s.w, cv.win.kw, cv.win.stride_w, cv.win.pad_w), false};
        break;
      }
      case LayerKind::AvgPool2d:
      case LayerKind::MaxPool2d:
        check_window(what, at, s, L.pool, true);
        s = Shape3{s.c, window_out(s.h, L.pool.kh, L.pool.stride_h, L.pool.pad_h),
                   window_out(s.w, L.pool.kw, L.pool.stride_w, L.pool.pad_w), false};
        break;
      case LayerKind::Flatten:
        if (s.size() > std::numeric_limits<int>::max()) throw InputError(what, at + " flattens more than 2^31 values");
        s = Shape3{static_cast<int>(s.size()), 1, 1, true};
        break;
      case LayerKind::Activation: break;
    }
    L.out = s;
    if (s.size() > kMaxSampleValues)
      throw InputError(what, fmt::format("{}: its output {} holds {} values per sample, more than the {} accepted", at, s.text(), s.size(),
                                         kMaxSampleValues));
    if (L.activation != "linear") {
      try {
        (void)detail::resolve_activation(L.activation);
      } catch (const InputError& e) {
        throw InputError(what, at + ": " + e.what());
      }
    }
  }
  if (layers.back().activation != "linear")
    throw InputError(what, label(*this, layers.size() - 1) + " (output) must be \"linear\" (its z are the logits), got " +
                               quote_excerpt(layers.back().activation));
  if (!s.flat && s.size() != s.c)
    throw InputError(what, fmt::format("the network's output is the image {}: flatten it to the class scores", s.text()));
}

Eigen::MatrixXf Net::forward(const Eigen::MatrixXf& x, float clip_k) const {
  if (layers.empty()) throw InputError("network: no layers");
  if (x.rows() != input_size())
    throw InputError(fmt::format("network: input has {} features, the first layer expects {} ({})", x.rows(), input_size(),
                                 input.text()));
  Eigen::MatrixXf a = x;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const NetLayer& L = layers[l];
    a = apply_layer_op(L, a);
    if (L.activation == "linear") continue;
    detail::activate(detail::resolve_activation(L.activation), a);
    if (clip_k > 0 && l + 1 < layers.size()) a = a.cwiseMax(0.0f).cwiseMin(clip_k);
  }
  return a;
}

Eigen::MatrixXf Net::forward_with(const Eigen::MatrixXf& x,
                                 const std::function<void(std::size_t, Eigen::MatrixXf&)>& activate) const {
  if (x.rows() != input_size())
    throw InputError(fmt::format("network: input has {} features, the first layer expects {} ({})", x.rows(), input_size(),
                                 input.text()));
  Eigen::MatrixXf a = x;
  std::size_t s = 0;
  for (const NetLayer& L : layers) {
    a = apply_layer_op(L, a);
    if (L.activation != "linear") activate(s++, a);
  }
  return a;
}

std::size_t Net::nonlinear_layer_count() const {
  return static_cast<std::size_t>(std::count_if(layers.begin(), layers.end(), [](const NetLayer& L) { return L.activation != "linear"; }));
}

double Net::forward_bytes(std::int64_t batch, int threads, std::size_t* layer) const {
  double most = 0;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const NetLayer& L = layers[l];
    double values = static_cast<double>(batch) * (static_cast<double>(L.in.size()) + static_cast<double>(L.out.size()));
    if (L.kind == LayerKind::Conv2d)
      values += static_cast<double>(std::min<std::int64_t>(std::max(threads, 1), batch)) * L.out.h * L.out.w *
                L.conv.in_channels * L.conv.win.kh * L.conv.win.kw;
    if (values > most) {
      most = values;
      if (layer) *layer = l;
    }
  }
  return 4 * most;
}

std::string Net::first_non_finite_layer(const Eigen::VectorXf& x, float clip_k) const {
  Eigen::MatrixXf a = x;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const NetLayer& L = layers[l];
    a = apply_layer_op(L, a);
    if (L.activation != "linear") {
      detail::activate(detail::resolve_activation(L.activation), a);
      if (clip_k > 0 && l + 1 < layers.size()) a = a.cwiseMax(0.0f).cwiseMin(clip_k);
    }
    if (!a.allFinite()) return label(*this, l);
  }
  return {};
}

std::vector<int> Net::predict(const Eigen::MatrixXf& x, float clip_k) const {
  // A few hundred samples at a time: each sample's logits do not depend on
  // the others, and a whole test split's convolution layers would not fit
  // in memory at once (10,000 CIFAR images at width 1: gigabytes per layer).
  constexpr Eigen::Index kChunk = 256;
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(x.cols()));
  for (Eigen::Index first = 0; first < x.cols(); first += kChunk) {
    const auto part = argmax_columns(forward(x.middleCols(first, std::min(kChunk, x.cols() - first)), clip_k));
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

double Net::accuracy(const Dataset& d, float clip_k) const {
  if (d.size() == 0) return 0.0;
  return accuracy_of(predict(d.images, clip_k), d);
}

bool Net::is_dense() const {
  // A flatten only renames the shape: the data are the same C*H*W values.
  for (const auto& L : layers)
    if (L.kind != LayerKind::Dense && L.kind != LayerKind::Activation && L.kind != LayerKind::Flatten) return false;
  return true;
}

Mlp Net::to_mlp(const std::string& what) const {
  Mlp m;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const NetLayer& L = layers[l];
    if (L.kind != LayerKind::Dense && L.kind != LayerKind::Activation && L.kind != LayerKind::Flatten)
      throw InputError(what, label(*this, l) +
                                 ": this reader takes dense layers only; a network with convolutions or pooling is a "
                                 "layer graph (load_net), which evaluate, simulate network, sweep, convert and check "
                                 "run");
    if (L.kind == LayerKind::Dense) {
      m.layers.push_back(L.dense);
      m.layers.back().activation = L.activation;
    } else if (L.activation != "linear") {
      if (m.layers.empty() || m.layers.back().activation != "linear")
        throw InputError(what, label(*this, l) + ": an activation must follow a dense layer without one");
      m.layers.back().activation = L.activation;
    }
  }
  m.validate(what);
  return m;
}

double fold_batchnorm(Conv2d& cv, const BatchNorm2d& bn, const Shape3& in) {
  const int O = cv.out_channels, K = cv.in_channels * cv.win.kh * cv.win.kw;
  // The probes: a fixed linear congruential sequence mapped to [-1, 1],
  // one image after another.
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  const auto next_probe = [&](std::vector<float>& x) {
    for (auto& v : x) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      v = static_cast<float>(static_cast<double>(state >> 11) * 0x1p-52 - 1.0);
    }
  };
  const std::vector<float> W0 = cv.W, b0 = cv.b;
  std::vector<double> scale(std::size_t(O), 0.0);
  for (int o = 0; o < O; ++o) {
    const double s = bn.gamma[std::size_t(o)] / std::sqrt(bn.var[std::size_t(o)] + bn.eps);
    scale[std::size_t(o)] = s;
    for (int k = 0; k < K; ++k) cv.W[std::size_t(o) * K + k] = static_cast<float>(W0[std::size_t(o) * K + k] * s);
    cv.b[std::size_t(o)] = static_cast<float>((b0[std::size_t(o)] - bn.mean[std::size_t(o)]) * s + bn.beta[std::size_t(o)]);
  }
  // Both evaluated in double by the direct sum: the difference is the
  // rounding of the folded parameters to float.
  const Window2d& w = cv.win;
  const int oh = window_out(in.h, w.kh, w.stride_h, w.pad_h), ow = window_out(in.w, w.kw, w.stride_w, w.pad_w);
  // kProbePositions output positions per channel: spread over the image
  // from its first corner when it has that many (the fold's error is the
  // same at every position: the same weights, and a large layer would take
  // long in full), else every position of as many probe images as it takes.
  // One probe of a small output (the 1x1 end of a VGG) could put a
  // channel's only value near 0 by chance and its relative error out of
  // all proportion.
  constexpr int kProbePositions = 256;
  const int positions = oh * ow, used = std::min(positions, kProbePositions);
  const int probes = (kProbePositions + used - 1) / used;
  std::vector<float> x(static_cast<std::size_t>(in.size()));
  std::vector<double> max_ref(std::size_t(O), 0.0), max_diff(std::size_t(O), 0.0);
  for (int probe = 0; probe < probes; ++probe) {
    next_probe(x);
    for (int o = 0; o < O; ++o)
      for (int q = 0; q < used; ++q) {
        const int p = static_cast<int>(static_cast<long long>(q) * positions / used), oy = p / ow, ox = p % ow;
        double z0 = b0[std::size_t(o)], z1 = cv.b[std::size_t(o)];
        for (int i = 0; i < cv.in_channels; ++i)
          for (int u = 0; u < w.kh; ++u)
            for (int v = 0; v < w.kw; ++v) {
              const int iy = oy * w.stride_h + u - w.pad_h, ix = ox * w.stride_w + v - w.pad_w;
              if (iy < 0 || iy >= in.h || ix < 0 || ix >= in.w) continue;
              const double xv = x[(std::size_t(i) * in.h + iy) * in.w + ix];
              const std::size_t k = ((std::size_t(o) * cv.in_channels + i) * w.kh + u) * w.kw + v;
              z0 += double(W0[k]) * xv;
              z1 += double(cv.W[k]) * xv;
            }
        const double ref = (z0 - bn.mean[std::size_t(o)]) * scale[std::size_t(o)] + bn.beta[std::size_t(o)];
        max_ref[std::size_t(o)] = std::max(max_ref[std::size_t(o)], std::abs(ref));
        max_diff[std::size_t(o)] = std::max(max_diff[std::size_t(o)], std::abs(z1 - ref));
      }
  }
  double worst = 0;
  for (int o = 0; o < O; ++o)
    if (max_diff[std::size_t(o)] > 0)
      worst = std::max(worst, max_ref[std::size_t(o)] > 0 ? max_diff[std::size_t(o)] / max_ref[std::size_t(o)]
                                                          : std::numeric_limits<double>::infinity());
  return worst;
}

}  // namespace ctmc::sim
