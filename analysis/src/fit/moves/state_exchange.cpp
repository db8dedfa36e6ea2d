// The state-exchange move (fit_internal.hpp, exchange_states), a step of two
// search moves rather than one of the driver's own: the chain with state 0
// (into which the spikes go) exchanged with each other state k, each
// candidate polished (an exchanged point is far from any minimum), kept if
// the best lowers the MSE. It maps a minimum in which state k paces the
// spikes onto one in which state 0 does, which perturbations rarely reach
// (exchange_states). The basin-hopping chains try the exchanges of every new
// point on the exploration problem (moves/basin_hop.cpp); the local phase
// tries them once on the full problem, from the transferred fit, with kink
// hops, before its rounds (moves/local_phase.cpp).
#include "fit/fit_internal.hpp"

namespace ctmc::analysis::fit_search {

// Full-three-state (B, G, R = 0, 1, 2). The general family has the structure
// too, but measured with the exchanges (together with per-state rate
// scalings) its report rows were 2-3x slower without better fits.
std::size_t relabelable_states(const FamilySpec& f) {
  if (f.family == FitFamily::FullThreeState) return 3;
  return 0;
}

// The state exchanges of (theta, mse) on stage st, each polished; moves to
// the best if it improves, after hopping its kinks if `kinks`.
bool try_exchanges(Search& s, const Stage& st, std::vector<double>& theta, double& mse, bool kinks) {
  std::vector<std::vector<double>> cands;
  for (std::size_t k = 1; k < s.relabel_states; ++k) cands.push_back(exchange_states(theta, s.relabel_states, k));
  const auto solved = s.solve_all(st, cands, s.polish_options);
  const int bc = best_finite(solved);
  if (bc < 0) return false;
  auto th = solved[static_cast<std::size_t>(bc)].theta;
  double m = solved[static_cast<std::size_t>(bc)].mse;
  if (kinks) kink_hop(s, th, m);
  if (!(m < mse * (1 - 1e-9))) return false;
  theta = std::move(th);
  mse = m;
  return true;
}

}  // namespace ctmc::analysis::fit_search
