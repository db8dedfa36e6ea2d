// sweep and sweep merge: the options read, the inputs checked, the runs, the
// file written, and the summary of the document.
#include <fmt/format.h>

#include "ctmc/commands/output_path.hpp"
#include "ctmc/commands/sweep.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/io/same_file.hpp"
#include "ctmc/sim/formats/atomic_write.hpp"
#include "ctmc/solvers/number_text.hpp"

namespace ctmc::commands {
namespace {

using Json = nlohmann::ordered_json;

void write_document(const std::string& path, const Json& doc) {
  const std::string text = doc.dump(1) + "\n";
  sim::write_files_atomically({{path, std::vector<std::uint8_t>(text.begin(), text.end())}});
}

SweepPointSummary point_summary(const sim::SweepPoint& p) {
  return {p.tau,
          p.rate,
          p.T,
          p.gap_mean,
          p.gap_sd,
          p.synops_per_sample_mean,
          p.transitions_per_sample_mean,
          p.spikes_per_neuron_mean};
}

}  // namespace

SweepSummary sweep_summary(const sim::SweepDocument& doc) {
  SweepSummary s;
  s.cells = doc.cells.size();
  s.runs = doc.runs.size();
  s.nets = doc.spec.nets.size();
  s.points = doc.points.size();
  s.criterion_pp = doc.spec.criterion;
  for (std::size_t k = 0; k < doc.min_cost.size(); ++k) {
    const sim::SamplerMinCost& best = doc.min_cost[k];
    SweepSamplerSummary ss;
    ss.sampler = sim::sampler_name(best.sampler);
    for (const sim::SamplerFrontier& f : doc.frontier)
      if (f.sampler == best.sampler) {
        ss.frontier_synops = f.synops.size();
        ss.frontier_transitions = f.transitions.size();
      }
    const auto least = [&](sim::SweepCost cost) -> std::optional<SweepPointSummary> {
      const sim::SweepPoint* p = doc.min_cost_point(best.sampler, cost);
      return p ? std::optional<SweepPointSummary>(point_summary(*p)) : std::nullopt;
    };
    ss.least_synops = least(sim::SweepCost::SynOps);
    ss.least_transitions = least(sim::SweepCost::Transitions);
    s.samplers.push_back(std::move(ss));
  }
  return s;
}

SweepCommandResult run_sweep_command(const SweepCommandOptions& o,
                                     const std::function<void(std::size_t, std::size_t)>& progress) {
  sim::SweepSpec s = o.spec;
  const sim::Shard shard = o.shard.value_or(sim::Shard{});
  if (!(o.max_memory_gib > 0) || !(o.max_memory_gib <= 1e6))
    throw InputError(fmt::format("--max-memory: {} is not a number of GiB in (0, 1e6]", o.max_memory_gib));
  s.limits.memory_bytes = static_cast<std::uint64_t>(o.max_memory_gib * static_cast<double>(std::uint64_t(1) << 30));
  sim::validate_sweep(s);
  sim::check_sweep_limits(s);
  check_output_path(o.out, "--out");
  io::refuse_outputs_over_inputs({{"--out", o.out}}, sim::sweep_input_files(s));
  SweepCommandResult r;
  r.T_max = s.T.back();
  r.shard = shard;
  if (o.dry_run) {
    r.kind = SweepCommandResult::Kind::DryRun;
    r.runs = sim::check_sweep_inputs(s, shard);
    return r;
  }
  r.out = o.out;
  std::vector<sim::RunRecord> runs = sim::run_sweep(s, shard, o.threads, progress);
  r.runs = runs.size();
  if (o.shard) {
    r.kind = SweepCommandResult::Kind::Part;
    r.document = sim::sweep_part(s, shard, std::move(runs));
    write_document(o.out, r.document);
    return r;
  }
  r.kind = SweepCommandResult::Kind::Document;
  const sim::SweepDocument doc = sim::sweep_document(s, std::move(runs));
  r.summary = sweep_summary(doc);
  r.document = doc;
  write_document(o.out, r.document);
  return r;
}

SweepCommandResult run_sweep_merge(const std::vector<std::string>& part_files, const std::string& out) {
  check_output_path(out, "--out");
  io::refuse_outputs_over_inputs({{"--out", out}}, part_files);
  std::vector<std::pair<std::string, Json>> parts;
  for (const auto& path : part_files) parts.emplace_back(path, sim::read_sweep_part(path));
  SweepCommandResult r;
  r.kind = SweepCommandResult::Kind::Document;
  r.out = out;
  const sim::SweepDocument doc = sim::merge_sweep_parts(std::move(parts));
  r.summary = sweep_summary(doc);
  r.document = doc;
  write_document(out, r.document);
  r.runs = r.summary.runs;
  return r;
}

void write(DocumentWriter& w, const SweepCommandResult& r) { put(w, "", r.document); }
const Json& to_json(const SweepCommandResult& r) { return r.document; }

}  // namespace ctmc::commands
