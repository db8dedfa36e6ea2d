// Shared by the layer-graph tests: PyTorch's NCHW layer semantics written out
// directly, in double, one output element at a time (no im2col, no GEMM, no
// code shared with sim/), as the independent reference the library's
// convolution, pooling, BatchNorm fold and flatten are compared against.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace ctmc::sim::testing {

// One sample: c x h x w values, x[(ch * h + y) * w + x].
struct Image {
  int c = 0, h = 0, w = 0;
  std::vector<double> v;
  double& at(int ch, int y, int x) { return v[(std::size_t(ch) * h + y) * w + x]; }
  double at(int ch, int y, int x) const { return v[(std::size_t(ch) * h + y) * w + x]; }
  // Zero outside the image: the padding of a convolution.
  double padded(int ch, int y, int x) const { return y < 0 || y >= h || x < 0 || x >= w ? 0.0 : at(ch, y, x); }
};

inline Image make_image(int c, int h, int w) { return Image{c, h, w, std::vector<double>(std::size_t(c) * h * w, 0.0)}; }

// torch.nn.functional.conv2d: weight [out, in, kh, kw], bias [out] (empty: none).
inline Image ref_conv2d(const Image& x, const std::vector<double>& weight, const std::vector<double>& bias, int out, int kh,
                        int kw, int sh, int sw, int ph, int pw) {
  Image y = make_image(out, (x.h + 2 * ph - kh) / sh + 1, (x.w + 2 * pw - kw) / sw + 1);
  for (int o = 0; o < out; ++o)
    for (int oy = 0; oy < y.h; ++oy)
      for (int ox = 0; ox < y.w; ++ox) {
        double s = bias.empty() ? 0.0 : bias[std::size_t(o)];
        for (int i = 0; i < x.c; ++i)
          for (int u = 0; u < kh; ++u)
            for (int t = 0; t < kw; ++t)
              s += weight[((std::size_t(o) * x.c + i) * kh + u) * kw + t] * x.padded(i, oy * sh + u - ph, ox * sw + t - pw);
        y.at(o, oy, ox) = s;
      }
  return y;
}

// torch.nn.BatchNorm2d in eval mode.
inline Image ref_batchnorm(Image x, const std::vector<double>& gamma, const std::vector<double>& beta,
                           const std::vector<double>& mean, const std::vector<double>& var, double eps) {
  for (int c = 0; c < x.c; ++c)
    for (int y = 0; y < x.h; ++y)
      for (int t = 0; t < x.w; ++t)
        x.at(c, y, t) = (x.at(c, y, t) - mean[std::size_t(c)]) / std::sqrt(var[std::size_t(c)] + eps) * gamma[std::size_t(c)] +
                        beta[std::size_t(c)];
  return x;
}

// avg_pool2d / max_pool2d, floor mode. Average: with count_include_pad the
// divisor is the window clipped to the padded image, else the pixels inside.
inline Image ref_pool(const Image& x, bool max, int k, int s, int p, bool count_include_pad = true) {
  Image y = make_image(x.c, (x.h + 2 * p - k) / s + 1, (x.w + 2 * p - k) / s + 1);
  for (int c = 0; c < x.c; ++c)
    for (int oy = 0; oy < y.h; ++oy)
      for (int ox = 0; ox < y.w; ++ox) {
        double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
        int inside = 0, padded = 0;
        for (int u = 0; u < k; ++u)
          for (int t = 0; t < k; ++t) {
            const int iy = oy * s + u - p, ix = ox * s + t - p;
            if (iy < x.h + p && ix < x.w + p) ++padded;
            if (iy < 0 || iy >= x.h || ix < 0 || ix >= x.w) continue;
            ++inside;
            acc = max ? std::max(acc, x.at(c, iy, ix)) : acc + x.at(c, iy, ix);
          }
        y.at(c, oy, ox) = max ? acc : acc / (count_include_pad ? padded : inside);
      }
  return y;
}

inline Image ref_relu(Image x) {
  for (double& v : x.v) v = std::max(v, 0.0);
  return x;
}

// torch.nn.Linear on torch.flatten(x, 1): weight [out, in] row-major.
inline std::vector<double> ref_linear(const std::vector<double>& x, const std::vector<double>& weight,
                                      const std::vector<double>& bias, int out) {
  std::vector<double> y(std::size_t(out), 0.0);
  for (int o = 0; o < out; ++o) {
    double s = bias.empty() ? 0.0 : bias[std::size_t(o)];
    for (std::size_t i = 0; i < x.size(); ++i) s += weight[std::size_t(o) * x.size() + i] * x[i];
    y[std::size_t(o)] = s;
  }
  return y;
}

// A fixed pseudo-random sequence in [lo, hi) (tests need no quality, only reproducibility).
struct TestRng {
  std::uint64_t s;
  explicit TestRng(std::uint64_t seed) : s(seed * 2654435761u + 1) {}
  double uniform(double lo, double hi) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return lo + (hi - lo) * double(s >> 11) * 0x1p-53;
  }
  std::vector<double> vec(std::size_t n, double lo, double hi) {
    std::vector<double> v(n);
    for (double& x : v) x = uniform(lo, hi);
    return v;
  }
};

// Values a float holds exactly, so that float and double computations start equal.
inline std::vector<double> as_floats(std::vector<double> v) {
  for (double& x : v) x = static_cast<float>(x);
  return v;
}

}  // namespace ctmc::sim::testing
