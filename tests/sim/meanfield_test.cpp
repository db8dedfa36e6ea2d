// Mean-field network (meanfield.hpp): with nu_theta = phi it must reproduce
// the ANN. The reference ANN below is an independent double-precision forward
// pass whose activation is the neuron's closed-form flux (families.hpp).
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "meanfield.hpp"  // sim/src (internal): the mean-field network
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/families.hpp"

using namespace ctmc;
using namespace ctmc::sim;
using solvers::Affine;
using solvers::Rational;

namespace {

Mlp random_mlp(const std::vector<int>& sizes, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> w(0.0f, 1.0f);
  Mlp net;
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    DenseLayer d;
    d.W = Eigen::MatrixXf(sizes[l + 1], sizes[l]);
    d.b = Eigen::VectorXf(sizes[l + 1]);
    for (int i = 0; i < d.W.size(); ++i) d.W.data()[i] = w(g);
    for (int i = 0; i < d.b.size(); ++i) d.b[i] = 0.5f * w(g);
    d.activation = l + 2 == sizes.size() ? "linear" : "relu";
    net.layers.push_back(d);
  }
  return net;
}

// Independent forward pass: plain loops over W(r, i) in input order.
std::vector<std::vector<double>> reference_forward(const Mlp& net, const std::vector<double>& x,
                                                   const std::function<double(double)>& phi, bool spike_readout) {
  std::vector<std::vector<double>> out;
  std::vector<double> a = x;
  for (std::size_t l = 0; l < net.layers.size(); ++l) {
    const auto& L = net.layers[l];
    std::vector<double> z(L.W.rows());
    for (int r = 0; r < L.W.rows(); ++r) {
      double s = L.b[r];
      for (int i = 0; i < L.W.cols(); ++i) s += static_cast<double>(L.W(r, i)) * a[i];
      z[r] = s;
    }
    const bool last = l + 1 == net.layers.size();
    if (!last || spike_readout)
      for (double& v : z) v = phi(v);
    out.push_back(z);
    a = z;
  }
  return out;
}

}  // namespace

TEST_CASE("mean-field network equals the ANN when nu_theta = phi") {
  // Two-state neuron a = max(0, H), d = 2, alpha_fit = 1/2:
  //   nu(H) = F(H) / alpha_fit = 2 * 2 relu(H) / (relu(H) + 2).
  auto two = solvers::two_state_model(Affine{0, Rational(1)}, Affine{Rational(2), 0});
  two.meta["alpha_fit"] = "1/2";
  // Three-state neuron a = 1 + 2H, b = 1, c = 1/2 + H (spike), d = 2 (eq. 2).
  const auto three = solvers::three_state_model(Affine{Rational(1), Rational(2)}, Affine{Rational(1), 0},
                                                Affine{Rational(1, 2), Rational(1)}, Affine{Rational(2), 0});
  const std::function<double(double)> phi_two = [](double h) {
    const double a = std::max(0.0, h);
    return 2 * solvers::two_state_flux(a, 2.0).value();
  };
  const std::function<double(double)> phi_three = [](double h) {
    return solvers::three_state_flux(std::max(0.0, 1 + 2 * h), 1.0, std::max(0.0, 0.5 + h), 2.0).value();
  };
  const Mlp net = random_mlp({6, 5, 4, 3}, 7);
  std::mt19937 g(3);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  int checked = 0;
  for (const auto& [model, phi] : {std::pair{two, phi_two}, std::pair{three, phi_three}}) {
    const NeuronKernel k(model, 1.0, "neuron");
    const double afit = alpha_fit_of(model, "neuron");
    for (Readout readout : {Readout::Spike, Readout::Integrate}) {
      const std::size_t S = readout == Readout::Spike ? 3 : 2;
      const std::vector<RateFunction> rates(S, ctmc_rate_function(k, afit));
      for (int s = 0; s < 50; ++s) {
        std::vector<float> xf(6);
        for (auto& v : xf) v = u(g);
        const std::vector<double> x(xf.begin(), xf.end());
        const auto ref = reference_forward(net, x, phi, readout == Readout::Spike);
        const MeanFieldResult mf = mean_field_forward(net, xf.data(), rates, readout);
        REQUIRE(mf.activations.size() == S);
        for (std::size_t l = 0; l < S; ++l)
          for (std::size_t j = 0; j < ref[l].size(); ++j) {
            CHECK(mf.activations[l][j] == doctest::Approx(ref[l][j]).epsilon(1e-12).scale(1e-300));
            ++checked;
          }
        // Prediction: argmax of the (independently computed) last layer.
        const auto& last = ref.back();
        int best = 0;
        for (int j = 1; j < 3; ++j)
          if (last[j] > last[best]) best = j;
        CHECK(mf.prediction == best);
      }
    }
  }
  CHECK(checked > 500);
}

TEST_CASE("mean field rejects a wrong number of rate functions") {
  const Mlp net = random_mlp({3, 2, 2}, 1);
  const float x[3] = {0, 0, 0};
  const std::vector<RateFunction> one(1, [](double h) { return h; });
  CHECK_THROWS_AS(mean_field_forward(net, x, one, Readout::Spike), ctmc::InputError);
  CHECK_NOTHROW(mean_field_forward(net, x, one, Readout::Integrate));
}
