// Search move "transfer" (fit_internal.hpp): from the exploration problem to
// the full one. Every chain end, the warm start as given (so that a
// warm-started fit never ends above its warm start's full MSE) and, with
// pool_to_full, the kExplorationPool best distinct minima of the exploration
// are polished on the full problem; the best (lowest MSE, then first) is the
// search's fit from here on. The full-problem moves after it make the
// reported fit a local minimum of the full problem. Without a subsample the
// chain ends are already polished on the full problem and are compared as
// they are.
#include <fmt/format.h>

#include "ctmc/core/errors.hpp"
#include "fit/fit_internal.hpp"

namespace ctmc::analysis::fit_search {

namespace {

void run(Search& s) {
  std::vector<std::vector<double>> thetas;
  for (const auto& e : s.ends) thetas.push_back(e.theta);
  if (!s.warm.empty()) thetas.push_back(s.warm);
  if (s.coarse && s.options.pool_to_full)
    for (const auto& o : s.pool) thetas.push_back(o.theta);
  std::vector<StartOutcome> on_full;
  if (s.coarse) {
    on_full = s.solve_all(s.full, thetas, s.polish_options);
  } else {
    for (const auto& e : s.ends) on_full.push_back(e);  // already polished on this problem
    if (!s.warm.empty())
      on_full.push_back(StartOutcome{s.warm, weighted_mse(s.problem, *s.full.targets, s.warm), 0});
  }
  const int bf = best_finite(on_full);
  if (bf < 0) {
    // No end is feasible on the full problem: the exploration's points
    // miss an H where its fit leaves no closed class (an exact ReLU fit
    // with every rate 0 between two exploration points). The driver then
    // explores on the full problem instead.
    if (s.coarse) {
      s.restart_on_full = true;
      return;
    }
    throw InputError(fmt::format("fit: every start failed for the {} family", family_name(s.problem.family)));
  }
  s.result.theta = on_full[static_cast<std::size_t>(bf)].theta;
  s.result.mse_double = on_full[static_cast<std::size_t>(bf)].mse;
  for (int h : s.end_hops) s.result.basin_hops += h;
}

std::string describe(const FamilySpec&) {
  return "the chain ends, the warm start and the best distinct minima of the exploration polished on the full "
         "grid; the lowest is the fit";
}

bool always(const FamilySpec&) { return true; }

}  // namespace

SearchMove transfer_move() { return {"transfer", describe, always, run}; }

}  // namespace ctmc::analysis::fit_search
