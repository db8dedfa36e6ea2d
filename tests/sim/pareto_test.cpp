// Pareto frontier and cheapest point under a criterion (pareto.hpp) against
// the definition checked pair by pair.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

#include "ctmc/sim/studies/pareto.hpp"
#include "ctmc/core/errors.hpp"

using ctmc::sim::cheapest_below;
using ctmc::sim::pareto_frontier;

namespace {

// Brute force: i is on the frontier iff it is finite, no j dominates it, and
// no j < i has exactly its cost and gap.
std::vector<std::size_t> frontier_by_definition(const std::vector<double>& c, const std::vector<double>& g) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!std::isfinite(c[i]) || !std::isfinite(g[i])) continue;
    bool keep = true;
    for (std::size_t j = 0; j < c.size() && keep; ++j) {
      if (j == i || !std::isfinite(c[j]) || !std::isfinite(g[j])) continue;
      const bool dominates = c[j] <= c[i] && g[j] <= g[i] && (c[j] < c[i] || g[j] < g[i]);
      const bool same_earlier = c[j] == c[i] && g[j] == g[i] && j < i;
      keep = !dominates && !same_earlier;
    }
    if (keep) out.push_back(i);
  }
  std::sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) { return c[a] < c[b]; });
  return out;
}

}  // namespace

TEST_CASE("pareto frontier equals the pairwise definition on random point sets with ties and NaN") {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> coarse(0, 6);  // few distinct values: many ties
  for (int rep = 0; rep < 500; ++rep) {
    const std::size_t n = 1 + rng() % 30;
    std::vector<double> c(n), g(n);
    for (std::size_t i = 0; i < n; ++i) {
      c[i] = coarse(rng) * 1000.0;
      g[i] = coarse(rng) * 0.5;
      if (rng() % 17 == 0) (rng() % 2 ? c[i] : g[i]) = std::nan("");
    }
    const auto front = pareto_frontier(c, g);
    CHECK(front == frontier_by_definition(c, g));
    for (std::size_t k = 1; k < front.size(); ++k) {
      CHECK(c[front[k]] > c[front[k - 1]]);
      CHECK(g[front[k]] < g[front[k - 1]]);
    }
    // The cheapest point below a criterion is on the frontier's side of it.
    for (double crit : {0.0, 0.75, 1.0, 2.5, 10.0}) {
      const auto best = cheapest_below(c, g, crit);
      std::optional<std::size_t> ref;
      for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(c[i]) || !std::isfinite(g[i]) || !(g[i] < crit)) continue;
        if (!ref || c[i] < c[*ref] || (c[i] == c[*ref] && g[i] < g[*ref])) ref = i;
      }
      CHECK(best == ref);
    }
  }
}

TEST_CASE("pareto: a hand example, and lists of different lengths") {
  //            0     1     2     3     4
  const std::vector<double> cost{10e3, 14e3, 12e3, 30e3, 14e3};
  const std::vector<double> gap{3.0, 0.9, 1.5, 0.2, 0.95};
  CHECK(pareto_frontier(cost, gap) == std::vector<std::size_t>{0, 2, 1, 3});
  CHECK(cheapest_below(cost, gap, 1.0) == std::optional<std::size_t>(1));  // 14k at 0.9 beats 14k at 0.95
  CHECK(cheapest_below(cost, gap, 0.1) == std::nullopt);
  CHECK_THROWS_AS(pareto_frontier({1, 2}, {1}), ctmc::InputError);
}

TEST_CASE("cheapest_below: a gap equal to the criterion up to rounding does not meet it") {
  // 1 pp between accuracies 324/500 and 319/500 in percent, as sweeps compute them: 0.99999999999999289.
  const double gap = 100 * (324.0 / 500) - 100 * (319.0 / 500);
  REQUIRE(gap != 1.0);
  CHECK_FALSE(ctmc::sim::below_criterion(gap, 1.0));
  CHECK(ctmc::sim::below_criterion(0.8, 1.0));
  const std::vector<double> cost{1e3, 5e3}, gaps{gap, 0.8};
  CHECK(cheapest_below(cost, gaps, 1.0) == std::optional<std::size_t>(1));
}
