// Search move "polish" (fit_internal.hpp). The best few starts often stop
// while still crawling along a shallow valley towards a bound (e.g. a
// refractory rate -> R); they are continued with 10x the iterations and
// polish_tolerance. Deterministic: the set is chosen by (MSE, start index)
// and each polish is a pure function of its start. Then the best start is
// the smallest (MSE, start index), for any thread count.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ctmc/core/errors.hpp"
#include "fit/fit_internal.hpp"

namespace ctmc::analysis::fit_search {

namespace {

void run(Search& s) {
  const auto& options = s.options;
  auto& outcomes = s.outcomes;
  if (options.polish > 0) {
    const auto order = order_by_mse(outcomes);
    std::vector<std::vector<double>> thetas;
    std::vector<int> which;
    for (int i = 0; i < std::min(options.polish, s.n); ++i)
      if (std::isfinite(outcomes[order[i]].mse)) {
        thetas.push_back(outcomes[order[i]].theta);
        which.push_back(order[i]);
      }
    auto polished = s.solve_all(s.ex, thetas, s.polish_options);
    for (std::size_t i = 0; i < which.size(); ++i)
      if (polished[i].mse < outcomes[which[i]].mse) outcomes[which[i]] = std::move(polished[i]);
  }

  // Deterministic reduction: smallest (MSE, start index).
  s.best = best_finite(outcomes);
  if (s.best < 0)
    throw InputError(fmt::format("fit: every start failed for the {} family", family_name(s.problem.family)));
  s.result.best_start = s.best;
}

std::string describe(const FamilySpec&) {
  return "the best `polish` starts continued with 10x the iterations and polish_tolerance; the best start is the "
         "smallest (MSE, start index)";
}

bool always(const FamilySpec&) { return true; }

}  // namespace

SearchMove polish_move() { return {"polish", describe, always, run}; }

}  // namespace ctmc::analysis::fit_search
