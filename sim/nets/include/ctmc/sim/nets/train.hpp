// Training source ANNs (DESIGN.md section 7): an MLP in-hidden...-classes with
// softmax cross-entropy and Adam (Kingma & Ba 2015, with PyTorch's
// bias-corrected update), mini-batches in an order reshuffled every epoch.
//
// Initialisation follows PyTorch's nn.Linear default, so results are
// comparable to a plain PyTorch run: W, b ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
//
// Reproducibility: every random draw (initial weights per layer, the order of
// each epoch) comes from its own std::mt19937_64 seeded with
// numbered_stream_seed(seed, purpose, layer or epoch) (seeding.hpp), and every product is split into thread-independent blocks
// (see sim/nets/src/dense_kernels.hpp), so a given seed gives bit-identical weights
// for any thread count.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "ctmc/sim/nets/mlp.hpp"
#include "ctmc/core/seeding.hpp"

namespace ctmc::sim {

struct TrainConfig {
  std::vector<int> hidden = {256, 128};
  std::string activation = "relu";  // any activation name (parse_activation), used for every hidden layer
  int epochs = 15;
  int batch_size = 64;
  float learning_rate = 1e-3f;
  float beta1 = 0.9f, beta2 = 0.999f, adam_eps = 1e-8f;
  std::uint64_t seed = 0;
  int threads = 0;        // > 0: OpenMP threads for the run; 0: the current default
  bool progress = false;  // draw a progress bar on stderr (the CLI enables it only on a TTY)
};

struct EpochStats {
  int epoch = 0;              // 1-based
  double mean_loss = 0;       // mean cross-entropy over the epoch's samples (weights as they were when each batch was seen)
  double train_accuracy = 0;  // same, fraction of samples classified correctly
};

struct TrainResult {
  Mlp net;
  std::vector<EpochStats> epochs;
  double seconds = 0;  // wall time of the training loop
};

// Mean softmax cross-entropy of a batch (x: in x batch, labels in
// [0, classes)) and its gradient with respect to every W^l and b^l, by
// back-propagation: delta^L = (softmax(z^L) - onehot(y)) / batch,
// dW^l = delta^l a^{l-1 T}, db^l = sum over the batch of delta^l,
// delta^{l-1} = (W^{l T} delta^l) .* phi'(z^{l-1}).
struct LossGradients {
  double loss = 0;  // mean over the batch
  int correct = 0;  // samples whose argmax logit is the label
  std::vector<Eigen::MatrixXf> dW;
  std::vector<Eigen::VectorXf> db;
};
LossGradients loss_gradients(const Mlp& net, const Eigen::MatrixXf& x, const std::vector<int>& labels);

// The 64-bit hash that derives independent stream seeds (ctmc/core/seeding.hpp).

// An untrained network with PyTorch's default initialisation; the output layer is "linear".
Mlp init_mlp(int inputs, const std::vector<int>& hidden, int classes, const std::string& activation, std::uint64_t seed);

// What a training run (train, then the trained network scored and written)
// holds in memory at its peak, estimated before anything is allocated, at 4
// bytes a value: while training, the weights, their gradients, Adam's two
// moments, a product's temporary of the largest layer and one batch's
// activations and caches; then the weights, the network as read back and
// the forward pass that scores it; then the weights, the network, the
// tensors as doubles, the file's bytes and their copies on the way (measured:
// about 24 bytes a parameter; 28 are counted).
struct TrainMemory {
  double parameters = 0;        // the parameter count
  double largest_layer = 0;     // the most parameters of one layer
  double batch_bytes = 0;       // one training batch's activations, caches and gradients
  double evaluation_bytes = 0;  // the forward pass that scores the trained network
  double bytes() const {
    const double training = 4 * (4 * parameters + largest_layer) + batch_bytes;
    const double scoring = 4 * 2 * parameters + evaluation_bytes;
    const double writing = 4 * 7 * parameters;
    return std::max({training, scoring, writing});
  }
};
// An MLP of these widths (init_mlp) on batches of `batch` samples, scored on
// `scored` samples at once (Mlp::accuracy forwards a whole split).
TrainMemory mlp_train_memory(int inputs, const std::vector<int>& hidden, int classes, int batch, int scored);

// Trains on d (labels in [0, classes)). Throws ctmc::InputError for an empty
// data set, a label out of range, or a bad configuration (naming the option).
TrainResult train_mlp(const Dataset& d, const TrainConfig& cfg, int classes = 10);

}  // namespace ctmc::sim
