// Search move "basin_hop" (fit_internal.hpp): monotonic basin hopping (Leary
// 2000) on the exploration problem.
//
// The larger families have many local minima (different sets of active
// rates and kink placements), and independent starts rarely land in the same
// one. Each round perturbs the chain's point `basin_candidates` times (every
// rectified rate's values at the domain ends, and every constant rate's
// logarithm, by sigma times their size; or some rates redrawn), solves the
// candidates like starts and moves to the best if it improves (on a
// subsample unpolished, see hop_to_best). Candidate c of round k of chain h
// draws from stream (h * rounds + k) * candidates + c of the move's block
// (Search::streams): deterministic for any thread count, and disjoint from
// the other moves' streams.
// Skipped when the fit is exact up to double rounding (see kRoundingFloor).
// The closed-form families get kClosedFormBasinFactor x the rounds, the
// general family on a subsample kGeneralBasinFactor x (fit_internal.hpp).
// Measured on softplus x 1/14 full-three-state on the 101-point exploration
// grid (one chain, seeds 1-20): the chance that a chain reaches the row's
// best funnel grows with its length (10, 30, 60, 200 rounds: 2, 4, 6, 14 of
// 20 seeds) and with the number of chains (3 chains of 200 rounds: 16 of
// 16). Kink hops after each accepted hop would take most of a chain's time,
// so the chains do not hop kinks (the full problem does, moves/kink_hop.cpp).
// For full-three-state every new point of a chain also tries its state
// exchanges (moves/state_exchange.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "ctmc/solvers/det_math.hpp"
#include "fit/fit_internal.hpp"

namespace ctmc::analysis::fit_search {
namespace {

// N(0, sigma^2) by Marsaglia's polar method, pairs cached like
// std::normal_distribution's, but its logarithm is detmath's: the library
// distribution calls the C library's log, whose last bit varies by machine.
class PolarNormal {
 public:
  explicit PolarNormal(double sigma) : sigma_(sigma) {}
  double operator()(std::mt19937_64& rng) {
    if (saved_) {
      saved_ = false;
      return sigma_ * spare_;
    }
    double x, y, r2;
    do {
      x = 2 * std::generate_canonical<double, std::numeric_limits<double>::digits>(rng) - 1;
      y = 2 * std::generate_canonical<double, std::numeric_limits<double>::digits>(rng) - 1;
      r2 = x * x + y * y;
    } while (r2 > 1 || r2 == 0);
    const double mult = std::sqrt(-2 * detmath::log(r2) / r2);
    spare_ = x * mult;
    saved_ = true;
    return sigma_ * (y * mult);
  }

 private:
  double sigma_;
  double spare_ = 0;
  bool saved_ = false;
};

}  // namespace

// Candidate c: every rectified rate's values at the domain ends and every
// constant rate's logarithm moved by sigma times their size (even c), or
// some rates redrawn from the start distribution (odd c, with `redraws`).
std::vector<double> perturb(const Search& s, const std::vector<double>& theta0, int c, std::mt19937_64& rng,
                            double sigma, bool redraws) {
  const auto& params = s.params;
  const double ymax = s.ymax, lo = s.lo, hi = s.hi, width = s.width;
  PolarNormal z(sigma);
  auto th = theta0;
  if (redraws && c % 2 == 1) {
    // Redraw some rates from the start distribution, keep the rest:
    // one or two, or (every fourth candidate) half of them, or (every
    // eighth) all: a fresh random start.
    const auto fresh = draw_start(s.problem, *s.full.targets, params, rng);
    std::vector<std::size_t> rates;
    for (std::size_t i = 0; i < params.size(); ++i)
      if (params[i].kind != ParamKind::Slope) rates.push_back(i);
    const int redraw = c % 8 == 7   ? static_cast<int>(rates.size())
                       : c % 4 == 3 ? static_cast<int>((rates.size() + 1) / 2)
                                    : 1 + static_cast<int>(rng() % 2);
    for (int k = 0; k < redraw; ++k) {
      const std::size_t i = rates[rng() % rates.size()];
      th[i] = fresh[i];
      if (params[i].kind == ParamKind::Offset) th[i + 1] = fresh[i + 1];
    }
  } else {
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (params[i].kind == ParamKind::ConstRate) {
        th[i] *= detmath::exp(z(rng));
      } else if (params[i].kind == ParamKind::Offset) {
        double r_lo = th[i] + th[i + 1] * lo, r_hi = th[i] + th[i + 1] * hi;
        r_lo += z(rng) * std::max(std::abs(r_lo), ymax);
        r_hi += z(rng) * std::max(std::abs(r_hi), ymax);
        th[i + 1] = (r_hi - r_lo) / width;
        th[i] = r_lo - th[i + 1] * lo;
      }
    }
  }
  clamp_to_bounds(s.problem.bounds, params, th);
  return th;
}

// One hop on stage st: solve the candidates like starts; if the best
// improves on (theta, mse), move there, polished if `polish`, and hop its
// kinks if `kinks`. True if moved. Chains on a subsample do not polish: a
// polish is one solve with 10x the iterations, on one thread while the
// others idle (with it, 0.6 s of the 0.9 s that the chains of softplus x
// 1/14 full-three-state cost), and its extra digits rarely change which
// later candidate improves on the point. Chain ends and the pool are
// polished on the full problem (moves/transfer.cpp).
bool hop_to_best(Search& s, const Stage& st, const std::vector<std::vector<double>>& cands,
                 std::vector<double>& theta, double& mse, bool polish, bool kinks) {
  const auto solved = s.solve_all(st, cands, s.options);
  const int bc = s.best_improvement(solved, mse);
  if (bc < 0) return false;
  StartOutcome accepted = solved[static_cast<std::size_t>(bc)];
  if (polish) {
    auto polished = s.solve_all(st, {accepted.theta}, s.polish_options);
    if (polished[0].mse < accepted.mse) accepted = std::move(polished[0]);
  }
  theta = std::move(accepted.theta);
  mse = accepted.mse;
  if (kinks) kink_hop(s, theta, mse);
  return true;
}

namespace {

void run(Search& s) {
  const auto& options = s.options;
  const auto& outcomes = s.outcomes;
  const int n = s.n;
  const int best = s.best;
  s.basin_rounds = options.basin_rounds * (s.problem.family.family != FitFamily::General ? kClosedFormBasinFactor
                                           : s.coarse                                    ? kGeneralBasinFactor
                                                                                         : 1);
  const int basin_rounds = s.basin_rounds;
  s.hopping = basin_rounds > 0 && options.polish > 0 && !(outcomes[best].mse < s.ex.floor_mse);
  // Chains: from the best `basin_chains` starts, each with its own candidate
  // streams. Their ends (or, without chains, the best start) go on to the
  // full problem.
  const auto order = order_by_mse(outcomes);
  // Several chains only where they pay: one general-family solve costs about
  // five closed-form ones, and where the starts agree (at least an eighth of
  // them within 1% of the best) the landscape is benign; one chain then.
  int agreeing = 0;
  for (const auto& o : outcomes) agreeing += o.mse <= 1.01 * outcomes[best].mse;
  const bool one_chain = s.problem.family.family == FitFamily::General || 8 * agreeing >= n;
  s.chains = s.hopping ? std::min(one_chain ? 1 : options.basin_chains, n) : 0;
  // One stream per candidate of every round of every chain (at least one
  // chain's worth, also when none runs).
  const auto streams = s.streams.reserve(
      "basin_hop", static_cast<std::uint64_t>(std::max(s.chains, 1) * basin_rounds * options.basin_candidates));
  for (int chain = 0; chain < s.chains; ++chain) {
    StartOutcome at = outcomes[order[chain]];
    if (!std::isfinite(at.mse)) continue;
    int hops = 0;
    bool relabel = s.relabel_states > 0;  // the point is new: try its state exchanges
    for (int round = 0; round < basin_rounds; ++round) {
      std::vector<std::vector<double>> cands;
      for (int c = 0; c < options.basin_candidates; ++c) {
        const auto stream = static_cast<std::uint64_t>((chain * basin_rounds + round) * options.basin_candidates + c);
        std::mt19937_64 rng(start_seed(options.seed, streams[stream]));
        cands.push_back(perturb(s, at.theta, c, rng, options.basin_sigma, true));
      }
      const double before = at.mse;
      if (relabel && try_exchanges(s, s.ex, at.theta, at.mse, false)) ++hops;
      if (hop_to_best(s, s.ex, cands, at.theta, at.mse, !s.coarse, false)) ++hops;
      relabel = s.relabel_states > 0 && at.mse < before;
    }
    s.ends.push_back(std::move(at));
    s.end_hops.push_back(hops);
  }
  if (s.ends.empty()) {
    s.ends.push_back(outcomes[best]);
    s.end_hops.push_back(0);
  }
  // The chains continue the best starts (like polishing): the best chain end,
  // if lower, replaces the best start's MSE in the within-1% count (compared
  // on the exploration problem).
  s.explore_best = std::min(outcomes[best].mse, s.ends[static_cast<std::size_t>(best_finite(s.ends))].mse);
}

std::string describe(const FamilySpec& f) {
  return std::string("monotonic basin hopping (Leary 2000) on the exploration subsample: chains from the best "
                     "starts, each round perturbing every rate (or redrawing some) and moving to the best candidate "
                     "if it improves") +
         (relabelable_states(f) > 0 ? "; every new point also tries its state exchanges" : "");
}

bool always(const FamilySpec&) { return true; }

}  // namespace

SearchMove basin_hop_move() { return {"basin_hop", describe, always, run}; }

}  // namespace ctmc::analysis::fit_search
