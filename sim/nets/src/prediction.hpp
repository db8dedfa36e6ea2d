// Predictions and accuracy from output scores, shared by the MLP and the
// layer-graph networks (internal to sim/).
#pragma once
#include <Eigen/Core>
#include <cstddef>
#include <vector>

#include "ctmc/sim/formats/dataset.hpp"

namespace ctmc::sim {

// The argmax of each column of z (one sample a column); ties go to the
// lowest index.
inline std::vector<int> argmax_columns(const Eigen::MatrixXf& z) {
  std::vector<int> out(static_cast<std::size_t>(z.cols()));
  for (Eigen::Index j = 0; j < z.cols(); ++j) {
    Eigen::Index best = 0;
    for (Eigen::Index i = 1; i < z.rows(); ++i)
      if (z(i, j) > z(best, j)) best = i;  // strict: ties go to the lowest index
    out[static_cast<std::size_t>(j)] = static_cast<int>(best);
  }
  return out;
}

// The share of `pred` equal to d's labels (0 for an empty set).
inline double accuracy_of(const std::vector<int>& pred, const Dataset& d) {
  if (pred.empty()) return 0.0;
  int correct = 0;
  for (std::size_t i = 0; i < pred.size(); ++i) correct += pred[i] == d.labels[i];
  return double(correct) / double(pred.size());
}

}  // namespace ctmc::sim
