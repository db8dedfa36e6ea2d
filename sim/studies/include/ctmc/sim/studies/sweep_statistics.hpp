// Confidence intervals of a sweep point's accuracy gaps and costs, and the
// cheapest point under the criterion decided with stated confidence: what
// the reports' claims ledgers decide by (README "Reports": how verdicts are
// decided).
//
// A point's runs (one per net and trial, sweep.hpp) score the SNN on the
// same test images as the ANN and the mean field, so every gap is a paired
// comparison over images (RunWindow::ann_vs_snn):
//   one run      the exact paired interval, conditional on the discordant
//                images (McNemar; solvers::paired_difference_interval);
//   several      the mean of the runs' gaps, with Student's t on n - 1
//                degrees of freedom (n test images) and as standard error
//                the mean of the runs' paired standard errors,
//                sqrt((m - n d^2) / (n (n - 1))) with m discordant images and
//                d the run's gap. The runs share their images, so their gaps
//                are correlated; the mean of the standard errors bounds the
//                standard error of the mean for any correlation (the
//                triangle inequality for standard deviations), and it
//                carries the trial-to-trial spread: each image's SNN outcome
//                is one draw of the spiking network's randomness.
// Costs per image (SynOps, transitions): the mean over the runs, with the
// runs' standard errors sd / sqrt(n) bounded the same way.
#pragma once
#include <vector>

#include "ctmc/sim/studies/sweep_document.hpp"
#include "ctmc/solvers/intervals.hpp"

namespace ctmc::sim {

// A_ANN - A_SNN (the gap), A_ANN - A_MF (the mean-field mismatch), A_MF -
// A_SNN (the sampling gap), all in percentage points.
enum class GapKind { AnnSnn, AnnMf, MfSnn };

// The point's gap `kind` (pp, the mean over its runs) and the standard error
// described above, on `images` - 1 degrees of freedom: what a claim that
// combines several points' gaps (a mean of differences) is decided by.
struct GapEstimate {
  double estimate = 0, standard_error = 0;
  std::size_t images = 0;
};
GapEstimate gap_estimate(const SweepDocument& d, const SweepPoint& p, GapKind kind);

// The interval of the point's gap `kind` (pp). InputError when the document
// holds no run of the point.
solvers::ConfidenceInterval gap_interval(const SweepDocument& d, const SweepPoint& p, GapKind kind, double confidence,
                                         solvers::Sides sides = solvers::Sides::Two);

// The interval of the point's cost per test image.
solvers::ConfidenceInterval cost_interval(const SweepDocument& d, const SweepPoint& p, SweepCost cost,
                                          double confidence, solvers::Sides sides = solvers::Sides::Two);

// The cheapest point under the criterion, with confidence. Each point's gap
// is held against the criterion by its one-sided interval at `confidence`
// (per point; no correction for the number of points).
struct CheapestWithConfidence {
  // The cheapest point whose gap's upper bound is below the criterion: it
  // meets the criterion with confidence. Null when none does.
  const SweepPoint* confident = nullptr;
  // The points cheaper than `confident` (all points, when it is null) whose
  // gap's lower bound is below the criterion: the data do not rule out that
  // they meet it. By increasing cost.
  std::vector<const SweepPoint*> possible;
  // Where the least cost under the criterion lies: from the lowest
  // one-sided lower bound of the candidates' costs (possible and confident)
  // to the confident point's upper bound (infinity without one). Empty
  // (lo > hi) when no point can meet the criterion.
  solvers::ConfidenceInterval cost;
  // Where the least gap over the points lies: from the lowest one-sided
  // lower bound to the lowest one-sided upper bound. A point meets the
  // criterion with confidence iff hi < criterion; none can iff lo >= it.
  solvers::ConfidenceInterval least_gap;
  double criterion = 0;  // pp, as given
  bool none_can_meet() const { return !confident && possible.empty(); }
};
CheapestWithConfidence cheapest_with_confidence(const SweepDocument& d, SamplerKind sampler, SweepCost cost,
                                                double criterion, double confidence);

// The cost member of a point (synops_per_sample_mean or
// transitions_per_sample_mean).
double point_cost(const SweepPoint& p, SweepCost cost);

}  // namespace ctmc::sim
