// Training layer graphs (DESIGN.md section 7: "train / import"): convolutions,
// BatchNorm in training mode, pooling, flatten and linear layers, with the
// softmax cross-entropy, Adam, initialisation and seeding of the MLP training
// (train.hpp), and the VGG-11 networks of the paper's deep experiments.
//
// Layouts. A batch of images is a matrix of (batch*H*W) rows and C columns,
// "pixel rows": row s*H*W + y*W + x holds sample s's pixel (y, x), one
// column per channel. A channel is then one contiguous column (BatchNorm's
// statistics), and a convolution is one product: its im2col matrix (a row
// per output pixel of every sample, a column per (input channel, u, v) in
// PyTorch's weight order) times the weights. A flat batch is a matrix of
// features x batch as the MLP uses. Flatten turns pixel rows into flat
// columns in PyTorch's C-H-W order (torch.flatten(x, 1)); the network's
// input is given as Dataset columns (C-H-W per sample) and turned into pixel
// rows first.
//
// Layers (each an operation, then an elementwise activation, "linear" for none):
//   conv2d       as net.hpp, bias optional; weight [out, in, kh, kw] held as
//                the K x out column-major matrix (K = in*kh*kw) that is the
//                same bytes as the row-major tensor.
//   batchnorm2d  training: y = gamma (x - mu_B) / sqrt(var_B + eps) + beta with
//                the batch's mean and biased variance over batch*H*W values per
//                channel; running_mean and running_var move by momentum 0.1
//                towards mu_B and the unbiased variance var_B * n/(n-1)
//                (torch.nn.BatchNorm2d); num_batches_tracked counts the
//                steps. Evaluation uses the running estimates.
//   avgpool2d, maxpool2d, flatten, linear   as net.hpp (max pooling sends
//                the gradient to the first maximum of each window).
// Statistics and bias gradients are summed in double in a fixed order, and
// every product is a blocked product of dense_kernels.hpp, so one seed gives
// bit-identical weights for any thread count.
//
// Written as a PyTorch state_dict would be (manifest.hpp): BatchNorm
// unfolded (weight, bias, running_mean, running_var, and num_batches_tracked
// as an I64 scalar), each tensor named <module>.weight etc. after the
// module's place in torchvision's VGG (features.<i>, classifier); load_net
// folds the BatchNorm into its convolution, which is eval mode.
#pragma once
#include <Eigen/Core>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ctmc/sim/formats/dataset.hpp"
#include "ctmc/sim/nets/net.hpp"
#include "ctmc/sim/formats/safetensors.hpp"
#include "ctmc/sim/nets/train.hpp"

namespace ctmc::sim {

enum class TrainOp { Conv2d, BatchNorm2d, AvgPool2d, MaxPool2d, Flatten, Linear };

struct TrainLayer {
  TrainOp op = TrainOp::Linear;
  std::string name;                   // module path, the prefix of its tensors ("features.0")
  std::string activation = "linear";  // applied after the operation
  std::string activation_module;      // the activation's module path for the manifest ("features.2"), may be empty
  Window2d win;                       // Conv2d, pooling
  bool count_include_pad = true;      // AvgPool2d
  bool has_bias = true;               // Conv2d, Linear
  int out_features = 0;               // Conv2d: out channels; Linear: out features
  double momentum = 0.1, eps = 1e-5;  // BatchNorm2d

  // Parameters, sized by init_train_net. Conv2d: weight K x out (above);
  // Linear: weight out x in; BatchNorm2d: weight = gamma (C x 1), bias = beta.
  Eigen::MatrixXf weight;
  Eigen::VectorXf bias;  // empty when has_bias is false
  Eigen::VectorXf running_mean, running_var;
  std::int64_t num_batches_tracked = 0;

  Shape3 in, out;  // set by TrainNet::infer_shapes
  bool trainable() const { return op == TrainOp::Conv2d || op == TrainOp::BatchNorm2d || op == TrainOp::Linear; }
};

struct TrainNet {
  Shape3 input;
  std::vector<TrainLayer> layers;
  std::string arch;  // for the manifest's meta: "vgg11-mnist", ...

  // Sets every layer's in/out from `input`; throws InputError("<what>: layer N
  // ...") where shapes do not chain (a kernel larger than its padded input, a
  // linear layer on an image, a BatchNorm on a flat input, ...).
  void infer_shapes(const std::string& what);
  int input_size() const { return static_cast<int>(input.size()); }
  int output_size() const { return layers.empty() ? 0 : static_cast<int>(layers.back().out.size()); }
};

// The VGG-11 networks of the paper's deep experiments (section 4), chosen by
// the image shape. VGG-11's plan (Simonyan & Zisserman 2015, configuration
// A) is 64, M, 128, M, 256, 256, M, 512, 512, M, 512, 512, M: eight 3x3
// convolutions (padding 1), each followed by BatchNorm2d and the activation,
// and five 2x downsamplings M, then one linear classifier on the 512 x 1 x 1
// features (the CIFAR VGG's head; 2^5 halvings take 28 or 32 pixels to 1).
//  - [1, 28, 28] (MNIST family): the paper's "strided-convolution VGG-11".
//    Each M is a 3x3 convolution of stride 2 and padding 1 keeping the
//    channels (28 -> 14 -> 7 -> 4 -> 2 -> 1), with its BatchNorm and
//    activation: 13 convolutions and the classifier, the 14 layers whose
//    preactivation quantiles Figure 5C shows.
//  - [3, 32, 32] (CIFAR-10): the standard VGG-11 with BatchNorm, each M a
//    2x2 average pooling of stride 2 (32 -> 16 -> 8 -> 4 -> 2 -> 1). Average,
//    not max pooling: the spiking engines refuse max pooling (the maximum of
//    spike trains is not the spike train of the maximum; averaging spike
//    traces is exact, net_synapse.hpp).
// Channel counts are the plan's times `width`, rounded, at least 1 (0.125
// gives 8, 16, 32, 64). Convolutions before a BatchNorm have no bias (its
// beta is the bias). Throws InputError("arch", ...) for another image shape
// and InputError("width", ...) unless 0 < width <= 16.
TrainNet vgg11(const Shape3& input, double width, const std::string& activation, int classes = 10);
// The eight convolution widths of vgg11 at `width`.
std::vector<int> vgg11_channels(double width);

// PyTorch's default initialisation (conv and linear weights and biases
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = in*kh*kw; BatchNorm gamma 1,
// beta 0, running mean 0, variance 1), layer l's draws from stream l of
// train.hpp's initialisation purpose, in the tensors' row-major order.
void init_train_net(TrainNet& net, std::uint64_t seed);

// Dataset columns (C-H-W per sample) to pixel rows and back (above).
Eigen::MatrixXf to_pixel_rows(const Eigen::MatrixXf& columns, const Shape3& s);
Eigen::MatrixXf to_sample_columns(const Eigen::MatrixXf& pixel_rows, const Shape3& s);

// What one layer's backward pass needs from its forward pass.
struct LayerCache {
  Eigen::MatrixXf patches;              // Conv2d: im2col of the input
  Eigen::MatrixXf xhat;                 // BatchNorm2d: the normalised input
  std::vector<double> mean, var, invstd;  // BatchNorm2d: the batch statistics (var biased)
  std::vector<int> argmax;              // MaxPool2d: the input row of each output value's maximum
  Eigen::MatrixXf dphi;                 // phi'(z) (empty for "linear")
};
struct LayerGrad {
  Eigen::MatrixXf dweight;  // the shape of weight
  Eigen::VectorXf dbias;    // the shape of bias
};

// One layer on a batch of `batch` samples (layout above): y = phi(op(x)).
// training: BatchNorm normalises with the batch statistics (else the running
// estimates); running statistics are not changed here.
void train_layer_forward(const TrainLayer& L, int batch, const Eigen::MatrixXf& x, Eigen::MatrixXf& y, LayerCache& cache,
                         bool training);
// dy: dloss/dy on entry (overwritten by dloss/dz); fills g with the parameter
// gradients and, when dx is not null, dloss/dx.
void train_layer_backward(const TrainLayer& L, int batch, const Eigen::MatrixXf& x, const LayerCache& cache, Eigen::MatrixXf& dy,
                          Eigen::MatrixXf* dx, LayerGrad& g);

struct NetLossGradients {
  double loss = 0;  // mean softmax cross-entropy over the batch
  int correct = 0;
  std::vector<LayerGrad> grads;  // one per layer (empty for layers without parameters)
  Eigen::MatrixXf dinput;        // dloss/dx in the input's Dataset layout
  std::vector<LayerCache> caches;  // the forward pass's (BatchNorm's batch statistics)
};
// The loss of a batch (x: Dataset columns) in training mode and its gradients.
NetLossGradients train_net_loss_gradients(const TrainNet& net, const Eigen::MatrixXf& x, const std::vector<int>& labels);
// Logits (classes x batch) in evaluation mode (BatchNorm by its running estimates).
Eigen::MatrixXf train_net_eval_logits(const TrainNet& net, const Eigen::MatrixXf& x);

struct NetTrainResult {
  TrainNet net;
  std::vector<EpochStats> epochs;
  double seconds = 0;
};
// Mini-batch Adam training as train_mlp (cfg's hidden and activation are
// unused: the network is given, initialised by init_train_net with cfg.seed).
// Throws InputError for an empty set, a label out of range, images that are
// not the network's input size, or a bad configuration.
NetTrainResult train_net(const Dataset& d, TrainNet net, const TrainConfig& cfg);

// train_net's check that some batch trains: where a BatchNorm sees 1x1
// pixels, a batch of one image has no batch variance and train_net leaves it
// out, so batches of one image only (cfg.batch_size 1, or one training image)
// would take no step and return the initial weights. InputError naming
// "batch_size" or "data" and that BatchNorm.
void check_some_batch_trains(const TrainNet& net, const Dataset& d, const TrainConfig& cfg);

// train_net's memory (TrainMemory) for this net (its shapes inferred) on
// batches of `batch` images: per layer its output, the caches its backward
// pass keeps (a convolution's im2col patches, BatchNorm's normalised input,
// max pooling's argmax, phi'), plus the largest patch gradient and the two
// gradient buffers of the backward pass; scored by Net::forward_bytes's
// count for 256 images on `threads` threads.
TrainMemory train_net_memory(const TrainNet& net, int batch, int threads);

// The manifest (manifest.hpp) and the state_dict tensors of a trained net.
nlohmann::json train_net_manifest(const TrainNet& net, SafetensorsFile& tensors, const nlohmann::json& meta);
// The net as load_net reads it back from those files (BatchNorm folded).
Net train_net_as_loaded(const TrainNet& net);
// Writes the manifest and <stem>.safetensors beside it, both or neither.
void save_train_net(const std::string& manifest_path, const TrainNet& net, const nlohmann::json& meta);

}  // namespace ctmc::sim
