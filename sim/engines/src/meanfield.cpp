#include "meanfield.hpp"

#include <fmt/format.h>

#include "ctmc/core/errors.hpp"

namespace ctmc::sim {

RateFunction ctmc_rate_function(const NeuronKernel& unscaled, double alpha_fit) {
  return [k = unscaled, alpha_fit](double H) { return k.flux(H) / alpha_fit; };
}

MeanFieldResult mean_field_forward(const Mlp& net, const float* x, const std::vector<RateFunction>& rate,
                                   Readout readout) {
  const std::size_t L = net.layers.size();
  const std::size_t S = spiking_layer_count(net, readout);
  if (rate.size() != S)
    throw InputError(fmt::format("mean field: {} rate functions given, readout '{}' needs {}", rate.size(),
                                 readout_name(readout), S));
  MeanFieldResult out;
  Eigen::VectorXd a = Eigen::Map<const Eigen::VectorXf>(x, net.input_size()).cast<double>();
  for (std::size_t l = 0; l < L; ++l) {
    const auto& layer = net.layers[l];
    Eigen::VectorXd h = layer.b.cast<double>();
    for (Eigen::Index i = 0; i < layer.W.cols(); ++i)
      if (a[i] != 0.0)
        for (Eigen::Index r = 0; r < layer.W.rows(); ++r) h[r] += a[i] * layer.W(r, i);
    if (l + 1 == L) out.output_input = h;
    if (l < S) {
      out.inputs.push_back(h);
      for (Eigen::Index r = 0; r < h.size(); ++r) h[r] = rate[l](h[r]);
      out.activations.push_back(h);
    }
    a = std::move(h);
  }
  const Eigen::VectorXd& hL = out.output_input;
  int best = 0;
  for (int j = 1; j < static_cast<int>(hL.size()); ++j) {
    if (S == L) {
      const Eigen::VectorXd& aL = out.activations.back();
      if (aL[j] > aL[best] || (aL[j] == aL[best] && hL[j] > hL[best])) best = j;
    } else if (hL[j] > hL[best]) {
      best = j;
    }
  }
  out.prediction = best;
  return out;
}

MeanFieldResult mean_field_forward(const Net& net, const float* x, const std::vector<RateFunction>& rate,
                                   Readout readout) {
  const std::size_t S = spiking_layer_count(net, readout);
  if (rate.size() != S)
    throw InputError(fmt::format("mean field: {} rate functions given, readout '{}' needs {}", rate.size(),
                                 readout_name(readout), S));
  MeanFieldResult out;
  const auto nu = [&](std::size_t s, Eigen::MatrixXf& z) {
    out.inputs.push_back(z.col(0).cast<double>());
    for (Eigen::Index i = 0; i < z.size(); ++i) z.data()[i] = static_cast<float>(rate[s](z.data()[i]));
    out.activations.push_back(z.col(0).cast<double>());
  };
  const Eigen::MatrixXf h = net.forward_with(Eigen::Map<const Eigen::MatrixXf>(x, net.input_size(), 1), nu);
  out.output_input = h.col(0).cast<double>();
  Eigen::MatrixXf a = h;
  if (readout == Readout::Spike) nu(S - 1, a);
  Eigen::Index best = 0;
  for (Eigen::Index i = 1; i < h.rows(); ++i)
    if (a(i, 0) > a(best, 0) || (a(i, 0) == a(best, 0) && h(i, 0) > h(best, 0))) best = i;
  out.prediction = static_cast<int>(best);
  return out;
}

std::vector<int> mean_field_predict(const Net& net, const Eigen::MatrixXf& x, const std::vector<RateFunction>& rate,
                                    Readout readout) {
  const std::size_t S = net.nonlinear_layer_count() + (readout == Readout::Spike ? 1 : 0);
  if (rate.size() != S)
    throw InputError(fmt::format("mean field: {} rate functions given, readout '{}' needs {}", rate.size(),
                                 readout_name(readout), S));
  const auto nu = [&](std::size_t s, Eigen::MatrixXf& z) {
    for (Eigen::Index i = 0; i < z.size(); ++i) z.data()[i] = static_cast<float>(rate[s](z.data()[i]));
  };
  const Eigen::MatrixXf h = net.forward_with(x, nu);
  Eigen::MatrixXf a = h;
  if (readout == Readout::Spike) nu(S - 1, a);
  std::vector<int> out(static_cast<std::size_t>(h.cols()));
  for (Eigen::Index j = 0; j < h.cols(); ++j) {
    Eigen::Index best = 0;
    for (Eigen::Index i = 1; i < h.rows(); ++i)
      if (a(i, j) > a(best, j) || (a(i, j) == a(best, j) && h(i, j) > h(best, j))) best = i;
    out[static_cast<std::size_t>(j)] = static_cast<int>(best);
  }
  return out;
}

}  // namespace ctmc::sim
