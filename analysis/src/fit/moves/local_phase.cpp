// Search move "local_phase" (fit_internal.hpp), on the full problem. The
// basin-hopping chains' big moves (sigma 0.3, redraws) find funnels but
// rarely the best of the near-equal minima inside one (different kink cells
// of the same rates: softplus x 1/14 full-three-state ends at 3.22e-8 or
// 3.18e-8 where 3.157e-8 is a small step away). So: options.local_rounds
// rounds of options.basin_candidates small Gaussian moves (relative size
// local_sigma, no redraws) of the fit, accepted like hops (polished, then
// kink-hopped). Candidate c of round k draws from stream k * candidates + c
// of the move's block (Search::streams), disjoint from the starts' and the
// chains'. Runs
// only where basin hopping did (not at the rounding floor, polish > 0). For
// full-three-state the rounds are preceded by one try of the state
// exchanges (moves/state_exchange.cpp), counted as a local hop.
#include <algorithm>

#include "fit/fit_internal.hpp"

namespace ctmc::analysis::fit_search {

namespace {

void run(Search& s) {
  const auto& options = s.options;
  auto& r = s.result;
  if (!(s.hopping && options.local_rounds > 0 && !(r.mse_double < s.floor_mse))) return;
  // The state exchanges once, on the full problem, from the transferred fit
  // (the chains tried them on the exploration problem).
  if (s.relabel_states > 0 && try_exchanges(s, s.full, r.theta, r.mse_double, s.hop_kinks)) ++r.local_hops;
  const auto streams =
      s.streams.reserve("local_phase", static_cast<std::uint64_t>(options.local_rounds * options.basin_candidates));
  for (int round = 0; round < options.local_rounds; ++round) {
    std::vector<std::vector<double>> cands;
    for (int c = 0; c < options.basin_candidates; ++c) {
      const auto stream = static_cast<std::uint64_t>(round * options.basin_candidates + c);
      std::mt19937_64 rng(start_seed(options.seed, streams[stream]));
      cands.push_back(perturb(s, r.theta, c, rng, options.local_sigma, false));
    }
    if (hop_to_best(s, s.full, cands, r.theta, r.mse_double, true, s.hop_kinks)) ++r.local_hops;
  }
}

std::string describe(const FamilySpec& f) {
  return std::string(relabelable_states(f) > 0 ? "the state exchanges of the fit (state 0 with each other state), "
                                                  "then rounds"
                                                : "rounds") +
         " of small Gaussian moves (local_sigma) of the fit on the full grid, accepted like hops, with kink hops";
}

bool closed_form(const FamilySpec& f) { return f.family != FitFamily::General; }

}  // namespace

SearchMove local_phase_move() { return {"local_phase", describe, closed_form, run}; }

}  // namespace ctmc::analysis::fit_search
