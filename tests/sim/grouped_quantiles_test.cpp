// Quantiles of a grouped sample and of its bootstrap resamples
// (grouped_quantiles.hpp), against the pooled sample written out value by
// value and read by network_sim's percentile (nth_element): the same number,
// bit for bit, for every level, weighting and sign of the values.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "ctmc/core/errors.hpp"
#include "ctmc/sim/engines/network_sim.hpp"
#include "ctmc/sim/studies/grouped_quantiles.hpp"

using namespace ctmc::sim;

namespace {

// Groups of random sizes; values with ties, zeros of both signs and negatives.
std::vector<std::vector<float>> random_groups(std::mt19937_64& gen, int groups) {
  std::uniform_int_distribution<int> size(0, 40), pick(0, 9);
  std::normal_distribution<float> normal(0.f, 3.f);
  std::vector<std::vector<float>> out(static_cast<std::size_t>(groups));
  for (auto& g : out) {
    const int n = size(gen);
    for (int i = 0; i < n; ++i) {
      const int c = pick(gen);
      g.push_back(c == 0 ? 0.f : c == 1 ? -0.f : c == 2 ? 1.5f : normal(gen));
    }
  }
  if (out[0].empty()) out[0].push_back(2.f);
  return out;
}

double pooled_percentile(const std::vector<std::vector<float>>& groups, const std::vector<std::uint32_t>& w,
                         double p) {
  std::vector<float> pool;
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (std::uint32_t k = 0; k < w[g]; ++k) pool.insert(pool.end(), groups[g].begin(), groups[g].end());
  return percentile(pool, p);
}

}  // namespace

TEST_CASE("grouped percentile equals the pooled sample's, for every weighting") {
  std::mt19937_64 gen(7);
  for (int rep = 0; rep < 200; ++rep) {
    const auto groups = random_groups(gen, 1 + rep % 12);
    const GroupedSample s(groups);
    std::vector<std::uint32_t> w(groups.size(), 1);
    std::uniform_int_distribution<std::uint32_t> mult(0, 3);
    if (rep % 2) {
      for (auto& x : w) x = mult(gen);
      w[0] = std::max<std::uint32_t>(w[0], 1);  // group 0 is never empty
    }
    for (double p : {0.0, 1.0, 37.5, 50.0, 90.0, 99.0, 100.0}) {
      const double expect = pooled_percentile(groups, w, p);
      const double got = s.percentile(p, w);
      CHECK(got == expect);
      if (rep % 2 == 0) CHECK(s.percentile(p) == expect);
    }
  }
}

TEST_CASE("bootstrap weights: n draws per replicate, seeded, uniform") {
  const auto a = bootstrap_weights(11, 7, 3000), b = bootstrap_weights(11, 7, 3000), c = bootstrap_weights(12, 7, 3000);
  CHECK(a == b);
  CHECK(a != c);
  std::vector<double> total(7, 0);
  for (const auto& r : a) {
    std::uint32_t n = 0;
    for (std::size_t g = 0; g < r.size(); ++g) {
      n += r[g];
      total[g] += r[g];
    }
    CHECK(n == 7);
  }
  // Each group is drawn 3000 times in expectation, sd sqrt(21000 * 1/7 * 6/7) = 50.7.
  for (double t : total) CHECK(std::abs(t - 3000) < 5 * 50.7);
  CHECK_THROWS_AS(bootstrap_weights(1, 0, 10), ctmc::InputError);
}

TEST_CASE("percentile interval: the order statistics at B a/2 and B (1 - a/2)") {
  std::vector<double> r;
  for (int i = 1000; i >= 1; --i) r.push_back(i);  // 1..1000, unsorted
  const auto [lo, hi] = percentile_interval(r, 0.95);
  CHECK(lo == 26);   // rank 25, 0-based
  CHECK(hi == 975);  // rank 974
  const auto [lo1, hi1] = percentile_interval({4.0}, 0.95);
  CHECK(lo1 == 4);
  CHECK(hi1 == 4);
  CHECK_THROWS_AS(percentile_interval({}, 0.95), ctmc::InputError);
  CHECK_THROWS_AS(GroupedSample({{0.f}, {1.f, NAN}}), ctmc::InputError);
}
