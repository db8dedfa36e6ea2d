// The search's shared machinery (fit_internal.hpp): parallel solves of
// candidate sets with a deterministic reduction, and the small helpers the
// moves share.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "fit/fit_internal.hpp"

namespace ctmc::analysis {
namespace fit_search {

namespace {
FitOptions polish_options_of(const FitOptions& o) {
  FitOptions po = o;
  po.max_iterations = 10 * o.max_iterations;
  po.function_tolerance = o.polish_tolerance;
  return po;
}
}  // namespace

SearchSetup::SearchSetup(const FitProblem& p, const FitOptions& o, const Stage& full_stage, const Stage& ex_stage,
                         std::vector<double> warm_start, int starts)
    : problem(p),
      options(o),
      polish_options(polish_options_of(o)),
      params(family_parameters(p.family)),
      full(full_stage),
      ex(ex_stage),
      coarse(&ex_stage != &full_stage),
      floor_mse(full_stage.floor_mse),
      threads(fit_threads(o)),
      ymax(full_stage.targets->ymax),
      lo(solvers::to_double(p.data.lo)),
      hi(solvers::to_double(p.data.hi)),
      width(hi - lo),
      hop_kinks(o.kink_hops && p.family.family != FitFamily::General && o.polish > 0),
      relabel_states(relabelable_states(p.family)),
      warm(std::move(warm_start)),
      n(starts) {}

// Keeps the kExplorationPool best distinct minima of pool and `found`
// (distinct: MSEs more than 1e-7 relative apart), in (MSE, arrival) order.
void Search::remember(const std::vector<StartOutcome>& found) {
  for (const auto& o : found)
    if (std::isfinite(o.mse)) pool.push_back(o);
  std::stable_sort(pool.begin(), pool.end(), [](const StartOutcome& a, const StartOutcome& b) { return a.mse < b.mse; });
  std::vector<StartOutcome> kept;
  for (auto& o : pool) {
    if (kept.size() == kExplorationPool) break;
    if (!kept.empty() && !(o.mse > kept.back().mse * (1 + 1e-7))) continue;
    kept.push_back(std::move(o));
  }
  pool = std::move(kept);
}

std::vector<StartOutcome> Search::solve_all(const Stage& st, const std::vector<std::vector<double>>& thetas,
                                            const FitOptions& so) {
  const int nc = static_cast<int>(thetas.size());
  std::vector<StartOutcome> solved(thetas.size());
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
#endif
  for (int c = 0; c < nc; ++c) {
    // Exceptions must not leave an OpenMP region: a failed solve scores +inf.
    try {
      solved[static_cast<std::size_t>(c)] = solve_start(*st.problem, *st.targets, params, thetas[static_cast<std::size_t>(c)], so);
    } catch (...) {
      solved[static_cast<std::size_t>(c)] = StartOutcome{};
    }
  }
  for (const auto& o : solved) total_iterations += o.iterations;
  if (coarse && &st == &ex) remember(solved);
  return solved;
}

int Search::best_improvement(const std::vector<StartOutcome>& solved, double current) const {
  int bc = -1;
  for (int c = 0; c < static_cast<int>(solved.size()); ++c)
    if (solved[static_cast<std::size_t>(c)].mse < (bc < 0 ? current : solved[static_cast<std::size_t>(bc)].mse)) bc = c;
  if (bc >= 0 && !(solved[static_cast<std::size_t>(bc)].mse < current * (1 - 1e-9))) bc = -1;
  return bc;
}

void clamp_to_bounds(const FitBounds& b, const std::vector<ParamInfo>& params, std::vector<double>& theta) {
  for (std::size_t i = 0; i < params.size(); ++i) theta[i] = std::clamp(theta[i], b.lower(params[i].kind), b.upper(params[i].kind));
}

std::vector<int> order_by_mse(const std::vector<StartOutcome>& outcomes) {
  std::vector<int> order(outcomes.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int>(k);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return outcomes[a].mse < outcomes[b].mse; });
  return order;
}

int best_finite(const std::vector<StartOutcome>& outcomes) {
  int best = -1;
  for (int k = 0; k < static_cast<int>(outcomes.size()); ++k) {
    const double m = outcomes[static_cast<std::size_t>(k)].mse;
    if (std::isfinite(m) && (best < 0 || m < outcomes[static_cast<std::size_t>(best)].mse)) best = k;
  }
  return best;
}

double peak_rate(const std::vector<double>& theta, std::size_t i, double lo, double hi) {
  return std::max(theta[i] + theta[i + 1] * lo, theta[i] + theta[i + 1] * hi);
}

double fastest_rate(const std::vector<ParamInfo>& params, const std::vector<double>& theta, double lo, double hi) {
  double m = 0;
  for (std::size_t i = 0; i + 1 < params.size(); ++i)
    if (is_rectified_rate(params, i)) m = std::max(m, peak_rate(theta, i, lo, hi));
  return m;
}

std::vector<std::string> parameters_on_bound(const std::vector<ParamInfo>& params, const std::vector<double>& theta,
                                             const FitBounds& b) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const double lo = b.lower(params[i].kind), hi = b.upper(params[i].kind);
    // Relative tolerance: Ceres' projected steps land exactly on a bound, but
    // allow for a final step that stops just short of it.
    if (std::abs(theta[i] - lo) <= 1e-6 * std::abs(lo))
      out.push_back(fmt::format("{}={} (lower bound)", params[i].name, lo));
    else if (std::abs(theta[i] - hi) <= 1e-6 * std::abs(hi))
      out.push_back(fmt::format("{}={} (upper bound)", params[i].name, hi));
  }
  return out;
}

}  // namespace fit_search

std::vector<std::string> parameters_outside_bounds(const std::vector<ParamInfo>& params,
                                                   const std::vector<double>& theta, const FitBounds& b) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < params.size(); ++i)
    if (!(theta[i] >= b.lower(params[i].kind) && theta[i] <= b.upper(params[i].kind)))
      out.push_back(fmt::format("{}={}", params[i].name, theta[i]));
  return out;
}

}  // namespace ctmc::analysis
