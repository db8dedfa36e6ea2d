// Training: accuracy improves on a synthetic problem that needs the hidden
// layer, identical weights for any thread count, and seeds that matter.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "ctmc/sim/nets/train.hpp"
#include "ctmc/core/errors.hpp"

using namespace ctmc;
using namespace ctmc::sim;

namespace {

// Two interleaved 2-D spirals-like rings (class = ring index mod 3), embedded in
// 8 features (the last 6 are noise): not linearly separable, so a hidden layer
// is needed; a linear classifier can reach about 1/3 + a little.
Dataset rings(int n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  Dataset d;
  d.rows = 1;
  d.cols = 8;
  d.images.resize(8, n);
  for (int k = 0; k < n; ++k) {
    const int c = k % 3;
    const float r = 0.2f + 0.3f * c + 0.08f * u(g), t = 6.2831853f * u(g);
    d.images(0, k) = 0.5f + 0.5f * r * std::cos(t);
    d.images(1, k) = 0.5f + 0.5f * r * std::sin(t);
    for (int i = 2; i < 8; ++i) d.images(i, k) = u(g);
    d.labels.push_back(c);
  }
  return d;
}

}  // namespace

TEST_CASE("splitmix64 matches the reference generator (seed 0: first output 0xe220a8397b1dcdaf)") {
  CHECK(splitmix64(0) == 0xe220a8397b1dcdafULL);
}

TEST_CASE("training improves accuracy on a problem a linear model cannot solve") {
  const Dataset train = rings(1500, 1), test = rings(600, 2);
  TrainConfig c;
  c.hidden = {40, 20};
  c.epochs = 25;
  c.batch_size = 32;
  c.learning_rate = 3e-3f;
  c.seed = 5;
  const Mlp init = init_mlp(8, c.hidden, 3, c.activation, c.seed);
  const double before = init.accuracy(test);
  const auto r = train_mlp(train, c, 3);
  const double after = r.net.accuracy(test);
  MESSAGE("test accuracy before " << before << ", after " << after);
  CHECK(before < 0.5);
  CHECK(after > 0.9);
  CHECK(r.epochs.back().mean_loss < r.epochs.front().mean_loss);
  // The initial network of the run is init_mlp's (same seed, same stream).
  CHECK(r.epochs.size() == 25);
}

TEST_CASE("the same seed gives identical weights for 1 and 3 threads; another seed differs") {
  const Dataset train = rings(400, 3);
  TrainConfig c;
  c.hidden = {200, 100};  // several 32-row blocks per product, large enough to run in parallel
  c.epochs = 2;
  c.batch_size = 100;
  c.seed = 9;
  c.threads = 1;
  const auto a = train_mlp(train, c, 3);
  c.threads = 3;
  const auto b = train_mlp(train, c, 3);
  for (std::size_t l = 0; l < a.net.layers.size(); ++l) {
    CHECK(a.net.layers[l].W == b.net.layers[l].W);
    CHECK(a.net.layers[l].b == b.net.layers[l].b);
  }
  c.seed = 10;
  const auto d = train_mlp(train, c, 3);
  CHECK(a.net.layers[0].W != d.net.layers[0].W);
}

TEST_CASE("bad training input is an InputError") {
  Dataset d = rings(30, 4);
  TrainConfig c;
  c.epochs = 1;
  d.labels[3] = 7;
  CHECK_THROWS_WITH_AS(train_mlp(d, c, 3), doctest::Contains("label 7 of sample 3"), ctmc::InputError);
  d = rings(30, 4);
  c.epochs = 0;
  CHECK_THROWS_WITH_AS(train_mlp(d, c, 3), doctest::Contains("epochs: must be at least 1"), ctmc::InputError);
  c.epochs = 1;
  c.activation = "nosuch";
  CHECK_THROWS_AS(train_mlp(d, c, 3), ctmc::InputError);
  CHECK_THROWS_AS(train_mlp(Dataset{}, TrainConfig{}, 3), ctmc::InputError);
}
