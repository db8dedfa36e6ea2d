// MLP forward pass against hand arithmetic and closed-form activations;
// back-propagated gradients against central finite differences (an
// independent method) in double-checked float.
#include <doctest/doctest.h>

#include <cmath>

#include "ctmc/sim/formats/dataset.hpp"
#include "ctmc/sim/nets/mlp.hpp"
#include "ctmc/sim/nets/train.hpp"
#include "ctmc/core/errors.hpp"

using namespace ctmc::sim;

namespace {

// 3-2-2: W1 = [[1, 0, -1], [0.5, 2, 0]], b1 = (0, -1); W2 = [[1, -1], [2, 0.5]], b2 = (0.5, 0).
Mlp tiny(const std::string& act) {
  Mlp net;
  DenseLayer l1, l2;
  l1.W.resize(2, 3);
  l1.W << 1, 0, -1, 0.5, 2, 0;
  l1.b = Eigen::Vector2f(0, -1);
  l1.activation = act;
  l2.W.resize(2, 2);
  l2.W << 1, -1, 2, 0.5;
  l2.b = Eigen::Vector2f(0.5, 0);
  l2.activation = "linear";
  net.layers = {l1, l2};
  return net;
}

// True when every hidden unit is on the same linear piece (a <= 0, 0 < a < 4,
// a >= 4) for both networks, so a central difference sees no kink.
bool same_pattern(const Mlp& p, const Mlp& m, const Eigen::MatrixXf& x) {
  const auto hp = p.hidden_activations(x), hm = m.hidden_activations(x);
  for (std::size_t l = 0; l < hp.size(); ++l)
    for (Eigen::Index i = 0; i < hp[l].size(); ++i) {
      const float a = hp[l](i), b = hm[l](i);
      if ((a > 0) != (b > 0) || (a < 4) != (b < 4)) return false;
    }
  return true;
}

}  // namespace

TEST_CASE("forward pass of a hand-computed network, relu and sigmoid, with clipping") {
  Eigen::MatrixXf x(3, 2);
  x << 2, 0, 1, 1, 0.5, 3;  // columns (2, 1, 0.5) and (0, 1, 3)
  // relu, column 1: z1 = (2 - 0.5, 1 + 2 - 1) = (1.5, 2) -> a1 = (1.5, 2); z2 = (0.5 + 1.5 - 2, 3 + 1) = (0, 4).
  // relu, column 2: z1 = (-3, 2 - 1) = (-3, 1) -> (0, 1); z2 = (0.5 - 1, 0.5) = (-0.5, 0.5).
  const Mlp r = tiny("relu");
  const Eigen::MatrixXf z = r.forward(x);
  CHECK(z(0, 0) == 0.0f);
  CHECK(z(1, 0) == 4.0f);
  CHECK(z(0, 1) == -0.5f);
  CHECK(z(1, 1) == 0.5f);
  CHECK(r.predict(x) == std::vector<int>{1, 1});
  // Clip K = 1.75, column 1: a1 = (1.5, 1.75); z2 = (0.5 + 1.5 - 1.75, 3 + 0.875) = (0.25, 3.875).
  const Eigen::MatrixXf zc = r.forward(x, 1.75f);
  CHECK(zc(0, 0) == 0.25f);
  CHECK(zc(1, 0) == 3.875f);
  const auto hidden = r.hidden_activations(x, 1.75f);
  REQUIRE(hidden.size() == 1);
  CHECK(hidden[0](1, 0) == 1.75f);
  CHECK(hidden[0](0, 1) == 0.0f);

  // sigmoid, column 2: a1 = (s(-3), s(1)), z2 = (0.5 + s(-3) - s(1), 2 s(-3) + 0.5 s(1)).
  const auto s = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  const Eigen::MatrixXf zs = tiny("sigmoid").forward(x);
  CHECK(zs(0, 1) == doctest::Approx(0.5 + s(-3) - s(1)).epsilon(1e-6));
  CHECK(zs(1, 1) == doctest::Approx(2 * s(-3) + 0.5 * s(1)).epsilon(1e-6));

  // Ties go to the lowest index: logits (0, 0) when both outputs are equal.
  Mlp tie = tiny("relu");
  tie.layers[1].W.setZero();
  tie.layers[1].b.setZero();
  CHECK(tie.predict(x) == std::vector<int>{0, 0});
  Dataset d;
  d.images = x;
  d.labels = {1, 0};
  CHECK(r.accuracy(d) == 0.5);
}

TEST_CASE("validate rejects inconsistent networks") {
  Mlp net = tiny("relu");
  net.layers[1].W.resize(2, 3);
  net.layers[1].W.setOnes();
  CHECK_THROWS_WITH_AS(net.validate("n"), doctest::Contains("layer 2 takes 3 inputs but layer 1 gives 2"), ctmc::InputError);
  net = tiny("relu");
  net.layers[0].b.resize(3);
  net.layers[0].b.setZero();
  CHECK_THROWS_AS(net.validate("n"), ctmc::InputError);
  net = tiny("relu");
  net.layers[0].W(0, 0) = std::nanf("");
  CHECK_THROWS_WITH_AS(net.validate("n"), doctest::Contains("non-finite"), ctmc::InputError);
  CHECK_THROWS_AS(tiny("relu").forward(Eigen::MatrixXf::Zero(4, 1)), ctmc::InputError);
}

TEST_CASE("back-propagation matches central finite differences for every differentiable activation") {
  // Smooth activations, and relu/cliprelu away from their kinks (inputs chosen so no z is near 0 or K).
  for (const std::string act : {"sigmoid", "softplus", "tanh1", "sigmoid_shift_1", "relu", "cliprelu_4"}) {
    CAPTURE(act);
    Mlp net = init_mlp(5, {7, 6}, 4, act, 11);
    Eigen::MatrixXf x = Eigen::MatrixXf::Random(5, 3);
    const std::vector<int> y = {0, 3, 2};
    const auto g = loss_gradients(net, x, y);
    // Loss in double from the float forward pass; h balances truncation (h^2) and float rounding (eps/h).
    const auto loss = [&](const Mlp& m) {
      const Eigen::MatrixXf z = m.forward(x);
      double sum = 0;
      for (int k = 0; k < 3; ++k) {
        const Eigen::ArrayXd zd = z.col(k).cast<double>().array();
        sum += std::log((zd - zd.maxCoeff()).exp().sum()) + zd.maxCoeff() - zd(y[std::size_t(k)]);
      }
      return sum / 3;
    };
    CHECK(g.loss == doctest::Approx(loss(net)).epsilon(1e-5));
    const float h = 1e-2f;
    int checked = 0;
    for (std::size_t l = 0; l < net.layers.size(); ++l)
      for (Eigen::Index i = 0; i < net.layers[l].W.rows(); i += 2)
        for (Eigen::Index j = 0; j < net.layers[l].W.cols(); j += 3) {
          Mlp p = net, m = net;
          p.layers[l].W(i, j) += h;
          m.layers[l].W(i, j) -= h;
          if (!same_pattern(p, m, x)) continue;  // a relu/cliprelu kink between the two points
          const double fd = (loss(p) - loss(m)) / (2 * h);
          CHECK(g.dW[l](i, j) == doctest::Approx(fd).epsilon(2e-3).scale(1e-3));
          ++checked;
        }
    for (std::size_t l = 0; l < net.layers.size(); ++l) {
      Mlp p = net, m = net;
      p.layers[l].b(0) += h;
      m.layers[l].b(0) -= h;
      if (!same_pattern(p, m, x)) continue;
      CHECK(g.db[l](0) == doctest::Approx((loss(p) - loss(m)) / (2 * h)).epsilon(2e-3).scale(1e-3));
    }
    CHECK(checked > 10);
  }
}

TEST_CASE("check_network_fits: image size and every label must match the network") {
  ctmc::sim::Dataset d;
  d.rows = 2;
  d.cols = 2;
  d.images = Eigen::MatrixXf::Zero(4, 3);
  d.labels = {0, 9, 3};
  CHECK_NOTHROW(ctmc::sim::check_network_fits(d, 4, 10));
  // 9 outputs for labels up to 9: class 9 could never be predicted, and the
  // accuracy would silently mean something else.
  CHECK_THROWS_WITH_AS(ctmc::sim::check_network_fits(d, 4, 9),
                       doctest::Contains("labels go up to 9, but the network has only 9 outputs"), ctmc::InputError);
  CHECK_THROWS_WITH_AS(ctmc::sim::check_network_fits(d, 5, 10), doctest::Contains("images have 4 features"),
                       ctmc::InputError);
  CHECK_THROWS_AS(ctmc::sim::simulation_subset(d, 0, 4, 9), ctmc::InputError);
}
