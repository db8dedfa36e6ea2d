#include "ctmc/sim/studies/pareto.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "ctmc/core/errors.hpp"

namespace ctmc::sim {
namespace {

void check_sizes(const std::vector<double>& cost, const std::vector<double>& gap) {
  if (cost.size() != gap.size())
    throw InputError(fmt::format("pareto: {} costs but {} gaps", cost.size(), gap.size()));
}

// The finite points by (cost, gap, index).
std::vector<std::size_t> by_cost(const std::vector<double>& cost, const std::vector<double>& gap) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < cost.size(); ++i)
    if (std::isfinite(cost[i]) && std::isfinite(gap[i])) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (cost[a] != cost[b]) return cost[a] < cost[b];
    if (gap[a] != gap[b]) return gap[a] < gap[b];
    return a < b;
  });
  return order;
}

}  // namespace

std::vector<std::size_t> pareto_frontier(const std::vector<double>& cost, const std::vector<double>& gap) {
  check_sizes(cost, gap);
  // In (cost, gap) order a point is dominated exactly when an earlier one
  // has a gap at most its own (an earlier point costs at most as much, and
  // one of equal cost and gap comes first).
  std::vector<std::size_t> front;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i : by_cost(cost, gap))
    if (gap[i] < best) {
      front.push_back(i);
      best = gap[i];
    }
  return front;
}

std::optional<std::size_t> cheapest_below(const std::vector<double>& cost, const std::vector<double>& gap,
                                          double criterion) {
  check_sizes(cost, gap);
  for (std::size_t i : by_cost(cost, gap))
    if (below_criterion(gap[i], criterion)) return i;
  return std::nullopt;
}

}  // namespace ctmc::sim
