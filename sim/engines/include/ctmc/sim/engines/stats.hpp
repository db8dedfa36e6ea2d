// Sample statistics of the simulator's results, shared by simulate_network,
// the sweeps and the reports (summed in order, so every caller gets the same
// bits for the same values).
#pragma once
#include <cmath>
#include <limits>
#include <vector>

namespace ctmc::sim {

// The mean; NaN for no values.
inline double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? std::numeric_limits<double>::quiet_NaN() : s / static_cast<double>(v.size());
}

// The sample standard deviation (n - 1); 0 for fewer than two values.
inline double sd_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean_of(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

}  // namespace ctmc::sim
