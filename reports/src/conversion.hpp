// Report "conversion": the paper's MLP experiments (sections 3.4-4, Figures
// 3-5B, Table 1's MLP rows, Appendix B's IF baseline) reproduced end to end
// from real data with this toolkit's own commands:
//
//   train    784-256-128-10 MLPs per activation and training seed
//            (sim::train_mlp, what `ctmc-snn train` runs) on the MNIST digits
//            and on Fashion-MNIST;
//   fit      one CTMC neuron per (data set, activation, spiking layer), fitted
//            (analysis::fit, what `ctmc-snn fit --samples` runs) to the
//            layer's target activation on quantiles of its empirical
//            preactivations over the training images, pooled over the seeds;
//   sweep    a grid over tau x r with T as checkpoints (sim::run_sweep, what
//            `ctmc-snn sweep` runs) per (data set, activation): frontiers of
//            accuracy gap against SynOps and transitions, the cheapest cell
//            under the 1 pp criterion, the decomposition of eq. (decomp);
//   IF       the integrate-and-fire baseline (sim::simulate_if) on the ReLU
//            and clipped nets, over a range of time steps.
//
// Every net, neuron, preactivation sample and sweep document is written into
// the report folder with the command line that reproduces it from the
// repository root, so a reader can rerun any number with the CLI.
//
// The pieces below are the study's definitions that tests reach directly.
// Internal header of reports (not installed): the report registry runs the
// study (`report conversion`); the library and the tests include it as
// "conversion.hpp" (tests/CMakeLists.txt gives them reports/src).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ctmc/commands/verdict.hpp"

namespace ctmc::reports {

struct ReportContext;

// The design of a run: what is trained, fitted and swept.
struct ConversionDesign {
  std::string label;                  // stated in the report
  std::vector<int> hidden{256, 128};  // the paper's 784-256-128-10
  std::vector<std::uint64_t> seeds;   // training seeds (the paper: four)
  int epochs_mnist = 15, epochs_fashion = 15;
  int test_images = 500;  // spread over each test split (--subset stride:K)
  int trials = 1;
  std::vector<double> taus, rates, T;  // the sweep grid; T as checkpoints
  double dt = 0.005;
  std::size_t fit_samples = 2000;  // preactivation quantiles per layer
  int fit_starts = 32;
  std::size_t fit_train_images = 10000;  // training images whose preactivations are sampled
  std::vector<double> clip_K{1, 2, 4, 6, 10};  // the clip ablation (K = inf is the ReLU net)
  std::vector<int> if_steps;                   // IF baseline time steps
  bool fashion = true;                         // also run Fashion-MNIST
  bool clip_fashion = false;                   // and its clip ablation (the paper clips on MNIST only)
};

// The reduced default (one training seed, a small grid; under 15 minutes
// on 2 cores) or the paper's design (four seeds, two trials, 1000 test
// images, the full grid).
ConversionDesign conversion_design(bool full);

// Runs the study with `design` and writes the report; the exit status (0:
// every check held).
int run_conversion_report(const ReportContext& ctx, const ConversionDesign& design);

// --- The SynOps question ----------------------------------------------------
// What a cell's cost would read as under conventions other than eq. (synops)
// per sample; computed from the per-layer spike counts of one sweep cell.
struct SpikeTally {
  std::vector<double> layer_spikes;  // spikes per test image of each spiking layer
  std::vector<double> fanout;        // mean nonzero fanout of each spiking layer (0: none)
  double T = 0, dt = 0;
};
struct CostMeasure {
  std::string name, definition;
};
// The measures, in the order cost_values returns them; the first is eq.
// (synops) per sample, ours.
const std::vector<CostMeasure>& cost_measures();
std::vector<double> cost_values(const SpikeTally& t);

// --- Claims -------------------------------------------------------------
using commands::Verdict;
using commands::verdict_name;
// A published cost (e.g. minimum SynOps under the criterion) counts as
// reproduced when ours lies within a factor kCostTolerance of it (a point
// estimate: the cost definitions computed from mean spike tallies; the
// ledger decides by intervals, ledger.hpp); "never
// meets the criterion" is nullopt on either side and matches only itself.
inline constexpr double kCostTolerance = 1.25;
Verdict cost_verdict(const std::optional<double>& ours, const std::optional<double>& paper);

}  // namespace ctmc::reports
