// Internal: what the MLP training (train.cpp) and the layer-graph training
// (train_net.cpp) share, so that both draw the same streams, update by the
// same Adam and score by the same loss (train.hpp: seeding and the
// determinism argument).
#pragma once
#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ctmc/core/errors.hpp"
#include "ctmc/core/seeding.hpp"
#include "ctmc/sim/formats/dataset.hpp"
#include "ctmc/sim/nets/train.hpp"
#include "ctmc/solvers/det_math.hpp"

namespace ctmc::sim::detail {

// The numbered purposes of training's streams (seeding.hpp): layer l's
// initial weights draw from stream l of kInitStream, epoch e's order from
// stream e of kShuffleStream (fewer than 0x1000 layers, so they never meet).
inline constexpr std::uint64_t kInitStream = 0x1000;
inline constexpr std::uint64_t kShuffleStream = 0x2000;

inline std::mt19937_64 stream_rng(std::uint64_t seed, std::uint64_t purpose, std::uint64_t index) {
  return std::mt19937_64(ctmc::numbered_stream_seed(seed, purpose, index));
}

// Uniform in [lo, hi) from the top 24 bits: portable (std::uniform_real_distribution
// is implementation-defined) and exact in float.
inline float uniform(std::mt19937_64& g, float lo, float hi) {
  const float u = float(g() >> 40) * (1.0f / 16777216.0f);
  return lo + (hi - lo) * u;
}

// Fisher-Yates with a portable bounded draw (std::shuffle's is implementation-defined).
inline void shuffle(std::vector<int>& v, std::mt19937_64& g) {
  for (std::size_t i = v.size(); i > 1; --i) {
    const std::size_t j = static_cast<std::size_t>(g() % i);  // bias < i/2^64, negligible
    std::swap(v[i - 1], v[j]);
  }
}

// The checks every training run makes before it starts (InputError naming the option).
inline void check_training(const Dataset& d, const TrainConfig& cfg, int classes) {
  if (d.size() == 0) throw InputError("train: the training set is empty");
  if (cfg.epochs < 1) throw InputError("epochs", "must be at least 1");
  if (cfg.batch_size < 1) throw InputError("batch_size", "must be at least 1");
  if (!(cfg.learning_rate > 0)) throw InputError("learning_rate", "must be positive");
  for (std::size_t i = 0; i < d.labels.size(); ++i)
    if (d.labels[i] < 0 || d.labels[i] >= classes)
      throw InputError("train: label " + std::to_string(d.labels[i]) + " of sample " + std::to_string(i) + " is outside 0.." +
                       std::to_string(classes - 1));
}

// Epoch e's order of the samples 0..n-1: stream e of kShuffleStream.
inline void epoch_order(std::vector<int>& order, int n, std::uint64_t seed, int epoch) {
  order.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  auto g = stream_rng(seed, kShuffleStream, static_cast<std::uint64_t>(epoch));
  shuffle(order, g);
}

// The B samples order[start..start+B) as columns of X and their labels.
inline void gather_batch(const Dataset& d, const std::vector<int>& order, int start, int B, Eigen::MatrixXf& X, std::vector<int>& labels) {
  X.resize(d.features(), B);
  labels.resize(static_cast<std::size_t>(B));
  for (int k = 0; k < B; ++k) {
    const int idx = order[static_cast<std::size_t>(start + k)];
    X.col(k) = d.images.col(idx);
    labels[static_cast<std::size_t>(k)] = d.labels[static_cast<std::size_t>(idx)];
  }
}

// One Adam step on a parameter array (elementwise, so thread-independent):
// m <- b1 m + (1-b1) g, v <- b2 v + (1-b2) g^2,
// p <- p - lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)   (torch.optim.Adam).
inline void adam_update(float* p, const float* g, float* m, float* v, Eigen::Index n, const TrainConfig& c, float step_size,
                        float inv_sqrt_bc2) {
#pragma omp parallel for schedule(static) if (n > 50000)
  for (Eigen::Index i = 0; i < n; ++i) {
    m[i] = c.beta1 * m[i] + (1 - c.beta1) * g[i];
    v[i] = c.beta2 * v[i] + (1 - c.beta2) * g[i] * g[i];
    p[i] -= step_size * m[i] / (std::sqrt(v[i]) * inv_sqrt_bc2 + c.adam_eps);
  }
}

// Adam's bias-corrected step size lr/(1-b1^t) and 1/sqrt(1-b2^t) at step t (from 1).
inline std::pair<float, float> adam_step_factors(const TrainConfig& c, std::int64_t step) {
  const float bc1 = 1 - detmath::pow(c.beta1, float(step)), bc2 = 1 - detmath::pow(c.beta2, float(step));
  return {c.learning_rate / bc1, 1 / std::sqrt(bc2)};
}

inline void draw_progress(int epoch, int epochs, int batch, int batches, double loss) {
  constexpr int kWidth = 30;
  const double frac = (double(epoch - 1) + double(batch) / batches) / epochs;
  const int filled = static_cast<int>(frac * kWidth);
  std::fprintf(stderr, "\r  training [%.*s%*s] epoch %d/%d  loss %.4f ", filled, "==============================", kWidth - filled, "", epoch,
               epochs, loss);
  std::fflush(stderr);
}

// Mean softmax cross-entropy of logits Z (classes x batch), stabilised by the
// column maximum: loss = log sum_i e^{z_i - m} - (z_y - m); its gradient
// dloss/dZ = (softmax(z) - onehot(y)) / batch goes to G. Returns the loss and
// the number of columns whose argmax is the label.
inline std::pair<double, int> softmax_cross_entropy(const Eigen::MatrixXf& Z, const std::vector<int>& y, Eigen::MatrixXf& G) {
  const Eigen::Index B = Z.cols();
  G.resize(Z.rows(), B);
  double loss = 0;
  int correct = 0;
  for (Eigen::Index k = 0; k < B; ++k) {
    const int label = y[static_cast<std::size_t>(k)];
    Eigen::Index arg;
    const float zmax = Z.col(k).maxCoeff(&arg);
    correct += arg == label;
    // detmath, not Eigen's exp: Eigen evaluates the tail of a column with the C library's expf.
    const Eigen::ArrayXf e = (Z.col(k).array() - zmax).unaryExpr([](float v) { return detmath::exp(v); });
    const float s = e.sum();
    loss += detmath::log(double(s)) - double(Z(label, k) - zmax);
    G.col(k) = (e / s).matrix();
    G(label, k) -= 1.0f;
  }
  G /= float(B);
  return {loss / double(B), correct};
}

}  // namespace ctmc::sim::detail
