#include "ctmc/sim/studies/grouped_quantiles.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ctmc/core/errors.hpp"
#include "ctmc/core/seeding.hpp"

namespace ctmc::sim {
GroupedSample::GroupedSample(const std::vector<std::vector<float>>& groups) {
  for (std::size_t g = 0; g < groups.size(); ++g) {
    sizes_.push_back(groups[g].size());
    for (float v : groups[g]) {
      if (!std::isfinite(v)) throw InputError(fmt::format("grouped sample: group {} holds {}", g, v));
      pool_.emplace_back(v + 0.0f, static_cast<std::uint32_t>(g));  // -0 as 0
    }
  }
  std::sort(pool_.begin(), pool_.end());
}

// The k-th smallest (0-based) of `total` weighted values: the value at which
// the weights summed from the lower end reach k + 1, or from the upper end
// reach total - k, whichever end is nearer.
double GroupedSample::order_statistic(std::size_t k, std::size_t total,
                                      const std::vector<std::uint32_t>& weights) const {
  std::size_t sum = 0;
  if (k < total / 2) {
    for (const auto& [v, g] : pool_)
      if ((sum += weights[g]) >= k + 1) return v;
  } else {
    for (auto it = pool_.rbegin(); it != pool_.rend(); ++it)
      if ((sum += weights[it->second]) >= total - k) return it->first;
  }
  throw InputError(fmt::format("grouped sample: no order statistic {} of {}", k, total));
}

double GroupedSample::percentile(double p, const std::vector<std::uint32_t>& weights) const {
  if (weights.size() != sizes_.size())
    throw InputError(fmt::format("grouped sample: {} weights for {} groups", weights.size(), sizes_.size()));
  std::size_t n = 0;
  for (std::size_t g = 0; g < sizes_.size(); ++g) n += weights[g] * sizes_[g];
  if (n == 0) throw InputError("grouped sample: empty sample");
  if (!(p >= 0 && p <= 100)) throw InputError(fmt::format("grouped sample: p = {} outside [0, 100]", p));
  const double pos = p / 100.0 * static_cast<double>(n - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const double a = order_statistic(lo, n, weights);
  if (lo + 1 >= n) return a;
  const double b = order_statistic(lo + 1, n, weights);
  return a + (pos - static_cast<double>(lo)) * (b - a);
}

double GroupedSample::percentile(double p) const {
  return percentile(p, std::vector<std::uint32_t>(sizes_.size(), 1));
}

std::vector<std::vector<std::uint32_t>> bootstrap_weights(std::uint64_t seed, std::size_t groups,
                                                          std::size_t replicates) {
  if (groups == 0) throw InputError("bootstrap: no groups to resample");
  std::uint64_t state = seed;
  const std::uint64_t n = groups;
  // The largest multiple of n that fits: draws at or above it are redrawn.
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % n;
  std::vector<std::vector<std::uint32_t>> w(replicates, std::vector<std::uint32_t>(groups, 0));
  for (auto& r : w)
    for (std::size_t i = 0; i < groups; ++i) {
      std::uint64_t x;
      do x = splitmix64_next(state);
      while (x >= limit);
      ++r[x % n];
    }
  return w;
}

std::pair<double, double> percentile_interval(std::vector<double> replicates, double confidence) {
  const std::size_t B = replicates.size();
  if (B == 0) throw InputError("bootstrap: no replicates");
  if (!(confidence > 0 && confidence < 1))
    throw InputError(fmt::format("bootstrap: confidence {} outside (0, 1)", confidence));
  std::sort(replicates.begin(), replicates.end());
  const double a = 1 - confidence;
  const auto lo = static_cast<std::size_t>(std::floor(static_cast<double>(B) * a / 2));
  const auto hi_rank = static_cast<std::size_t>(std::ceil(static_cast<double>(B) * (1 - a / 2)));
  const std::size_t hi = std::min(B, std::max<std::size_t>(hi_rank, 1)) - 1;
  return {replicates[std::min(lo, B - 1)], replicates[hi]};
}

}  // namespace ctmc::sim
