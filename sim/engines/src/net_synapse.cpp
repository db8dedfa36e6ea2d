// The synapses of a spiking layer graph (net_synapse.hpp): stages and their
// event-driven scatter.
#include "ctmc/sim/engines/net_synapse.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "axpy.hpp"
#include "ctmc/core/errors.hpp"

namespace ctmc::sim {

std::vector<NetStage> spiking_stages(const Net& net, const std::string& what) {
  if (net.layers.empty()) throw InputError(what, "network has no layers");
  std::vector<NetStage> out;
  std::size_t first = 0;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const NetLayer& L = net.layers[l];
    if (L.kind == LayerKind::MaxPool2d)
      throw InputError(what, layer_label(net, l) +
                                 ": the spiking simulator does not run max pooling (the maximum of spike traces is not "
                                 "the trace of a maximum); use a strided convolution or average pooling (avgpool2d)");
    if (L.activation != "linear" || l + 1 == net.layers.size()) {
      out.push_back({first, l});
      first = l + 1;
    }
  }
  return out;
}

namespace {

// For a window sliding over n_in pixels (kernel k, stride s, padding p,
// n_out positions): per input pixel y', the (kernel offset u, position y)
// pairs with s y + u - p = y', i.e. the outputs the pixel reaches.
std::vector<std::vector<std::pair<int, int>>> reach(int n_in, int n_out, int k, int s, int p) {
  std::vector<std::vector<std::pair<int, int>>> r(static_cast<std::size_t>(n_in));
  for (int yi = 0; yi < n_in; ++yi)
    for (int u = 0; u < k; ++u) {
      const int t = yi + p - u;
      if (t >= 0 && t % s == 0 && t / s < n_out) r[static_cast<std::size_t>(yi)].push_back({u, t / s});
    }
  return r;
}

LinearChain::Op make_op(const NetLayer& L, double scale, bool scaled) {
  LinearChain::Op op;
  op.kind = L.kind;
  op.in = L.in;
  op.out = L.out;
  const float s = static_cast<float>(scale);
  if (L.kind == LayerKind::Dense) {
    // The dense engine's W^l / alpha_{l-1}, element by element in float.
    op.dense = scaled ? Eigen::MatrixXf(L.dense.W / s) : L.dense.W;
    return op;
  }
  op.win = L.kind == LayerKind::Conv2d ? L.conv.win : L.pool;
  op.count_include_pad = L.count_include_pad;
  op.rows = reach(L.in.h, L.out.h, op.win.kh, op.win.stride_h, op.win.pad_h);
  op.cols = reach(L.in.w, L.out.w, op.win.kw, op.win.stride_w, op.win.pad_w);
  if (L.kind == LayerKind::Conv2d) {
    // [out][in][kh][kw] -> [in][kh][kw][out]: a spike reads one contiguous
    // run of weights per kernel offset.
    const Conv2d& cv = L.conv;
    const std::size_t O = static_cast<std::size_t>(cv.out_channels);
    const std::size_t K = static_cast<std::size_t>(cv.in_channels) * cv.win.kh * cv.win.kw;
    op.conv_t.resize(O * K);
    for (std::size_t o = 0; o < O; ++o)
      for (std::size_t k = 0; k < K; ++k) op.conv_t[k * O + o] = scaled ? cv.W[o * K + k] / s : cv.W[o * K + k];
  }
  return op;
}

// The divisor of average-pooling window (oy, ox), as pool_sample (net.cpp):
// with count_include_pad the window clipped to the padded image, otherwise
// the pixels inside the image.
double pool_divisor(const LinearChain::Op& op, int oy, int ox) {
  const Window2d& w = op.win;
  const int y0 = oy * w.stride_h - w.pad_h, x0 = ox * w.stride_w - w.pad_w;
  if (op.count_include_pad)
    return static_cast<double>((std::min(y0 + w.kh, op.in.h + w.pad_h) - y0) *
                               (std::min(x0 + w.kw, op.in.w + w.pad_w) - x0));
  return static_cast<double>((std::min(y0 + w.kh, op.in.h) - std::max(y0, 0)) *
                             (std::min(x0 + w.kw, op.in.w) - std::max(x0, 0)));
}

// add(t, v * A_op(t, j)) for every output t of one operation that input j
// reaches.
template <class Add>
void scatter(const LinearChain::Op& op, std::uint32_t j, double v, Add&& add) {
  if (op.kind == LayerKind::Dense) {
    const Eigen::Index rows = op.dense.rows();
    const float* col = op.dense.data() + static_cast<Eigen::Index>(j) * rows;
    for (Eigen::Index r = 0; r < rows; ++r) add(static_cast<std::uint32_t>(r), v * col[r]);
    return;
  }
  const int H = op.in.h, W = op.in.w, OH = op.out.h, OW = op.out.w;
  const int c = static_cast<int>(j) / (H * W), yi = static_cast<int>(j) / W % H, xi = static_cast<int>(j) % W;
  const auto& rows = op.rows[static_cast<std::size_t>(yi)];
  const auto& cols = op.cols[static_cast<std::size_t>(xi)];
  if (op.kind == LayerKind::Conv2d) {
    const int O = op.out.c, kh = op.win.kh, kw = op.win.kw;
    const std::size_t plane = static_cast<std::size_t>(OH) * OW;
    for (const auto& [u, y] : rows)
      for (const auto& [vv, x] : cols) {
        const float* w = op.conv_t.data() + (static_cast<std::size_t>(c * kh + u) * kw + vv) * O;
        const std::size_t at = static_cast<std::size_t>(y) * OW + x;
        for (int o = 0; o < O; ++o) add(static_cast<std::uint32_t>(o * plane + at), v * w[o]);
      }
    return;
  }
  for (const auto& [u, y] : rows)  // average pooling
    for (const auto& [vv, x] : cols)
      add(static_cast<std::uint32_t>((c * OH + y) * OW + x), v / pool_divisor(op, y, x));
}

// scatter of a convolution into a channel-last current (channel_last in
// net_synapse.hpp): per kernel offset, the C targets at one output pixel
// take the slice's C weights in one contiguous run. T: the current's type
// (double; float for the fast kernel, with v rounded to float).
template <bool Avx, class T>
[[gnu::always_inline]] inline void scatter_conv_hwc_body(const LinearChain::Op& op, std::uint32_t j, T v, T* cur) {
  const int H = op.in.h, W = op.in.w, OW = op.out.w, O = op.out.c, kh = op.win.kh, kw = op.win.kw;
  const int c = static_cast<int>(j) / (H * W), yi = static_cast<int>(j) / W % H, xi = static_cast<int>(j) % W;
  const auto& cols = op.cols[static_cast<std::size_t>(xi)];
  for (const auto& [u, y] : op.rows[static_cast<std::size_t>(yi)]) {
    const float* wrow = op.conv_t.data() + static_cast<std::size_t>(c * kh + u) * kw * O;
    T* crow = cur + static_cast<std::size_t>(y) * OW * O;
    for (const auto& [vv, x] : cols) {
      T* to = crow + static_cast<std::size_t>(x) * O;
      const float* w = wrow + static_cast<std::size_t>(vv) * O;
      if constexpr (std::is_same_v<T, float>) {
#ifdef CTMC_SIM_AVX_DISPATCH
        if constexpr (Avx) {
          detail::add_scaled_f_avx(to, w, O, v);
          continue;
        }
#endif
        detail::add_scaled_f(to, w, O, v);
      } else {
#ifdef CTMC_SIM_AVX_DISPATCH
        if constexpr (Avx) {
          detail::add_scaled_avx(to, w, O, v);
          continue;
        }
#endif
        detail::add_scaled(to, w, O, v);
      }
    }
  }
}

// add_step_dense: input channel by input channel, each output pixel's
// nonzero inputs of that channel in ascending (kernel row, kernel column),
// their kernel runs added to the pixel's C targets in that order (held in
// registers across the runs). A target's inputs come in ascending index
// (c H W + y' W + x': c first, then y' = s y + u - p, then x'), as the
// event-driven scatter adds spikes given in ascending index; only the order
// across targets differs.
template <bool Avx, class T>
[[gnu::always_inline]] inline void gather_conv_hwc_body(const LinearChain::Op& op, const T* src, T* cur) {
  const int C = op.in.c, H = op.in.h, W = op.in.w, OH = op.out.h, OW = op.out.w, O = op.out.c;
  const Window2d& w = op.win;
  const std::size_t K = static_cast<std::size_t>(w.kh) * w.kw;
  std::vector<const float*> runs(K);
  std::vector<T> vals(K);
  for (int c = 0; c < C; ++c) {
    const T* sc = src + static_cast<std::size_t>(c) * H * W;
    if (std::all_of(sc, sc + static_cast<std::size_t>(H) * W, [](T v) { return v == T(0); })) continue;
    const float* wc = op.conv_t.data() + static_cast<std::size_t>(c) * K * O;
    for (int y = 0; y < OH; ++y) {
      const int y0 = y * w.stride_h - w.pad_h;
      const int u0 = std::max(0, -y0), u1 = std::min(w.kh, H - y0);
      for (int x = 0; x < OW; ++x) {
        const int x0 = x * w.stride_w - w.pad_w;
        const int v0 = std::max(0, -x0), v1 = std::min(w.kw, W - x0);
        int m = 0;
        for (int u = u0; u < u1; ++u) {
          const T* s = sc + static_cast<std::size_t>(y0 + u) * W + x0;
          for (int v = v0; v < v1; ++v)
            if (s[v] != T(0)) {
              vals[static_cast<std::size_t>(m)] = s[v];
              runs[static_cast<std::size_t>(m++)] = wc + static_cast<std::size_t>(u * w.kw + v) * O;
            }
        }
        if (m == 0) continue;
        T* acc = cur + (static_cast<std::size_t>(y) * OW + x) * O;
        if constexpr (std::is_same_v<T, float>) {
#ifdef CTMC_SIM_AVX_DISPATCH
          if constexpr (Avx) {
            detail::add_scaled_runs_f_avx(acc, runs.data(), vals.data(), m, O);
            continue;
          }
#endif
          detail::add_scaled_runs_f(acc, runs.data(), vals.data(), m, O);
        } else {
#ifdef CTMC_SIM_AVX_DISPATCH
          if constexpr (Avx) {
            detail::add_scaled_runs_avx(acc, runs.data(), vals.data(), m, O);
            continue;
          }
#endif
          detail::add_scaled_runs(acc, runs.data(), vals.data(), m, O);
        }
      }
    }
  }
}

#ifdef CTMC_SIM_AVX_DISPATCH
template <class T>
[[gnu::target("avx")]] void scatter_conv_hwc_avx(const LinearChain::Op& op, std::uint32_t j, T v, T* cur) {
  scatter_conv_hwc_body<true>(op, j, v, cur);
}
template <class T>
[[gnu::target("avx")]] void gather_conv_hwc_avx(const LinearChain::Op& op, const T* src, T* cur) {
  gather_conv_hwc_body<true>(op, src, cur);
}
#endif

template <class T>
void scatter_conv_hwc(const LinearChain::Op& op, std::uint32_t j, T v, T* cur) {
#ifdef CTMC_SIM_AVX_DISPATCH
  if (detail::has_avx()) return scatter_conv_hwc_avx(op, j, v, cur);
#endif
  scatter_conv_hwc_body<false>(op, j, v, cur);
}

template <class T>
void gather_conv_hwc(const LinearChain::Op& op, const T* src, T* cur) {
#ifdef CTMC_SIM_AVX_DISPATCH
  if (detail::has_avx()) return gather_conv_hwc_avx(op, src, cur);
#endif
  gather_conv_hwc_body<false>(op, src, cur);
}

}  // namespace

LinearChain::LinearChain(const Net& net, NetStage stage, double scale) {
  if (!(stage.first <= stage.last && stage.last < net.layers.size()))
    throw InputError(fmt::format("linear chain: layers {}..{} outside the net's {}", stage.first, stage.last,
                                 net.layers.size()));
  in_size_ = static_cast<int>(net.layers[stage.first].in.size());
  out_size_ = static_cast<int>(net.layers[stage.last].out.size());
  std::size_t last_weighted = stage.last + 1;
  for (std::size_t l = stage.first; l <= stage.last; ++l) {
    const LayerKind k = net.layers[l].kind;
    if (k == LayerKind::MaxPool2d) (void)spiking_stages(net, "net");  // throws, naming the layer
    if (k == LayerKind::Dense || k == LayerKind::Conv2d) last_weighted = l;
  }
  // Flatten and the identity leave the C-H-W indices as they are: no op.
  for (std::size_t l = stage.first; l <= stage.last; ++l) {
    const NetLayer& L = net.layers[l];
    if (L.kind == LayerKind::Flatten || L.kind == LayerKind::Activation) continue;
    ops_.push_back(make_op(L, scale, l == last_weighted));
  }
  if (last_weighted > stage.last) spike_scale_ = 1.0 / scale;
  out_shape_ = net.layers[stage.last].out;
  channel_last_ = !ops_.empty() && ops_.back().kind == LayerKind::Conv2d;
  dense_capable_ = ops_.size() == 1 && channel_last_;
  Eigen::MatrixXf z = Eigen::MatrixXf::Zero(in_size_, 1);
  for (std::size_t l = stage.first; l <= stage.last; ++l) z = apply_layer_op(net.layers[l], z);
  bias_.assign(z.data(), z.data() + z.size());
}

template <class Last>
void LinearChain::through_ops(std::uint32_t i, double v0, ChainScratch& scratch, Last&& last) const {
  if (ops_.size() == 1) {
    last(ops_[0], i, v0);
    return;
  }
  // Pooling (or a linear convolution) before the stage's last operation:
  // the spike's image after each, as a list of (index, value).
  auto* from = &scratch.a;
  auto* to = &scratch.b;
  from->clear();
  from->push_back({i, v0});
  for (std::size_t k = 0; k + 1 < ops_.size(); ++k) {
    to->clear();
    for (const auto& [j, v] : *from) scatter(ops_[k], j, v, [to](std::uint32_t t, double x) { to->push_back({t, x}); });
    std::swap(from, to);
  }
  for (const auto& [j, v] : *from) last(ops_.back(), j, v);
}

template <class Add>
void LinearChain::visit(std::uint32_t i, double c, ChainScratch& scratch, Add&& add) const {
  const double v0 = c * spike_scale_;
  if (ops_.empty()) {
    add(i, v0);
    return;
  }
  through_ops(i, v0, scratch, [&](const Op& op, std::uint32_t j, double v) { scatter(op, j, v, add); });
}

void LinearChain::add_spike(std::uint32_t i, double c, double* cur, ChainScratch& scratch) const {
  visit(i, c, scratch, [cur](std::uint32_t t, double x) { cur[t] += x; });
}

std::uint32_t LinearChain::stored_index(std::uint32_t t) const {
  if (!channel_last_) return t;
  const auto P = static_cast<std::uint32_t>(out_shape_.h * out_shape_.w);
  return t % P * static_cast<std::uint32_t>(out_shape_.c) + t / P;
}

void LinearChain::add_spike_stored(std::uint32_t i, double c, double* cur, ChainScratch& scratch) const {
  if (!channel_last_) return add_spike(i, c, cur, scratch);
  through_ops(i, c * spike_scale_, scratch,
              [&](const Op& op, std::uint32_t j, double v) { scatter_conv_hwc(op, j, v, cur); });
}

void LinearChain::add_step_dense(const double* src, double* cur) const {
  if (!dense_capable_) throw std::logic_error("LinearChain::add_step_dense: the stage is not one convolution");
  gather_conv_hwc(ops_[0], src, cur);
}

void LinearChain::add_spike_stored(std::uint32_t i, double c, float* cur, ChainScratch& scratch) const {
  if (!channel_last_) {
    visit(i, c, scratch, [cur](std::uint32_t t, double x) { cur[t] += static_cast<float>(x); });
    return;
  }
  through_ops(i, c * spike_scale_, scratch, [&](const Op& op, std::uint32_t j, double v) {
    scatter_conv_hwc(op, j, static_cast<float>(v), cur);
  });
}

void LinearChain::add_step_dense(const float* src, float* cur) const {
  if (!dense_capable_) throw std::logic_error("LinearChain::add_step_dense: the stage is not one convolution");
  gather_conv_hwc(ops_[0], src, cur);
}

std::vector<std::uint32_t> LinearChain::fanouts() const {
  std::vector<std::uint32_t> out(static_cast<std::size_t>(in_size_), 0);
  if (dense_capable_) {
    // One convolution: input (c, y', x') reaches target (o, y, x) through the
    // single weight W[o, c, u, v] with s y + u - p = y', s x + v - p = x', so
    // its fanout is the sum, over the kernel offsets (u, v) it reaches, of
    // the nonzero weights among W[:, c, u, v] (the count visit makes, without
    // going through every target).
    const Op& op = ops_[0];
    const int C = op.in.c, H = op.in.h, W = op.in.w, O = op.out.c, kh = op.win.kh, kw = op.win.kw;
    std::vector<std::uint32_t> nnz(static_cast<std::size_t>(C) * kh * kw, 0);
    for (std::size_t k = 0; k < nnz.size(); ++k)
      for (int o = 0; o < O; ++o) nnz[k] += op.conv_t[k * static_cast<std::size_t>(O) + o] != 0.0f;
    for (int c = 0; c < C; ++c)
      for (int yi = 0; yi < H; ++yi)
        for (int xi = 0; xi < W; ++xi) {
          std::uint32_t n = 0;
          for (const auto& [u, y] : op.rows[static_cast<std::size_t>(yi)])
            for (const auto& [v, x] : op.cols[static_cast<std::size_t>(xi)])
              n += nnz[(static_cast<std::size_t>(c) * kh + u) * kw + v];
          out[(static_cast<std::size_t>(c) * H + yi) * W + xi] = n;
        }
    return out;
  }
  std::vector<double> acc(static_cast<std::size_t>(out_size_), 0.0);
  std::vector<char> seen(static_cast<std::size_t>(out_size_), 0);
  std::vector<std::uint32_t> touched;
  ChainScratch scratch;
  for (std::uint32_t i = 0; i < static_cast<std::uint32_t>(in_size_); ++i) {
    visit(i, 1.0, scratch, [&](std::uint32_t t, double x) {
      if (!seen[t]) {
        seen[t] = 1;
        touched.push_back(t);
      }
      acc[t] += x;
    });
    std::uint32_t n = 0;
    for (std::uint32_t t : touched) {
      n += acc[t] != 0.0;
      acc[t] = 0.0;
      seen[t] = 0;
    }
    touched.clear();
    out[i] = n;
  }
  return out;
}

}  // namespace ctmc::sim
