// Search move "multistart" (fit_internal.hpp): `options.starts` starting
// points solved on the exploration problem with the starts' options
// (function_tolerance, max_iterations), in parallel. Start k draws from
// start_seed(seed, k); the warm start takes start 0 and the seeded starts
// the places after it, so that the streams of the random ones do not depend
// on how many are given.
#include <fmt/format.h>

#include <cmath>

#include "ctmc/solvers/det_math.hpp"

#include "fit/fit_internal.hpp"

namespace ctmc::analysis::fit_search {

// A random starting point. Scales come from the target: rates of the order of
// max |alpha phi| (0.1x to 30x), slopes such that a rate changes by that order
// over the domain, mostly increasing in H (the targets are nondecreasing).
// Clamped into the bounds.
std::vector<double> draw_start(const FitProblem& p, const Targets& t, const std::vector<ParamInfo>& params,
                               std::mt19937_64& rng) {
  const double ymax = t.ymax;
  const double lo = solvers::to_double(p.data.lo), hi = solvers::to_double(p.data.hi);
  const double width = hi - lo;
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  auto log_uniform = [&](double a, double b) { return detmath::pow(10.0, a + (b - a) * u01(rng)); };
  std::vector<double> theta(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    switch (params[i].kind) {
      case ParamKind::ConstRate:
        theta[i] = ymax * log_uniform(-1, 1.5);
        break;
      case ParamKind::Offset: {
        // (offset, slope) pairs: pick the slope, then the rate at a random
        // point of the domain.
        const double sign = u01(rng) < 0.75 ? 1.0 : -1.0;
        const double slope = sign * ymax / width * log_uniform(-1, 1.5);
        const double hc = lo + width * u01(rng);
        const double rate_c = ymax * log_uniform(-1, 1.5);
        theta[i] = rate_c - slope * hc;
        theta[i + 1] = slope;
        ++i;
        break;
      }
      case ParamKind::Slope:
        break;  // set with its offset
    }
  }
  clamp_to_bounds(p.bounds, params, theta);
  return theta;
}

namespace {

void run(Search& s) {
  const auto& options = s.options;
  const int n = s.n;
  std::vector<std::vector<double>> thetas(static_cast<std::size_t>(n));
  const auto streams = s.streams.reserve("multistart", static_cast<std::uint64_t>(n));
  for (int k = 0; k < n; ++k) {
    std::mt19937_64 rng(start_seed(options.seed, streams[static_cast<std::uint64_t>(k)]));
    // Seeded starts (options.seeded_starts) come after the warm start.
    const std::size_t seeded = static_cast<std::size_t>(k) - (s.warm.empty() ? 0 : 1);
    if (k == 0 && !s.warm.empty()) {
      thetas[0] = s.warm;
    } else if (seeded < options.seeded_starts.size()) {
      thetas[k] = options.seeded_starts[seeded];
      clamp_to_bounds(s.problem.bounds, s.params, thetas[k]);
    } else {
      // Redraw (from the same stream) until the start has a finite
      // objective: the general family can start reducible at some H.
      for (int attempt = 0; attempt < 100; ++attempt) {
        thetas[k] = draw_start(s.problem, *s.full.targets, s.params, rng);
        if (std::isfinite(weighted_mse(*s.ex.problem, *s.ex.targets, thetas[k]))) break;
      }
    }
  }
  s.outcomes = s.solve_all(s.ex, thetas, options);
}

std::string describe(const FamilySpec&) {
  return "seeded random starts (rates 0.1x-30x max |alpha phi|, mostly increasing in H), plus the warm and seeded "
         "starts, solved on the exploration subsample";
}

bool always(const FamilySpec&) { return true; }

}  // namespace

SearchMove multistart_move() { return {"multistart", describe, always, run}; }

}  // namespace ctmc::analysis::fit_search
