// sweep --net NET.json[,...] --data DIR --neurons M.json[,...] --tau LIST
//       --rate LIST --T LIST ... --out FILE [--shard i/n] [--dry-run]
// sweep merge PART.json... --out FILE
//
// A grid of spiking-conversion runs (sim/studies/sweep.hpp, which describes the
// document and the parts: their format is the file format that merge and the
// reports read back). The command writes the document (or a part) to --out;
// its Result carries what it wrote and the summary the CLI prints.
#pragma once
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ctmc/commands/document.hpp"
#include "ctmc/sim/studies/sweep_document.hpp"

namespace ctmc::commands {

struct SweepCommandOptions {
  // The grid, its conventions and its limits, typed: the front ends parse
  // the option texts (command_text.hpp's lists, sim's parse_* for the
  // samplers and conventions) before the run. validate_sweep checks the
  // values; limits.memory_bytes is set from max_memory_gib.
  sim::SweepSpec spec;
  std::optional<sim::Shard> shard;  // none: the whole grid
  std::string out;                  // the document (or the part) to write
  int threads = 0;
  double max_memory_gib = 8;
  bool dry_run = false;  // check the grid and read every input; run and write nothing
};

// A point of the grid (sampler, tau, r, T) as the summary shows it: means
// (and the gap's sd) over the nets; gaps in percentage points, costs per
// test image.
struct SweepPointSummary {
  double tau = 0, rate = 0, T = 0, gap_mean = 0, gap_sd = 0, synops_mean = 0, transitions_mean = 0,
         spikes_per_neuron_mean = 0;
};
struct SweepSamplerSummary {
  std::string sampler;
  std::size_t frontier_synops = 0, frontier_transitions = 0;  // points on each Pareto frontier
  // The cheapest point whose mean gap is below the criterion; none when no
  // point meets it.
  std::optional<SweepPointSummary> least_synops, least_transitions;
};
struct SweepSummary {
  std::size_t cells = 0, runs = 0, nets = 0, points = 0;
  double criterion_pp = 0;
  std::vector<SweepSamplerSummary> samplers;  // in the spec's order
};

struct SweepCommandResult {
  enum class Kind { DryRun, Part, Document };
  Kind kind = Kind::Document;
  std::string out;            // the file written (none for a dry run)
  std::size_t runs = 0;       // the runs checked (dry run) or run and written (part, document)
  double T_max = 0;           // the largest window (each run reads every T from one path up to it)
  sim::Shard shard;           // Kind::Part
  nlohmann::ordered_json document;  // the part or the document as written (sim/studies/sweep_document.hpp's to_json)
  SweepSummary summary;       // Kind::Document
};

// Checks the options and every input before it runs anything (InputError
// naming the option). `progress(done, total)` after each run.
SweepCommandResult run_sweep_command(const SweepCommandOptions& o,
                                     const std::function<void(std::size_t, std::size_t)>& progress = {});
// The parts' runs merged into the document the unsharded sweep writes, to `out`.
SweepCommandResult run_sweep_merge(const std::vector<std::string>& parts, const std::string& out);

// The summary of a sweep document (sim::sweep_document's).
SweepSummary sweep_summary(const sim::SweepDocument& document);

// The document (or part) as written; a dry run has none (null).
void write(DocumentWriter& w, const SweepCommandResult& r);
const nlohmann::ordered_json& to_json(const SweepCommandResult& r);

}  // namespace ctmc::commands
