// Pareto frontiers of an accuracy gap against a cost (paper sections 3.4 and
// 4: accuracy gap vs SynOps, and vs CTMC transitions) and the cheapest point
// under a gap criterion (the paper's "minimum SynOps below 1 pp").
//
// Point i (cost[i], gap[i]) is dominated when another point j has
// cost[j] <= cost[i] and gap[j] <= gap[i] with one of them strictly smaller.
// Points with a non-finite cost or gap are never on the frontier. Of several
// points with equal cost and gap, the one of lowest index stands for them.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

namespace ctmc::sim {

// The non-dominated points, by increasing cost (and decreasing gap).
// InputError when the two lists differ in length.
std::vector<std::size_t> pareto_frontier(const std::vector<double>& cost, const std::vector<double>& gap);

// Whether a gap (pp) is below the criterion. Accuracies are ratios of counts,
// so a gap equal to the criterion can come out a rounding error below it
// (64.8 - 63.800000000000004 = 0.99999999999999289); within kGapTolerance it
// counts as equal.
inline constexpr double kGapTolerance = 1e-9;
inline bool below_criterion(double gap, double criterion) { return gap < criterion - kGapTolerance; }

// The point of least cost among those with below_criterion(gap, criterion)
// (ties: the lower gap, then the lower index); nullopt when none meets it.
std::optional<std::size_t> cheapest_below(const std::vector<double>& cost, const std::vector<double>& gap,
                                          double criterion);

}  // namespace ctmc::sim
