// Internal: deterministic multi-threaded dense products and activations for
// mlp.cpp and train.cpp.
//
// Why not Eigen's own threading: Eigen's parallel GEMM picks its blocking
// from the thread count, so results could change with --threads. Here every
// product is split into a fixed set of row blocks that depends only on the
// matrix shapes; each block is one single-threaded Eigen product, and OpenMP
// only decides which thread computes which block. Every output element is
// therefore computed by the same instruction sequence whatever the thread
// count (DESIGN.md section 7: identical results for a given seed).
#pragma once
#include <omp.h>

#include <Eigen/Core>
#include <string>

#include "ctmc/activations/activation.hpp"
#include "ctmc/core/numeric_context.hpp"

namespace ctmc::sim::detail {

inline constexpr Eigen::Index kRowBlock = 32;

// Eigen single-threaded inside our blocks (see above): the products below
// and the functions that call them run under ctmc::EigenThreadScope(1)
// (numeric_context.hpp), which restores Eigen's setting when it ends.

// C = A * B, row blocks of C from row blocks of A.
void gemm_nn(Eigen::MatrixXf& C, const Eigen::MatrixXf& A, const Eigen::MatrixXf& B);
// C = A * B^T (weight gradients G * a^T), row blocks of C from row blocks of A.
void gemm_nt(Eigen::MatrixXf& C, const Eigen::MatrixXf& A, const Eigen::MatrixXf& B);
// C = A^T * B (back-propagation W^T g), row blocks of C from column blocks of A.
void gemm_tn(Eigen::MatrixXf& C, const Eigen::MatrixXf& A, const Eigen::MatrixXf& B);

// An activation resolved once per call: "linear", fast ReLU, or any
// activations::Activation evaluated elementwise.
struct ResolvedActivation {
  enum class Kind { Linear, Relu, General } kind = Kind::Linear;
  activations::Activation general;
};
ResolvedActivation resolve_activation(const std::string& name);

// z <- phi(z) in place; with dphi != nullptr also stores phi'(z) there (same shape).
void activate(const ResolvedActivation& act, Eigen::MatrixXf& z, Eigen::MatrixXf* dphi = nullptr);

}  // namespace ctmc::sim::detail
