// Search move "general_repolish" (fit_internal.hpp). The general family has
// no kink hops or local phase on the full problem, and a transferred fit can
// still be crawling along a valley when the polish's iteration cap ends it
// (sigmoid general-4, seed 5 of 4 starts and 1 basin round: 2.2827e-8
// without the repolishes, 0.9% above where a further polish goes; 1.4422e-8
// with them, fit_explore_test). So it is polished again while that
// improves, at most options.general_repolish times; a converged fit stops
// after one short solve. Only after a transfer from a subsample: without
// one, the fit is already a polished point of the full problem.
#include "fit/fit_internal.hpp"

namespace ctmc::analysis::fit_search {

namespace {

void run(Search& s) {
  if (!s.coarse) return;
  auto& r = s.result;
  for (int k = 0; k < s.options.general_repolish; ++k) {
    const auto again = s.solve_all(s.full, {r.theta}, s.polish_options);
    if (s.best_improvement(again, r.mse_double) < 0) break;
    r.theta = again[0].theta;
    r.mse_double = again[0].mse;
  }
}

std::string describe(const FamilySpec&) {
  return "the transferred fit polished again on the full grid while that improves it (at most general_repolish "
         "times)";
}

bool general(const FamilySpec& f) { return f.family == FitFamily::General; }

}  // namespace

SearchMove general_repolish_move() { return {"general_repolish", describe, general, run}; }

}  // namespace ctmc::analysis::fit_search
