// Networks and neurons shared by the spiking-network tests (spiking_test,
// net_spiking_test, net_if_test, spiking_kernel_test).
#pragma once
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "ctmc/sim/nets/mlp.hpp"
#include "ctmc/sim/engines/spiking.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/solvers/model.hpp"

namespace ctmc::sim::testing {

// a = 1 + 2H, b = 1, c = 1/2 + H (spike), d = 2: a sigmoid-like rate curve.
inline solvers::Model three_state() {
  using solvers::Affine;
  using solvers::Rational;
  return solvers::three_state_model(Affine{Rational(1), Rational(2)}, Affine{Rational(1), 0},
                                    Affine{Rational(1, 2), Rational(1)}, Affine{Rational(2), 0});
}

// Weights on a dyadic grid (multiples of 1/8, biases of 1/16: k/8 and k/16,
// k uniform in -8..8, drawn from g in that order, layer by layer) so that
// H^1 = W x + b is exact for dyadic inputs and the exact reference can use
// the same rational H. Hidden layers `hidden`, the last linear.
inline Mlp dyadic_mlp(const std::vector<int>& sizes, const std::string& hidden, std::mt19937& g) {
  std::uniform_int_distribution<int> w(-8, 8);
  Mlp net;
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    DenseLayer d;
    d.W = Eigen::MatrixXf(sizes[l + 1], sizes[l]);
    d.b = Eigen::VectorXf(sizes[l + 1]);
    for (int i = 0; i < d.W.size(); ++i) d.W.data()[i] = w(g) / 8.0f;
    for (int i = 0; i < d.b.size(); ++i) d.b[i] = w(g) / 16.0f;
    d.activation = l + 2 == sizes.size() ? "linear" : hidden;
    net.layers.push_back(d);
  }
  return net;
}
// Hidden layers relu, the weights from a fresh generator seeded `seed`.
inline Mlp dyadic_mlp(const std::vector<int>& sizes, unsigned seed) {
  std::mt19937 g(seed);
  return dyadic_mlp(sizes, "relu", g);
}

// `count` spiking layers of model m, every rate times alpha.
inline std::vector<SpikingLayer> layers_of(const solvers::Model& m, std::size_t count, double alpha) {
  std::vector<SpikingLayer> v;
  for (std::size_t l = 0; l < count; ++l) v.push_back({NeuronKernel(m, alpha, "three-state"), alpha});
  return v;
}

// Two readings of the same path (or of paths that must agree bit for bit).
inline void check_same_reading(const SampleRun& a, const SampleRun& b) {
  CHECK(a.T == b.T);
  CHECK(a.prediction == b.prediction);
  CHECK(a.tie == b.tie);
  CHECK(a.counts == b.counts);
  CHECK(a.synops == b.synops);
  CHECK(a.spikes == b.spikes);
  CHECK(a.transitions == b.transitions);
  CHECK(a.euler_renormalized == b.euler_renormalized);
  CHECK(a.mean_output_input == b.mean_output_input);
}

}  // namespace ctmc::sim::testing
