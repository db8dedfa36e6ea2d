// The sweep's results as types: a run's record (what run_sweep returns), the
// part of a shard, and the document that sweep_document aggregates from the
// records (sweep.hpp says what each number means and how it is averaged).
//
// to_json writes the file format and from_json reads it back, each once,
// here: the keys in the order below, numbers as nlohmann prints doubles (the
// shortest text that reads back to the same double; NaN and infinities as
// null, which reads back as NaN). So a document written by `ctmc-snn sweep`,
// read with from_json and written again, is the same bytes (tested by
// tests/cli/sweep_document_test.cpp), and code that reads results names
// members, which the compiler checks, instead of keys, which only a run would.
//
// from_json checks the shape (every key present, of its type) and the spec
// (read_sweep_spec), not the ranges of the numbers: merge_sweep_parts checks
// those on the parts, and a document taken from disk is rebuilt from its runs
// (sweep_document) before anything reads its cells or points.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ctmc/sim/neurons/sampler.hpp"
#include "ctmc/sim/studies/sweep.hpp"
#include "ctmc/solvers/intervals.hpp"

namespace ctmc::sim {

// --- one run's record (key "runs") ------------------------------------------

// A spiking layer of the run: its q99 scale, the rate scale alpha, and the
// share of mean-field inputs outside the neuron model's fit domain.
struct RunLayer {
  double q99 = 0, alpha = 0, outside_fit_domain = 0;
};
// A spiking layer at one checkpoint: spikes per neuron per test image, and
// the decoded rates' relative RMSE against the mean field (NaN: undefined).
struct RunWindowLayer {
  double spikes_per_neuron = 0, rate_rel_rmse = 0;
};
// The run read out at one checkpoint T. Accuracy in percent; costs per test
// image, with their sample sds over the test images; count_quantiles at
// kCountQuantileLevels; the SNN scored per image against the ANN and the
// mean field (WindowResult::ann_vs_snn, n = the run's test_images; the
// file holds [n10, n01]).
struct RunWindow {
  double T = 0, a_snn = 0, synops_per_sample = 0, spikes_per_neuron = 0, transitions_per_sample = 0,
         tie_fraction = 0;
  std::vector<double> count_quantiles;
  double silent_fraction = 0;
  std::vector<RunWindowLayer> layers;
  double synops_sd = 0, transitions_sd = 0;
  solvers::PairedCounts ann_vs_snn, mf_vs_snn;
};
// Run `run` of the grid (sweep_run_at): net index, sampler, tau, r, trial.
struct RunRecord {
  std::size_t run = 0, net = 0;
  SamplerKind sampler = SamplerKind::Exact;
  double tau = 0, rate = 0;
  int trial = 0;
  std::size_t test_images = 0;
  double a_ann = 0, a_mf = 0;  // percent
  solvers::PairedCounts ann_vs_mf;  // per test image (NetworkSimResult::ann_vs_mf)
  std::vector<RunLayer> layers;
  std::vector<RunWindow> windows;  // one per checkpoint of the spec's T
};

// --- the document's aggregates -------------------------------------------------

struct CellLayer {
  double spikes_per_neuron = 0, rate_rel_rmse = 0, outside_fit_domain = 0;
};
// (net, sampler, tau, r, T) over the trials.
struct SweepCell {
  std::size_t net = 0;
  SamplerKind sampler = SamplerKind::Exact;
  double tau = 0, rate = 0, T = 0;
  double a_ann = 0, a_mf = 0, a_snn_mean = 0, a_snn_sd = 0;
  double gap = 0, mean_field_mismatch = 0, sampling_gap = 0;
  double synops_per_sample = 0, spikes_per_neuron = 0, transitions_per_sample = 0, tie_fraction = 0;
  std::vector<double> count_quantiles;
  double silent_fraction = 0;
  std::vector<CellLayer> layers;
};
// (sampler, tau, r, T) over the nets: means, and sds for the gap and costs.
struct SweepPoint {
  SamplerKind sampler = SamplerKind::Exact;
  double tau = 0, rate = 0, T = 0;
  std::size_t nets = 0;
  double a_ann = 0, a_mf = 0, a_snn = 0;
  double gap_mean = 0, gap_sd = 0;
  double synops_per_sample_mean = 0, synops_per_sample_sd = 0;
  double transitions_per_sample_mean = 0, transitions_per_sample_sd = 0;
  double spikes_per_neuron_mean = 0, spikes_per_neuron_sd = 0;
};

// The two costs a frontier and min_cost are taken over.
enum class SweepCost { SynOps, Transitions };

// Per sampler: the points (indices into points) on the Pareto frontier of
// gap against each cost, by increasing cost.
struct SamplerFrontier {
  SamplerKind sampler = SamplerKind::Exact;
  std::vector<std::size_t> synops, transitions;
  const std::vector<std::size_t>& by(SweepCost c) const { return c == SweepCost::SynOps ? synops : transitions; }
};
// Per sampler: the cheapest point by each cost whose mean gap is below the
// criterion; none when no point meets it.
struct SamplerMinCost {
  SamplerKind sampler = SamplerKind::Exact;
  std::optional<std::size_t> synops, transitions;
  const std::optional<std::size_t>& by(SweepCost c) const { return c == SweepCost::SynOps ? synops : transitions; }
};

struct SweepDocument {
  SweepSpec spec;  // the grid, as read from recorded_spec
  // The spec as the command or the first part recorded it, written back
  // verbatim: what identifies the sweep (report --sweeps compares it), kept
  // as text because a part written before "kernel" existed has none.
  nlohmann::ordered_json recorded_spec;
  std::vector<SweepPoint> points;
  std::vector<SamplerFrontier> frontier;  // in the spec's sampler order
  std::vector<SamplerMinCost> min_cost;   // in the spec's sampler order
  std::vector<SweepCell> cells;
  std::vector<RunRecord> runs;

  // The point min_cost names for (sampler, cost); null when none meets the
  // criterion or the sampler was not swept.
  const SweepPoint* min_cost_point(SamplerKind sampler = SamplerKind::Exact, SweepCost cost = SweepCost::SynOps) const;
  // The point (sampler, tau, r, T); null when it is not on the grid.
  const SweepPoint* find_point(SamplerKind sampler, double tau, double rate, double T) const;
  // The frontier of `sampler` by `cost`, its points in order (none when the
  // sampler was not swept).
  std::vector<const SweepPoint*> frontier_points(SamplerKind sampler, SweepCost cost) const;
  // The cells of a point, one per net.
  std::vector<const SweepCell*> cells_of(const SweepPoint& point) const;
};

// A shard's part: the spec, the shard and its runs' records.
struct SweepPart {
  SweepSpec spec;
  Shard shard;
  std::vector<RunRecord> runs;
};

// The spec a part or document records, as a SweepSpec; InputError
// "<file>: spec.<key>: ..." for a key that is unknown, missing, of the wrong
// type, or a grid validate_sweep refuses, or a spec that sweep_spec_json
// would not write so.
SweepSpec read_sweep_spec(const nlohmann::ordered_json& spec, const std::string& file);

// A sweep document parsed from `file` (its name for messages) as the types;
// InputError "<file>: not a sweep document ..." for another format or a key
// missing or of the wrong type.
SweepDocument sweep_document_from_json(const nlohmann::ordered_json& j, const std::string& file);

void to_json(nlohmann::ordered_json& j, const RunRecord& r);
void from_json(const nlohmann::ordered_json& j, RunRecord& r);
void to_json(nlohmann::ordered_json& j, const SweepCell& c);
void to_json(nlohmann::ordered_json& j, const SweepPoint& p);
void to_json(nlohmann::ordered_json& j, const SweepDocument& d);
void to_json(nlohmann::ordered_json& j, const SweepPart& p);

}  // namespace ctmc::sim
