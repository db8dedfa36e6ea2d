// sweep and sweep merge: the options read, the inputs checked, the runs, the
// file written, and the summary of the document.
#include <fmt/format.h>

#include "ctmc/commands/command_text.hpp"
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

// The spec from the option texts, each refused naming its option.
sim::SweepSpec read_spec(const SweepCommandOptions& o) {
  sim::SweepSpec s = o.spec;
  s.nets = ctmc::split_input_list(o.nets, "--net");
  s.neurons = ctmc::split_input_list(o.neurons, "--neurons");
  s.taus = number_list(o.taus, "--tau");
  s.rates = number_list(o.rates, "--rate");
  s.T = number_list(o.T, "--T");
  s.samplers.clear();
  for (const auto& name : ctmc::split_input_list(o.samplers, "--sampler")) s.samplers.push_back(sim::parse_sampler(name));
  s.readout = sim::parse_readout(o.readout);
  s.scale = sim::parse_scale_mode(o.scale);
  s.trace_weight = sim::parse_trace_weight(o.trace_weight);
  s.kernel = o.kernel;  // checked with the grid (validate_sweep)
  s.output_scale = sim::parse_output_scale(o.output_scale);
  s.subset = sim::parse_test_subset(o.subset);
  if (!o.layer_alpha.empty()) s.layer_alpha = layer_alpha_list(o.layer_alpha);
  return s;
}

SweepPointSummary point_summary(const Json& p) {
  return {p.at("tau").get<double>(),
          p.at("rate").get<double>(),
          p.at("T").get<double>(),
          p.at("gap_mean").get<double>(),
          p.at("gap_sd").get<double>(),
          p.at("synops_per_sample_mean").get<double>(),
          p.at("transitions_per_sample_mean").get<double>(),
          p.at("spikes_per_neuron_mean").get<double>()};
}

}  // namespace

SweepSummary sweep_summary(const Json& doc) {
  const Json& points = doc.at("points");
  SweepSummary s;
  s.cells = doc.at("cells").size();
  s.runs = doc.at("runs").size();
  s.nets = doc.at("spec").at("nets").size();
  s.points = points.size();
  s.criterion_pp = doc.at("spec").at("criterion_pp").get<double>();
  for (const auto& [sampler, best] : doc.at("min_cost").items()) {
    SweepSamplerSummary ss;
    ss.sampler = sampler;
    ss.frontier_synops = doc.at("frontier").at(sampler).at("synops").size();
    ss.frontier_transitions = doc.at("frontier").at(sampler).at("transitions").size();
    // best by reference in the capture list: clang 14 (the fuzzing build)
    // does not capture structured bindings implicitly.
    const auto least = [&points, &best = best](const char* cost) -> std::optional<SweepPointSummary> {
      if (best.at(cost).is_null()) return std::nullopt;
      return point_summary(points.at(best.at(cost).get<std::size_t>()));
    };
    ss.least_synops = least("synops");
    ss.least_transitions = least("transitions");
    s.samplers.push_back(std::move(ss));
  }
  return s;
}

SweepCommandResult run_sweep_command(const SweepCommandOptions& o,
                                     const std::function<void(std::size_t, std::size_t)>& progress) {
  sim::SweepSpec s = read_spec(o);
  const sim::Shard shard = o.shard.empty() ? sim::Shard{} : sim::parse_shard(o.shard);
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
  Json runs = sim::run_sweep(s, shard, o.threads, progress);
  r.runs = runs.size();
  if (!o.shard.empty()) {
    r.kind = SweepCommandResult::Kind::Part;
    r.document = sim::sweep_part(s, shard, std::move(runs));
    write_document(o.out, r.document);
    return r;
  }
  r.kind = SweepCommandResult::Kind::Document;
  r.document = sim::sweep_document(sim::sweep_spec_json(s), std::move(runs));
  write_document(o.out, r.document);
  r.summary = sweep_summary(r.document);
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
  r.document = sim::merge_sweep_parts(std::move(parts));
  write_document(out, r.document);
  r.summary = sweep_summary(r.document);
  r.runs = r.summary.runs;
  return r;
}

void write(DocumentWriter& w, const SweepCommandResult& r) { put(w, "", r.document); }
const Json& to_json(const SweepCommandResult& r) { return r.document; }

}  // namespace ctmc::commands
