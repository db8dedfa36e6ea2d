#include "ctmc/sim/studies/sweep_statistics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ctmc/core/errors.hpp"

namespace ctmc::sim {
namespace {

constexpr double kPercent = 100;
constexpr double kInf = std::numeric_limits<double>::infinity();

// The point's runs, each with the index of the point's checkpoint.
struct PointRuns {
  std::vector<const RunRecord*> runs;
  std::size_t window = 0;
  std::size_t images = 0;
};

PointRuns runs_of(const SweepDocument& d, const SweepPoint& p) {
  PointRuns r;
  const auto w = std::find(d.spec.T.begin(), d.spec.T.end(), p.T);
  if (w == d.spec.T.end()) throw InputError("sweep", fmt::format("T = {} is not a checkpoint of the sweep", p.T));
  r.window = static_cast<std::size_t>(w - d.spec.T.begin());
  for (const RunRecord& run : d.runs)
    if (run.sampler == p.sampler && run.tau == p.tau && run.rate == p.rate) r.runs.push_back(&run);
  if (r.runs.empty())
    throw InputError("sweep", fmt::format("no run of the point tau {}, r {}, T {}", p.tau, p.rate, p.T));
  r.images = r.runs.front()->test_images;
  return r;
}

// The standard error of a run's paired difference (a fraction).
double paired_standard_error(const solvers::PairedCounts& c) {
  if (c.n < 2) return kInf;
  const double n = static_cast<double>(c.n), d = c.difference();
  const double ss = static_cast<double>(c.n10 + c.n01) - n * d * d;
  return std::sqrt(std::max(0.0, ss) / (n * (n - 1)));
}

solvers::ConfidenceInterval scaled(solvers::ConfidenceInterval x, double factor) {
  return {x.lo * factor, x.hi * factor};
}

}  // namespace

double point_cost(const SweepPoint& p, SweepCost cost) {
  return cost == SweepCost::SynOps ? p.synops_per_sample_mean : p.transitions_per_sample_mean;
}

namespace {

// The tallies a gap is taken of: one per run; the mean field is
// deterministic, so A_ANN - A_MF has one per net, whatever the trials.
std::vector<solvers::PairedCounts> tallies_of(const PointRuns& pr, GapKind kind) {
  std::vector<solvers::PairedCounts> tallies;
  std::vector<std::size_t> nets_seen;
  for (const RunRecord* r : pr.runs) {
    if (kind == GapKind::AnnMf) {
      if (std::find(nets_seen.begin(), nets_seen.end(), r->net) != nets_seen.end()) continue;
      nets_seen.push_back(r->net);
      tallies.push_back(r->ann_vs_mf);
    } else {
      const RunWindow& w = r->windows.at(pr.window);
      tallies.push_back(kind == GapKind::AnnSnn ? w.ann_vs_snn : w.mf_vs_snn);
    }
  }
  return tallies;
}

}  // namespace

namespace {

// The mean of the tallies' differences and of their paired standard errors, in pp.
GapEstimate estimate_of(const std::vector<solvers::PairedCounts>& tallies, std::size_t images) {
  double estimate = 0, se = 0;
  for (const solvers::PairedCounts& c : tallies) {
    estimate += c.difference();
    se += paired_standard_error(c);
  }
  const double k = static_cast<double>(tallies.size());
  return {kPercent * estimate / k, kPercent * se / k, images};
}

}  // namespace

GapEstimate gap_estimate(const SweepDocument& d, const SweepPoint& p, GapKind kind) {
  const PointRuns pr = runs_of(d, p);
  return estimate_of(tallies_of(pr, kind), pr.images);
}

solvers::ConfidenceInterval gap_interval(const SweepDocument& d, const SweepPoint& p, GapKind kind, double confidence,
                                         solvers::Sides sides) {
  const PointRuns pr = runs_of(d, p);
  const std::vector<solvers::PairedCounts> tallies = tallies_of(pr, kind);
  if (tallies.size() == 1) return scaled(solvers::paired_difference_interval(tallies[0], confidence, sides), kPercent);
  if (pr.images < 2) return {-kInf, kInf};
  const GapEstimate g = estimate_of(tallies, pr.images);
  return solvers::standard_error_interval(g.estimate, g.standard_error, static_cast<double>(g.images) - 1, confidence,
                                          sides);
}

solvers::ConfidenceInterval cost_interval(const SweepDocument& d, const SweepPoint& p, SweepCost cost,
                                          double confidence, solvers::Sides sides) {
  const PointRuns pr = runs_of(d, p);
  if (pr.images < 2) return {-kInf, kInf};
  double estimate = 0, se = 0;
  for (const RunRecord* r : pr.runs) {
    const RunWindow& w = r->windows.at(pr.window);
    estimate += cost == SweepCost::SynOps ? w.synops_per_sample : w.transitions_per_sample;
    se += (cost == SweepCost::SynOps ? w.synops_sd : w.transitions_sd) / std::sqrt(static_cast<double>(pr.images));
  }
  const double k = static_cast<double>(pr.runs.size());
  return solvers::standard_error_interval(estimate / k, se / k, static_cast<double>(pr.images) - 1, confidence, sides);
}

CheapestWithConfidence cheapest_with_confidence(const SweepDocument& d, SamplerKind sampler, SweepCost cost,
                                                double criterion, double confidence) {
  std::vector<const SweepPoint*> order;
  for (const SweepPoint& p : d.points)
    if (p.sampler == sampler) order.push_back(&p);
  std::stable_sort(order.begin(), order.end(),
                   [&](const SweepPoint* a, const SweepPoint* b) { return point_cost(*a, cost) < point_cost(*b, cost); });
  CheapestWithConfidence out;
  out.least_gap = {kInf, kInf};
  out.criterion = criterion;
  for (const SweepPoint* p : order) {
    const double hi = gap_interval(d, *p, GapKind::AnnSnn, confidence, solvers::Sides::Upper).hi;
    const double lo = gap_interval(d, *p, GapKind::AnnSnn, confidence, solvers::Sides::Lower).lo;
    out.least_gap = {std::min(out.least_gap.lo, lo), std::min(out.least_gap.hi, hi)};
    if (out.confident) continue;
    if (hi < criterion)
      out.confident = p;
    else if (lo < criterion)
      out.possible.push_back(p);
  }
  out.cost = {kInf, out.confident ? cost_interval(d, *out.confident, cost, confidence, solvers::Sides::Upper).hi : kInf};
  for (const SweepPoint* p : out.possible)
    out.cost.lo = std::min(out.cost.lo, cost_interval(d, *p, cost, confidence, solvers::Sides::Lower).lo);
  if (out.confident)
    out.cost.lo = std::min(out.cost.lo, cost_interval(d, *out.confident, cost, confidence, solvers::Sides::Lower).lo);
  if (out.none_can_meet()) out.cost = {kInf, -kInf};
  return out;
}

}  // namespace ctmc::sim
