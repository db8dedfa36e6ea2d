// Search move "general_repolish" (fit_internal.hpp). The general family has
// no kink hops or local phase on the full problem, and a transferred fit can
// still be crawling along a valley when the polish's iteration cap ends it
// (sigmoid general-4 from 4 starts and 4 rounds: 5.7955e-7 after the
// transfer, 5.7408e-7 and 5.7200e-7 after two more polishes). So it is
// polished again while that improves, at most options.general_repolish times;
// a converged fit stops after one short solve. Only after a transfer from a
// subsample: without one, the fit is already a polished point of the full
// problem.
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
