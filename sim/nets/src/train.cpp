// Mini-batch Adam training of an MLP with softmax cross-entropy (train.hpp).
#include "ctmc/sim/nets/train.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <tuple>

#include "ctmc/core/errors.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/core/seeding.hpp"
#include "ctmc/solvers/det_math.hpp"
#include "dense_kernels.hpp"
#include "train_common.hpp"

namespace ctmc::sim {
namespace {

using detail::adam_update;
using detail::kInitStream;
using detail::stream_rng;
using detail::uniform;

struct AdamState {
  std::vector<Eigen::MatrixXf> mW, vW;
  std::vector<Eigen::VectorXf> mb, vb;
};

// Buffers reused across batches (no allocation per step once sized).
struct Workspace {
  std::vector<Eigen::MatrixXf> A, D, G;  // activations a^0..a^L (a^L = logits), phi'(z^l), deltas
  LossGradients out;
};

void backprop(const Mlp& net, const std::vector<detail::ResolvedActivation>& acts, const Eigen::MatrixXf& X, const std::vector<int>& y,
              Workspace& ws) {
  const std::size_t L = net.layers.size();
  ws.A.resize(L + 1);
  ws.D.resize(L);
  ws.G.resize(L);
  ws.out.dW.resize(L);
  ws.out.db.resize(L);
  // Forward: z^l = W^l a^{l-1} + b^l, a^l = phi(z^l), D^l = phi'(z^l).
  const Eigen::MatrixXf* a = &X;
  for (std::size_t l = 0; l < L; ++l) {
    detail::gemm_nn(ws.A[l + 1], net.layers[l].W, *a);
    ws.A[l + 1].colwise() += net.layers[l].b;
    if (l + 1 < L) detail::activate(acts[l], ws.A[l + 1], &ws.D[l]);
    a = &ws.A[l + 1];
  }
  // Softmax cross-entropy: dloss/dz = softmax(z) - onehot(y), over the batch.
  std::tie(ws.out.loss, ws.out.correct) = detail::softmax_cross_entropy(ws.A[L], y, ws.G[L - 1]);
  // Backward.
  for (std::size_t l = L; l-- > 0;) {
    detail::gemm_nt(ws.out.dW[l], ws.G[l], l == 0 ? X : ws.A[l]);
    ws.out.db[l] = ws.G[l].rowwise().sum();
    if (l > 0) {
      detail::gemm_tn(ws.G[l - 1], net.layers[l].W, ws.G[l]);
      ws.G[l - 1].array() *= ws.D[l - 1].array();
    }
  }
}

}  // namespace

Mlp init_mlp(int inputs, const std::vector<int>& hidden, int classes, const std::string& activation, std::uint64_t seed) {
  Mlp net;
  std::vector<int> sizes{inputs};
  sizes.insert(sizes.end(), hidden.begin(), hidden.end());
  sizes.push_back(classes);
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    DenseLayer d;
    d.activation = l + 2 == sizes.size() ? "linear" : activation;
    auto g = stream_rng(seed, kInitStream, l);
    const float bound = 1.0f / std::sqrt(float(sizes[l]));
    d.W.resize(sizes[l + 1], sizes[l]);
    d.b.resize(sizes[l + 1]);
    for (Eigen::Index i = 0; i < d.W.rows(); ++i)  // row-major draw order, like torch's [out, in] tensor
      for (Eigen::Index j = 0; j < d.W.cols(); ++j) d.W(i, j) = uniform(g, -bound, bound);
    for (Eigen::Index i = 0; i < d.b.size(); ++i) d.b(i) = uniform(g, -bound, bound);
    net.layers.push_back(std::move(d));
  }
  return net;
}

TrainMemory mlp_train_memory(int inputs, const std::vector<int>& hidden, int classes, int batch, int scored) {
  TrainMemory m;
  double widths = 0, in = inputs, largest_pair = 0;
  std::vector<int> outs = hidden;
  outs.push_back(classes);
  for (int out : outs) {
    m.parameters += in * out + out;
    m.largest_layer = std::max(m.largest_layer, in * out + out);
    largest_pair = std::max(largest_pair, in + out);
    widths += out;
    in = out;
  }
  // backprop's Workspace: the input batch, and per layer its output, phi'
  // and delta (A, D, G); the forward pass holds one layer's input and output.
  m.batch_bytes = 4.0 * batch * (inputs + 3 * widths);
  m.evaluation_bytes = 4.0 * scored * largest_pair;
  return m;
}

TrainResult train_mlp(const Dataset& d, const TrainConfig& cfg, int classes) {
  detail::check_training(d, cfg, classes);
  for (int h : cfg.hidden)
    if (h < 1) throw InputError("hidden", "every layer width must be at least 1");
  const ctmc::ThreadScope threads(cfg.threads);
  const ctmc::EigenThreadScope eigen_serial(1);  // dense_kernels.hpp

  TrainResult res;
  res.net = init_mlp(d.features(), cfg.hidden, classes, cfg.activation, cfg.seed);
  res.net.validate("train");
  Mlp& net = res.net;
  const std::size_t L = net.layers.size();
  std::vector<detail::ResolvedActivation> acts;
  for (const auto& layer : net.layers) acts.push_back(detail::resolve_activation(layer.activation));

  AdamState adam;
  for (const auto& layer : net.layers) {
    adam.mW.push_back(Eigen::MatrixXf::Zero(layer.W.rows(), layer.W.cols()));
    adam.vW.push_back(adam.mW.back());
    adam.mb.push_back(Eigen::VectorXf::Zero(layer.b.size()));
    adam.vb.push_back(adam.mb.back());
  }

  const int n = d.size();
  const int batches = (n + cfg.batch_size - 1) / cfg.batch_size;
  std::vector<int> order(static_cast<std::size_t>(n)), batch_labels;
  Eigen::MatrixXf X;
  Workspace ws;
  std::int64_t step = 0;
  const auto t0 = std::chrono::steady_clock::now();

  for (int epoch = 1; epoch <= cfg.epochs; ++epoch) {
    detail::epoch_order(order, n, cfg.seed, epoch);
    double loss_sum = 0;
    int correct = 0;
    for (int bi = 0; bi < batches; ++bi) {
      const int start = bi * cfg.batch_size, B = std::min(cfg.batch_size, n - start);
      detail::gather_batch(d, order, start, B, X, batch_labels);
      backprop(net, acts, X, batch_labels, ws);
      loss_sum += ws.out.loss * B;
      correct += ws.out.correct;
      ++step;
      const auto [step_size, inv_sqrt_bc2] = detail::adam_step_factors(cfg, step);
      for (std::size_t l = 0; l < L; ++l) {
        auto& layer = net.layers[l];
        adam_update(layer.W.data(), ws.out.dW[l].data(), adam.mW[l].data(), adam.vW[l].data(), layer.W.size(), cfg, step_size, inv_sqrt_bc2);
        adam_update(layer.b.data(), ws.out.db[l].data(), adam.mb[l].data(), adam.vb[l].data(), layer.b.size(), cfg, step_size, inv_sqrt_bc2);
      }
      if (cfg.progress && (bi % 8 == 0 || bi + 1 == batches)) detail::draw_progress(epoch, cfg.epochs, bi + 1, batches, loss_sum / (start + B));
    }
    res.epochs.push_back({epoch, loss_sum / n, double(correct) / n});
  }
  if (cfg.progress) std::fprintf(stderr, "\n");
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!net.layers.back().W.allFinite()) throw InputError("train: the weights diverged to non-finite values (lower the learning rate)");
  return res;
}

LossGradients loss_gradients(const Mlp& net, const Eigen::MatrixXf& x, const std::vector<int>& labels) {
  net.validate("network");
  if (x.rows() != net.input_size()) throw InputError("loss_gradients: input rows differ from the network's input size");
  if (static_cast<Eigen::Index>(labels.size()) != x.cols() || x.cols() == 0)
    throw InputError("loss_gradients: need one label per input column (and at least one column)");
  for (int yl : labels)
    if (yl < 0 || yl >= net.output_size()) throw InputError("loss_gradients: label out of range");
  std::vector<detail::ResolvedActivation> acts;
  for (const auto& layer : net.layers) acts.push_back(detail::resolve_activation(layer.activation));
  const ctmc::EigenThreadScope eigen_serial(1);  // dense_kernels.hpp
  Workspace ws;
  backprop(net, acts, x, labels, ws);
  return ws.out;
}

}  // namespace ctmc::sim
