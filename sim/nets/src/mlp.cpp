// Dense layers and the MLP forward pass (mlp.hpp), with the deterministic
// blocked products of dense_kernels.hpp.
#include "ctmc/sim/nets/mlp.hpp"
#include "prediction.hpp"

#include <cmath>
#include <mutex>

#include "ctmc/core/errors.hpp"
#include "ctmc/core/quote.hpp"
#include "ctmc/solvers/det_math.hpp"
#include "dense_kernels.hpp"
#include "ctmc/core/loop_errors.hpp"

namespace ctmc::sim {
namespace detail {
namespace {

// Forward-mode dual number v + d*eps: Activation::eval<Dual> returns phi(x)
// and phi'(x) together, for every activation activations/ knows (including
// tabulated ones), without a hand-written derivative per kind.
struct Dual {
  float v = 0, d = 0;
  Dual() = default;
  explicit Dual(double x) : v(static_cast<float>(x)) {}
  Dual(float v_, float d_) : v(v_), d(d_) {}
};
Dual operator+(Dual a, Dual b) { return {a.v + b.v, a.d + b.d}; }
Dual operator-(Dual a, Dual b) { return {a.v - b.v, a.d - b.d}; }
Dual operator-(Dual a) { return {-a.v, -a.d}; }
Dual operator*(Dual a, Dual b) { return {a.v * b.v, a.d * b.v + a.v * b.d}; }
Dual operator/(Dual a, Dual b) { return {a.v / b.v, (a.d * b.v - a.v * b.d) / (b.v * b.v)}; }
bool operator<(Dual a, Dual b) { return a.v < b.v; }
bool operator>(Dual a, Dual b) { return a.v > b.v; }
Dual exp(Dual a) {
  const float e = detmath::exp(a.v);
  return {e, e * a.d};
}
Dual log(Dual a) { return {detmath::log(a.v), a.d / a.v}; }
Dual tanh(Dual a) {
  const float t = detmath::tanh(a.v);
  return {t, (1 - t * t) * a.d};
}

// Products below this many multiply-adds run on the calling thread: starting
// a parallel region costs more than it saves. (The blocks, and so the
// results, are the same either way.)
constexpr double kParallelMinWork = 2e5;

// Eigen sizes a product's blocks from the cache sizes it reads from the CPU,
// and the depth block decides how many terms of each dot product are summed
// before they are added to the result (and which rows a smaller kernel
// handles): on a CPU with another L1 the float sums would round differently.
// Fixed sizes (a common x86-64 core's) give the same order on every machine.
void fix_eigen_cache_sizes() {
  static std::once_flag once;
  std::call_once(once, [] { Eigen::setCpuCacheSizes(32 * 1024, 512 * 1024, 32 * 1024 * 1024); });
}

template <class Kernel>
void for_row_blocks(Eigen::Index rows, double work, Kernel&& k) {
  fix_eigen_cache_sizes();
  const ctmc::EigenThreadScope eigen_serial(1);
  const Eigen::Index blocks = (rows + kRowBlock - 1) / kRowBlock;
  // Eigen may allocate temporaries (std::bad_alloc), which must not leave the parallel region.
  LoopErrors errors;
#pragma omp parallel for schedule(dynamic) if (blocks > 1 && work >= kParallelMinWork)
  for (Eigen::Index blk = 0; blk < blocks; ++blk) {
    errors.run(blk, [&] {
      const Eigen::Index r0 = blk * kRowBlock;
      k(r0, std::min(kRowBlock, rows - r0));
    });
  }
  errors.rethrow();
}

}  // namespace

void gemm_nn(Eigen::MatrixXf& C, const Eigen::MatrixXf& A, const Eigen::MatrixXf& B) {
  C.resize(A.rows(), B.cols());
  for_row_blocks(C.rows(), double(C.size()) * double(A.cols()), [&](Eigen::Index r, Eigen::Index n) { C.middleRows(r, n).noalias() = A.middleRows(r, n) * B; });
}

void gemm_nt(Eigen::MatrixXf& C, const Eigen::MatrixXf& A, const Eigen::MatrixXf& B) {
  C.resize(A.rows(), B.rows());
  for_row_blocks(C.rows(), double(C.size()) * double(A.cols()), [&](Eigen::Index r, Eigen::Index n) { C.middleRows(r, n).noalias() = A.middleRows(r, n) * B.transpose(); });
}

void gemm_tn(Eigen::MatrixXf& C, const Eigen::MatrixXf& A, const Eigen::MatrixXf& B) {
  C.resize(A.cols(), B.cols());
  for_row_blocks(C.rows(), double(C.size()) * double(A.rows()), [&](Eigen::Index r, Eigen::Index n) { C.middleRows(r, n).noalias() = A.middleCols(r, n).transpose() * B; });
}

ResolvedActivation resolve_activation(const std::string& name) {
  ResolvedActivation r;
  if (name == "linear") return r;
  r.general = activations::parse_activation(name, "activation");
  r.kind = r.general.kind == activations::ActivationKind::Relu ? ResolvedActivation::Kind::Relu : ResolvedActivation::Kind::General;
  return r;
}

void activate(const ResolvedActivation& act, Eigen::MatrixXf& z, Eigen::MatrixXf* dphi) {
  using K = ResolvedActivation::Kind;
  if (dphi) dphi->resize(z.rows(), z.cols());
  if (act.kind == K::Linear) {
    if (dphi) dphi->setOnes();
    return;
  }
  float* p = z.data();
  float* dp = dphi ? dphi->data() : nullptr;
  const Eigen::Index n = z.size();
  // Elementwise, so any split over threads gives identical results.
  if (act.kind == K::Relu) {
#pragma omp parallel for schedule(static) if (n > 100000)
    for (Eigen::Index i = 0; i < n; ++i) {
      if (dp) dp[i] = p[i] > 0 ? 1.0f : 0.0f;
      p[i] = p[i] > 0 ? p[i] : 0.0f;
    }
    return;
  }
#pragma omp parallel for schedule(static) if (n > 20000)
  for (Eigen::Index i = 0; i < n; ++i) {
    const Dual y = act.general.eval(Dual(p[i], 1.0f));
    p[i] = y.v;
    if (dp) dp[i] = y.d;
  }
}

}  // namespace detail

Eigen::MatrixXf DenseLayer::affine(const Eigen::MatrixXf& a) const {
  Eigen::MatrixXf z;
  detail::gemm_nn(z, W, a);
  z.colwise() += b;
  return z;
}

Eigen::MatrixXf DenseLayer::affine_transpose(const Eigen::MatrixXf& g) const {
  Eigen::MatrixXf r;
  detail::gemm_tn(r, W, g);
  return r;
}

void apply_activation(const std::string& name, Eigen::MatrixXf& z) { detail::activate(detail::resolve_activation(name), z); }

namespace {

// Runs the hidden layers, calling keep(l, a^l) after each; returns the logits.
template <class Keep>
Eigen::MatrixXf run(const Mlp& net, const Eigen::MatrixXf& x, float clip_k, Keep&& keep) {
  if (net.layers.empty()) throw InputError("network: no layers");
  if (x.rows() != net.input_size())
    throw InputError("network: input has " + std::to_string(x.rows()) + " features, the first layer expects " + std::to_string(net.input_size()));
  Eigen::MatrixXf a = x;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    Eigen::MatrixXf z = net.layers[l].affine(a);
    if (l + 1 == net.layers.size()) return z;
    detail::activate(detail::resolve_activation(net.layers[l].activation), z);
    // Clip-on-forward (paper section 4, Appendix "Clipping interpretation"):
    // every hidden activation clamped to [0, K] after phi.
    if (clip_k > 0) z = z.cwiseMax(0.0f).cwiseMin(clip_k);
    keep(l, z);
    a = std::move(z);
  }
  return a;  // unreachable
}

}  // namespace

Eigen::MatrixXf Mlp::forward(const Eigen::MatrixXf& x, float clip_k) const {
  return run(*this, x, clip_k, [](std::size_t, const Eigen::MatrixXf&) {});
}

std::vector<Eigen::MatrixXf> Mlp::hidden_activations(const Eigen::MatrixXf& x, float clip_k) const {
  std::vector<Eigen::MatrixXf> out;
  run(*this, x, clip_k, [&](std::size_t, const Eigen::MatrixXf& a) { out.push_back(a); });
  return out;
}

std::vector<int> Mlp::predict(const Eigen::MatrixXf& x, float clip_k) const {
  return argmax_columns(forward(x, clip_k));
}

double Mlp::accuracy(const Dataset& d, float clip_k) const {
  if (d.size() == 0) return 0.0;
  return accuracy_of(predict(d.images, clip_k), d);
}

void Mlp::validate(const std::string& what) const {
  if (layers.empty()) throw InputError(what, "network has no layers");
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const auto& L = layers[l];
    const std::string at = "layer " + std::to_string(l + 1);  // numbered from 1, as simulate prints
    if (L.W.rows() == 0 || L.W.cols() == 0) throw InputError(what, at + " has an empty weight matrix");
    if (L.b.size() != L.W.rows())
      throw InputError(what, at + " bias has " + std::to_string(L.b.size()) + " entries, weight has " +
                                 std::to_string(L.W.rows()) + " rows");
    if (l > 0 && L.W.cols() != layers[l - 1].W.rows())
      throw InputError(what, at + " takes " + std::to_string(L.W.cols()) + " inputs but layer " + std::to_string(l) +
                                 " gives " + std::to_string(layers[l - 1].W.rows()));
    if (!L.W.allFinite() || !L.b.allFinite()) throw InputError(what, at + " has a non-finite weight or bias");
    if (l + 1 == layers.size()) {
      if (L.activation != "linear")
        throw InputError(what, at + " (output) must be \"linear\" (its z are the logits), got " +
                                   quote_excerpt(L.activation));
    } else {
      try {
        (void)detail::resolve_activation(L.activation);
      } catch (const InputError& e) {
        throw InputError(what, at + ": " + e.what());
      }
      if (L.activation == "linear")
        throw InputError(what, at + " is hidden: it needs a nonlinear activation, not \"linear\"");
    }
  }
}

}  // namespace ctmc::sim
