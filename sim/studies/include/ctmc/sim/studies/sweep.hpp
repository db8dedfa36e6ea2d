// Parameter sweeps of the spiking conversion (DESIGN.md section 10; paper
// sections 3.4 and 4: Pareto frontiers of accuracy gap against SynOps).
//
// A sweep is a grid of runs: source net (a training seed) x sampler x tau x
// r x trial, each run one trial of simulate_network on the test images, read
// out at every window T of a list of checkpoints from the same path (so the
// grid costs its largest T, not the sum). A run's result is a pure function
// of (inputs, run, seed): trial t of sample s draws from stream_seed(seed, t,
// s) whatever the net, sampler, tau or r, as `simulate network` does, so a
// sweep cell equals the `simulate network` run with the same options.
//
// Runs are numbered in that nesting order (net outermost, trial innermost);
// shard i/n runs the runs u with u mod n = i - 1 and writes a part
// (sweep_part); merge_sweep_parts checks that the parts are one sweep's
// complete, disjoint shards and rebuilds the document from their runs, byte
// for byte what the unsharded run writes (sweep_document over all runs).
//
// Aggregation (sweep_document), accuracies in percent and gaps in percentage
// points:
//   cells   per (net, sampler, tau, r, T): A_ANN, A_MF, A_SNN mean and sd over
//           trials, the decomposition gap = (A_ANN - A_MF) + (A_MF - A_SNN),
//           SynOps per sample, spikes per neuron, CTMC transitions per
//           sample, the readout's tie fraction, the quantiles of the
//           per-neuron spike counts (median, q90, q99, max of N_i(T) over
//           every spiking neuron and test image) and their share of zeros,
//           and per spiking layer spikes
//           per neuron, the decoded-rate relative RMSE against the mean field
//           and the share of mean-field inputs outside the fit domain (means
//           over trials);
//   points  per (sampler, tau, r, T): means and sds over the nets (the
//           paper's error bars over training seeds);
//   frontier per sampler, the points not dominated in (gap, SynOps) and in
//           (gap, transitions) (pareto.hpp), by increasing cost;
//   min_cost per sampler, the cheapest point whose mean gap is below the
//           criterion (pp), by SynOps and by transitions.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ctmc/sim/engines/network_sim.hpp"
#include "ctmc/sim/neurons/sampler.hpp"
#include "ctmc/sim/engines/spiking.hpp"
#include "ctmc/sim/formats/tensor_inputs.hpp"

namespace ctmc::sim {

// What a sweep command takes on before it refuses (InputError naming the
// option that raises the limit): a grid of more runs than `runs` (each run is
// a record of the document; a million-run grid is a typo far more often than
// a plan), a shard whose work is more than `neuron_steps` (runs x test images
// x T/dt steps x spiking neurons: the unit the simulation's time is
// proportional to), or a document estimated at more than `memory_bytes` in
// memory.
struct SweepLimits {
  std::size_t runs = 10000;
  double neuron_steps = 1e15;
  std::uint64_t memory_bytes = std::uint64_t(8) << 30;
};

struct SweepSpec {
  std::vector<std::string> nets;     // manifests, one per source net
  DataSource data;                   // data folder and/or tensor files
  std::vector<std::string> neurons;  // one model for every spiking layer, or one per layer
  std::vector<SamplerKind> samplers{SamplerKind::Exact};
  // The spiking kernel of every sampler (auto, reference, vectorised or fast;
  // check_kernel's rule for each). Recorded in the spec because a seeded
  // run's numbers depend on it; a spec without the key (documents written
  // before it existed) reads as "reference", the kernel every sweep ran on then.
  Kernel kernel = Kernel::Auto;
  std::vector<double> taus, rates;
  std::vector<double> T;  // checkpoints, increasing
  int trials = 1;
  double dt = 0.005;
  Readout readout = Readout::Spike;
  ScaleMode scale = ScaleMode::Q99;
  int limit = 0;  // first `limit` test images (0: all)
  // Conventions of other codes (network_sim.hpp, trace.hpp), defaults ours.
  TraceWeight trace_weight = TraceWeight::Integral;
  OutputScale output_scale = OutputScale::Logits;
  TestSubset subset;
  std::vector<double> layer_alpha;
  std::uint64_t seed = 0;
  double criterion = 1;  // pp, for min_cost
  // Limits on what one command takes on (check_sweep_limits); they change
  // no result and are not part of the recorded spec.
  SweepLimits limits;
};

// InputError naming the field ("taus", "T", ...) for an empty or repeated list entry, a
// non-positive or non-finite tau, r, T or dt, T not increasing, trials < 1,
// limit < 0, a criterion that is not a finite number > 0.
void validate_sweep(const SweepSpec& spec);

struct SweepRun {
  std::size_t net = 0, sampler = 0, tau = 0, rate = 0;  // indices into the spec's lists
  int trial = 0;
};
std::size_t sweep_run_count(const SweepSpec& spec);
SweepRun sweep_run_at(const SweepSpec& spec, std::size_t u);

// Shard i of n (1 <= i <= n): the runs u with u mod n = i - 1.
struct Shard {
  std::size_t index = 1, count = 1;
};
// "i/n"; InputError naming `option` for anything else (0/3, 4/3, 1/0, 1/x).
Shard parse_shard(const std::string& text, const std::string& option = "shard");

// The spec as it is recorded in parts and documents (what identifies a sweep).
nlohmann::ordered_json sweep_spec_json(const SweepSpec& spec);

// Every file the sweep reads (manifests and their weights, neuron models,
// the data folder, tensor files, the subset's index file): what its output
// must not be.
std::vector<std::string> sweep_input_files(const SweepSpec& spec);

// The grid's size against spec.limits.runs; InputError naming --max-runs
// beyond it.
void check_sweep_limits(const SweepSpec& spec);

// Reads every input of the sweep (nets, data, neurons) and checks that the
// neurons fit the nets and that the shard's work and the document's memory
// stay within spec.limits; the number of runs. What run_sweep would refuse
// for bad input, before it runs anything.
std::size_t check_sweep_inputs(const SweepSpec& spec, Shard shard = {});

// The results as types (sweep_document.hpp, which also writes and reads them
// as JSON).
struct RunRecord;
struct SweepPart;
struct SweepDocument;

// Runs the shard's runs in order (threads: simulate_network's) and returns
// their records. `progress(done, total)` is called after each run.
std::vector<RunRecord> run_sweep(const SweepSpec& spec, Shard shard, int threads,
                                 const std::function<void(std::size_t, std::size_t)>& progress = {});

// A part: the spec, the shard and its runs' records.
SweepPart sweep_part(const SweepSpec& spec, Shard shard, std::vector<RunRecord> runs);

// The full document from the spec and every run's record (in run order);
// InputError for records that are not the grid's runs in order, or that lack
// a checkpoint or layer. The spec is recorded as sweep_spec_json writes it,
// or as `recorded_spec` (a part's own text, written back verbatim).
SweepDocument sweep_document(const SweepSpec& spec, std::vector<RunRecord> runs);
SweepDocument sweep_document(const SweepSpec& spec, nlohmann::ordered_json recorded_spec, std::vector<RunRecord> runs);

// The most bytes a part of shard `shard` of the grid `spec` (as recorded)
// can legitimately take as a file: its runs' records, each of a size fixed
// by the checkpoints and spiking layers (one per model file when several
// are given, else at most kPartLayersAssumed), at a generous width per
// number (any indentation another tool may write), plus the spec.
inline constexpr std::size_t kPartLayersAssumed = 64;
std::uint64_t max_sweep_part_bytes(const nlohmann::ordered_json& spec, Shard shard);

// Parts up to this size are read whole; a larger one is first scanned for
// its spec and shard (streamed, its runs not kept) and refused when it is
// larger than max_sweep_part_bytes allows.
inline constexpr std::uint64_t kSweepPartScanAbove = std::uint64_t(16) << 20;

// A part file, parsed. InputError naming the file when it is not a regular
// file, cannot be read, is not JSON, or is larger than its own grid allows
// (max_sweep_part_bytes). `scan_above`: where the scan starts (tests lower it).
nlohmann::ordered_json read_sweep_part(const std::string& path, std::uint64_t scan_above = kSweepPartScanAbove);

// The full document from parts (file name, parsed part). InputError naming
// the file and the field for a part that is not a sweep part, of another
// sweep (its spec differs), of another shard count, a shard given twice, a
// run outside its shard or repeated, a field that is unknown, missing, of
// the wrong type or outside its range (accuracies in [0, 100], fractions in
// [0, 1], costs >= 0, a run's tau, r, sampler and T equal to the grid's,
// every layer and checkpoint present); and naming the shards that are
// missing. The parts are consumed (their records are read into the document).
SweepDocument merge_sweep_parts(std::vector<std::pair<std::string, nlohmann::ordered_json>> parts);

}  // namespace ctmc::sim
