// Quantiles of a sample pooled from groups, and of bootstrap resamples over
// the groups. A layer's activations on one test image are one group: the
// values of an image are correlated, the images are the independent draws,
// so an interval for a statistic of pooled quantiles (the deep report's
// layer-quantile claim, paper Figure 5C) resamples images, not values
// (Efron & Tibshirani, An Introduction to the Bootstrap, ch. 13: the
// percentile interval).
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ctmc::sim {

class GroupedSample {
 public:
  // The groups, each of finite values (InputError on NaN or infinity).
  explicit GroupedSample(const std::vector<std::vector<float>>& groups);
  std::size_t groups() const { return sizes_.size(); }
  // percentile() of network_sim.hpp (the same interpolation between order
  // statistics) of the union of the groups, group g taken weights[g] times:
  // a bootstrap resample as multiplicities. The pooled values are sorted once
  // with their groups; an order statistic of a resample is found by walking
  // that order from the nearer end and summing the weights, so a tail
  // quantile (q99) of a resample costs about 1% of the pool.
  double percentile(double p, const std::vector<std::uint32_t>& weights) const;
  double percentile(double p) const;  // every group once

 private:
  double order_statistic(std::size_t k, std::size_t total, const std::vector<std::uint32_t>& weights) const;
  std::vector<std::size_t> sizes_;                     // per group
  std::vector<std::pair<float, std::uint32_t>> pool_;  // (value, group), sorted by value
};

// `replicates` resamples of `groups` groups with replacement, each as the
// multiplicity of every group, from a SplitMix64 stream of `seed` and
// unbiased rejection: the same draws on any machine and thread count.
std::vector<std::vector<std::uint32_t>> bootstrap_weights(std::uint64_t seed, std::size_t groups,
                                                          std::size_t replicates);

// The two-sided percentile interval of level `confidence` from bootstrap
// replicates of a statistic: the order statistics at ranks floor(B a/2) and
// ceil(B (1 - a/2)) - 1 (0-based) of the B sorted replicates, a = 1 - confidence.
std::pair<double, double> percentile_interval(std::vector<double> replicates, double confidence);

}  // namespace ctmc::sim
