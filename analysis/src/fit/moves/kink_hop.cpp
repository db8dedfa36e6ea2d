// Search move "kink_hop" (fit_internal.hpp), and the kink hops that the
// state_exchange, local_phase, time_scale and relay_rescale moves apply to
// their accepted points.
//
// The objective (eq. 3) is only piecewise smooth: each rectified rate
// max(0, p + s H) has its kink H0 = -p/s between two data points, and every
// placement of the kinks among the points is a separate smooth piece with
// its own local minimum. A trust-region method stops at the minimum of the
// piece it ends in, even when the neighbouring piece (kink one data interval
// over) is better. So, for the families with closed forms (at most 6
// rectified rates: cheap), each kink of the fit is moved into the
// neighbouring intervals of the full problem's points (slope kept), the
// candidates are re-solved with the polish tolerance (but a start's
// iteration cap: a hop that needs more is not a neighbouring piece's
// minimum), and an improvement is kept; repeated while one is found, at most
// kKinkHopRounds rounds. Run on the full problem only: the exploration's
// pieces are not the full problem's.
#include <fmt/format.h>

#include <algorithm>

#include "fit/fit_internal.hpp"

namespace ctmc::analysis::fit_search {

namespace {

// Each round moves every kink at most one interval, so a kink travels at
// most four; the cap bounds the cost (a round re-solves up to two candidates
// per rectified rate on the full problem).
constexpr int kKinkHopRounds = 4;

}  // namespace

void kink_hop(Search& s, std::vector<double>& theta, double& mse) {
  const auto& params = s.params;
  const auto& bounds = s.problem.bounds;
  FitOptions po = s.options;
  po.function_tolerance = s.polish_options.function_tolerance;
  const auto& pts = s.full.points;
  for (int round = 0; round < kKinkHopRounds; ++round) {
    std::vector<std::vector<double>> cands;
    for (std::size_t i = 0; i + 1 < params.size(); ++i) {
      if (params[i].kind != ParamKind::Offset) continue;
      const double pp = theta[i], ss = theta[i + 1];
      if (ss == 0) continue;
      const double h0 = -pp / ss;
      const auto it = std::upper_bound(pts.begin(), pts.end(), h0);  // pts[j-1] <= h0 < pts[j]
      const auto j = static_cast<std::ptrdiff_t>(it - pts.begin());
      for (std::ptrdiff_t jj : {j - 1, j + 1}) {  // neighbouring intervals [pts[jj-1], pts[jj])
        if (jj < 1 || jj >= static_cast<std::ptrdiff_t>(pts.size())) continue;
        const double h1 = 0.5 * (pts[static_cast<std::size_t>(jj - 1)] + pts[static_cast<std::size_t>(jj)]);
        auto th = theta;
        th[i] = std::clamp(-ss * h1, bounds.lower(params[i].kind), bounds.upper(params[i].kind));
        cands.push_back(std::move(th));
      }
    }
    if (cands.empty()) break;
    const auto hop = s.solve_all(s.full, cands, po);
    const int bc = s.best_improvement(hop, mse);
    if (bc < 0) break;
    theta = hop[static_cast<std::size_t>(bc)].theta;
    mse = hop[static_cast<std::size_t>(bc)].mse;
    ++s.result.kink_hops;
  }
}

namespace {

void run(Search& s) {
  if (s.hop_kinks) kink_hop(s, s.result.theta, s.result.mse_double);
}

std::string describe(const FamilySpec&) {
  return fmt::format("each kink H0 = -p/s of a rectified rate moved one data interval left and right on the full "
                     "grid, re-solved, the best improvement kept (at most {} rounds)",
                     kKinkHopRounds);
}

bool closed_form(const FamilySpec& f) { return f.family != FitFamily::General; }

}  // namespace

SearchMove kink_hop_move() { return {"kink_hop", describe, closed_form, run}; }

}  // namespace ctmc::analysis::fit_search
