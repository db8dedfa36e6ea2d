// Relabellings, rescalings and splits of a chain of every transition between
// n states (full-three-state, general-n), in the families' parameter order
// (fit_internal.hpp): the state_exchange and time_scale moves and the fit
// tables' split starts build their candidates with these.
#include <fmt/format.h>

#include <cmath>

#include "ctmc/core/errors.hpp"
#include "fit/fit_internal.hpp"

namespace ctmc::analysis {

namespace {

// Index of the (offset, slope) pair of transition i -> j (i != j) in a chain
// of every transition between n states, in the families' order: row-major,
// the diagonal skipped. State i's exits are the n - 1 pairs from i (n - 1).
std::size_t transition_pair(std::size_t n, std::size_t i, std::size_t j) {
  return i * (n - 1) + (j < i ? j : j - 1);
}

}  // namespace

std::vector<double> exchange_states(const std::vector<double>& theta, std::size_t n, std::size_t k) {
  if (n < 2 || k == 0 || k >= n || theta.size() != 2 * n * (n - 1))
    throw InputError(fmt::format("exchange_states: bad arguments (n = {}, k = {}, {} parameters)", n, k, theta.size()));
  auto sigma = [&](std::size_t i) { return i == 0 ? k : i == k ? 0 : i; };
  std::vector<double> out(theta.size());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const std::size_t from = transition_pair(n, i, j), to = transition_pair(n, sigma(i), sigma(j));
      out[2 * to] = theta[2 * from];
      out[2 * to + 1] = theta[2 * from + 1];
    }
  return out;
}

std::vector<double> scale_state_exits(const std::vector<double>& theta, std::size_t n, std::size_t k, double factor) {
  if (n < 2 || k >= n || !(factor > 0) || !std::isfinite(factor) || theta.size() != 2 * n * (n - 1))
    throw InputError(fmt::format("scale_state_exits: bad arguments (n = {}, k = {}, factor = {}, {} parameters)", n, k,
                                 factor, theta.size()));
  auto out = theta;
  // State k's exits are the n - 1 consecutive pairs from k (n - 1)
  // (transition_pair).
  for (std::size_t t = k * (n - 1); t < (k + 1) * (n - 1); ++t) {
    out[2 * t] *= factor;
    out[2 * t + 1] *= factor;
  }
  return out;
}

std::vector<double> split_state(const std::vector<double>& theta, std::size_t n, std::size_t k, double share,
                                double internal) {
  if (n < 2 || k == 0 || k >= n || !(share > 0 && share < 1) || !(internal > 0) || !std::isfinite(internal) ||
      theta.size() != 2 * n * (n - 1))
    throw InputError(fmt::format("split_state: bad arguments (n = {}, k = {}, share = {}, internal = {}, {} parameters)",
                                 n, k, share, internal, theta.size()));
  const std::size_t m = n + 1;
  std::vector<double> out(2 * m * (m - 1));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < m; ++j) {
      if (i == j) continue;
      const std::size_t to = transition_pair(m, i, j);
      double p = 0, s = 0;
      if ((i == k && j == n) || (i == n && j == k)) {
        p = internal;
      } else {
        // The old transition this one copies (exits of n are k's), and the
        // part of it (rates into k are shared between k and n).
        const std::size_t from = transition_pair(n, i == n ? k : i, j == n ? k : j);
        const double part = j == k ? share : j == n ? 1 - share : 1;
        p = part * theta[2 * from];
        s = part * theta[2 * from + 1];
      }
      out[2 * to] = p;
      out[2 * to + 1] = s;
    }
  return out;
}

}  // namespace ctmc::analysis
