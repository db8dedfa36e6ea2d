// Deterministic mean-field network (DESIGN.md section 7; paper eq. decomp).
//
// Each spiking neuron is replaced by its stationary rate: with decoded
// activations a^l = nu_l(H^l),
//   H^1 = W^1 x + b^1,   H^l = W^l a^{l-1} + b^l   (l = 2..L),
// where for a CTMC neuron nu_l(H) = F_theta(H) / alpha_fit, the stationary
// flux of the fitted (unscaled) chain over the fit's scale. The layer scale
// alpha_l cancels: the SNN's layer-l neurons fire at (alpha_l / alpha_fit)
// F_theta(H) and layer l+1 divides by alpha_l again. So A_MF does not depend
// on --rate; it isolates the mismatch between F_theta / alpha_fit and phi.
// Readout: `spike` applies nu_L to the output layer too (prediction = argmax
// of a^L, ties by H^L, then the lowest index); `integrate` predicts argmax H^L.
//
// Internal header of sim (not installed): simulate_network (network_sim.hpp)
// reports A_MF from it; the library and its tests include it as
// "meanfield.hpp" (tests/CMakeLists.txt gives them sim/src).
#pragma once
#include <Eigen/Core>
#include <functional>
#include <vector>

#include "ctmc/sim/nets/mlp.hpp"
#include "ctmc/sim/nets/net.hpp"
#include "ctmc/sim/neurons/neuron_kernel.hpp"
#include "ctmc/sim/engines/spiking.hpp"

namespace ctmc::sim {

using RateFunction = std::function<double(double)>;

// nu(H) = F_theta(H) / alpha_fit, from the kernel's double GTH.
RateFunction ctmc_rate_function(const NeuronKernel& unscaled, double alpha_fit);

struct MeanFieldResult {
  int prediction = -1;
  std::vector<Eigen::VectorXd> activations;  // a^1 .. a^S (S = rate.size())
  std::vector<Eigen::VectorXd> inputs;       // H^1 .. H^S, the spiking layers' inputs
  Eigen::VectorXd output_input;              // H^L
};

// `rate` has one function per spiking layer: L-1 for readout = integrate, L
// for readout = spike (InputError otherwise). x holds input_size floats.
MeanFieldResult mean_field_forward(const Mlp& net, const float* x, const std::vector<RateFunction>& rate,
                                   Readout readout);

// The same for one sample of a layer graph, in float as the ANN forward
// (mean_field_predict's numbers): inputs and activations per spiking layer
// (the stages of net_synapse.hpp).
MeanFieldResult mean_field_forward(const Net& net, const float* x, const std::vector<RateFunction>& rate,
                                   Readout readout);

// The mean field of a layer graph (net.hpp), a batch at a time: every
// nonlinear activation replaced by its rate function, in float as the ANN
// forward; pooling and flatten act on the rates as on activations. `rate`
// has one function per nonlinear layer, plus one for the output layer with
// readout = spike (prediction: argmax of the output rates, ties by H^L, then
// the lowest index); with integrate, argmax of H^L. Returns the predictions.
std::vector<int> mean_field_predict(const Net& net, const Eigen::MatrixXf& x, const std::vector<RateFunction>& rate,
                                    Readout readout);

}  // namespace ctmc::sim
