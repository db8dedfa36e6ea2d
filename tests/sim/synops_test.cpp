// SynOps (paper eq. synops) and spike counts counted by hand on a chain of
// three spiking neurons 1 -> 1 -> 1 -> 1.
//
// Every neuron is two-state, a(H) = max(0, H) (spike B -> R), d = 100. With
// dt = 0.01 and H >= 100 the euler sampler has a dt >= 1 and d dt = 1, so it
// jumps with probability one every step (renormalized when a dt > 1): each
// neuron alternates B -> R (spike), R -> B, ... and fires exactly 5 times in
// T = 0.1 (10 steps). Layer 1 gets H = 100 * x = 100; layers 2, 3 get
// H = 100 + w x(t) >= 100 from their bias.
#include <doctest/doctest.h>

#include "ctmc/sim/engines/spiking.hpp"
#include "ctmc/solvers/families.hpp"

using namespace ctmc;
using namespace ctmc::sim;
using solvers::Affine;
using solvers::Rational;

namespace {

DenseLayer dense(float w, float b, const char* act) {
  DenseLayer d;
  d.W = Eigen::MatrixXf::Constant(1, 1, w);
  d.b = Eigen::VectorXf::Constant(1, b);
  d.activation = act;
  return d;
}

SampleRun run_chain(float w3, Readout readout) {
  Mlp net;
  net.layers = {dense(100, 0, "relu"), dense(1e-3f, 100, "relu"), dense(w3, 100, "linear")};
  const auto model = solvers::two_state_model(Affine{0, Rational(1)}, Affine{Rational(100), 0});
  std::vector<SpikingLayer> layers;
  const int S = readout == Readout::Spike ? 3 : 2;
  for (int l = 0; l < S; ++l) layers.push_back({NeuronKernel(model, 1.0, "two-state"), 1.0});
  SpikingConfig cfg;
  cfg.T = 0.1;
  cfg.dt = 0.01;
  cfg.tau = 0.02;
  cfg.sampler = SamplerKind::Euler;
  cfg.readout = readout;
  SpikingNetwork snn(net, std::move(layers), cfg);
  const float x = 1.0f;
  return snn.run(&x, 42);
}

}  // namespace

TEST_CASE("SynOps by hand on a three-neuron chain") {
  const SampleRun r = run_chain(1e-3f, Readout::Spike);
  REQUIRE(r.counts.size() == 3);
  CHECK(r.counts[0][0] == 5);
  CHECK(r.counts[1][0] == 5);
  CHECK(r.counts[2][0] == 5);
  // SynOps = N^1 fanout^1 + N^2 fanout^2 = 5 * 1 + 5 * 1; the output layer's
  // spikes are not transmitted.
  CHECK(r.synops == 10);
  CHECK(r.spikes == 15);
  CHECK(r.transitions == 30);
  CHECK(r.euler_renormalized > 0);  // a dt > 1 in layers 2 and 3 is flagged
  CHECK(r.prediction == 0);
}

TEST_CASE("a zero weight is no fanout") {
  // W^3 = 0: neuron 2 has no outgoing synapse, SynOps = 5 * 1 + 5 * 0.
  const SampleRun r = run_chain(0.0f, Readout::Spike);
  CHECK(r.synops == 5);
  CHECK(r.spikes == 15);
}

TEST_CASE("integrating readout: the output layer does not spike") {
  const SampleRun r = run_chain(1e-3f, Readout::Integrate);
  REQUIRE(r.counts.size() == 2);
  CHECK(r.synops == 10);
  CHECK(r.spikes == 10);
  // Time-averaged H^3 = 100 + 1e-3 * mean trace; the trace after the first
  // spike (end of step 0) is positive, so the average exceeds 100.
  CHECK(r.mean_output_input[0] > 100.0);
}
