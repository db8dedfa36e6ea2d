// ctmc-snn sweep --net NET.json[,NET2.json,...] --data DIR --neurons M.json[,...]
//     --tau LIST --rate LIST --T LIST [--sampler LIST] [--trials N] [--dt DT]
//     [--readout spike|integrate] [--scale q99|const] [--limit N] [--seed S]
//     [--threads N] [--criterion PP] [--shard i/n] [--max-runs N]
//     [--max-neuron-steps X] [--max-memory GIB] [--dry-run] --out FILE [--json]
// ctmc-snn sweep merge PART.json... --out FILE [--json]
//
// A grid of spiking-conversion runs (sim/sweep.hpp): accuracies, the gap
// decomposition, SynOps, spikes per neuron and CTMC transitions per cell,
// Pareto frontiers and the cheapest cell under a gap criterion. With --shard
// the command runs a deterministic part of the runs and writes a part; merge
// combines the parts into the document the unsharded run writes.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <memory>

#include "command.hpp"
#include "data_options.hpp"
#include "ctmc/commands/command_text.hpp"
#include "output_path.hpp"
#include "ctmc/io/same_file.hpp"
#include "ctmc/sim/atomic_write.hpp"
#include "ctmc/sim/sweep.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/number_text.hpp"

namespace ctmc::cli {
namespace {

using Json = nlohmann::ordered_json;

struct SweepOptions {
  std::string nets, neurons, taus, rates, T, samplers = "exact", readout = "spike", scale = "q99";
  std::string shard, out, trace_weight = "integral", output_scale = "logits", subset = "all", layer_alpha;
  sim::SweepSpec spec;
  int threads = 0;
  double max_memory_gib = 8;
  bool json = false, dry_run = false;
};

void write_document(const std::string& path, const Json& doc) {
  const std::string text = doc.dump(1) + "\n";
  sim::write_files_atomically({{path, std::vector<std::uint8_t>(text.begin(), text.end())}});
}

// The summary on stdout: the cheapest point under the criterion and the
// frontier's size, per sampler.
void print_summary(const Json& doc) {
  const Json& points = doc.at("points");
  const double criterion = doc.at("spec").at("criterion_pp").get<double>();
  fmt::print("{} cells ({} runs) over {} net(s); {} points (sampler, tau, r, T)\n", doc.at("cells").size(),
             doc.at("runs").size(), doc.at("spec").at("nets").size(), points.size());
  for (const auto& [sampler, best] : doc.at("min_cost").items()) {
    fmt::print("sampler {}: frontier of {} points (gap vs SynOps), {} (gap vs transitions)\n", sampler,
               doc.at("frontier").at(sampler).at("synops").size(),
               doc.at("frontier").at(sampler).at("transitions").size());
    for (const char* cost : {"synops", "transitions"}) {
      if (best.at(cost).is_null()) {
        fmt::print("  least {} under a gap of {} pp: no cell meets the criterion\n", cost, criterion);
        continue;
      }
      const Json& p = points.at(best.at(cost).get<std::size_t>());
      fmt::print("  least {} under a gap of {} pp: tau = {}, r = {}, T = {}: gap {:.2f} pp (sd {:.2f}), SynOps {:.1f}, "
                 "transitions {:.1f}, spikes/neuron {:.4f}\n",
                 cost, criterion, p.at("tau").get<double>(), p.at("rate").get<double>(), p.at("T").get<double>(),
                 p.at("gap_mean").get<double>(), p.at("gap_sd").get<double>(),
                 p.at("synops_per_sample_mean").get<double>(), p.at("transitions_per_sample_mean").get<double>(),
                 p.at("spikes_per_neuron_mean").get<double>());
    }
  }
}

void run(SweepOptions o) {
  sim::SweepSpec& s = o.spec;
  s.nets = ctmc::split_input_list(o.nets, "--net");
  s.neurons = ctmc::split_input_list(o.neurons, "--neurons");
  s.taus = commands::number_list(o.taus, "--tau");
  s.rates = commands::number_list(o.rates, "--rate");
  s.T = commands::number_list(o.T, "--T");
  s.samplers.clear();
  for (const auto& name : ctmc::split_input_list(o.samplers, "--sampler")) s.samplers.push_back(sim::parse_sampler(name));
  s.readout = sim::parse_readout(o.readout);
  s.scale = sim::parse_scale_mode(o.scale);
  s.trace_weight = sim::parse_trace_weight(o.trace_weight);
  s.output_scale = sim::parse_output_scale(o.output_scale);
  s.subset = sim::parse_test_subset(o.subset);
  if (!o.layer_alpha.empty()) s.layer_alpha = commands::layer_alpha_list(o.layer_alpha);
  const sim::Shard shard = o.shard.empty() ? sim::Shard{} : sim::parse_shard(o.shard);
  if (!(o.max_memory_gib > 0) || !(o.max_memory_gib <= 1e6))
    throw InputError(fmt::format("--max-memory: {} is not a number of GiB in (0, 1e6]", o.max_memory_gib));
  s.limits.memory_bytes = static_cast<std::uint64_t>(o.max_memory_gib * static_cast<double>(std::uint64_t(1) << 30));
  sim::validate_sweep(s);
  sim::check_sweep_limits(s);
  check_output_path(o.out, "--out");
  io::refuse_outputs_over_inputs({{"--out", o.out}}, sim::sweep_input_files(s));
  if (o.dry_run) {
    const std::size_t runs = sim::check_sweep_inputs(s, shard);
    fmt::print("sweep: {} runs (each one trial over the test images up to T = {}); inputs read and valid\n", runs,
               s.T.back());
    return;
  }

  // Progress on a terminal only: runs done, and the time left at the pace so far.
  const bool tty = ::isatty(2) == 1;
  const auto start = std::chrono::steady_clock::now();
  const auto progress = [&](std::size_t done, std::size_t total) {
    if (!tty) return;
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double left = secs / static_cast<double>(done) * static_cast<double>(total - done);
    fmt::print(stderr, "\rsweep: {}/{} runs, {:.0f} s, about {:.0f} s left   ", done, total, secs, left);
    if (done == total) fmt::print(stderr, "\n");
  };
  Json runs = sim::run_sweep(s, shard, o.threads, progress);
  if (!o.shard.empty()) {
    const Json part = sim::sweep_part(s, shard, std::move(runs));
    write_document(o.out, part);
    if (o.json)
      fmt::print("{}\n", part.dump(2));
    else
      fmt::print("shard {}/{}: {} runs written to {}; combine the parts with 'ctmc-snn sweep merge'\n", shard.index,
                 shard.count, part.at("runs").size(), o.out);
    return;
  }
  const Json doc = sim::sweep_document(sim::sweep_spec_json(s), runs);
  write_document(o.out, doc);
  if (o.json)
    fmt::print("{}\n", doc.dump(2));
  else
    print_summary(doc);
}

struct MergeOptions {
  std::vector<std::string> parts;
  std::string out;
  bool json = false;
};

void merge(const MergeOptions& o) {
  check_output_path(o.out, "--out");
  io::refuse_outputs_over_inputs({{"--out", o.out}}, o.parts);
  std::vector<std::pair<std::string, Json>> parts;
  for (const auto& path : o.parts) parts.emplace_back(path, sim::read_sweep_part(path));
  const Json doc = sim::merge_sweep_parts(std::move(parts));
  write_document(o.out, doc);
  if (o.json)
    fmt::print("{}\n", doc.dump(2));
  else
    print_summary(doc);
}

Register reg([](CLI::App& root) {
  auto o = std::make_shared<SweepOptions>();
  auto* cmd = root.add_subcommand(
      "sweep", "A grid of spiking-conversion runs (nets x samplers x tau x r x trials, T as checkpoints of one path): "
               "accuracies, gap decomposition, SynOps, transitions, Pareto frontiers; --shard i/n and 'sweep merge' "
               "split it across machines");
  cmd->add_option("--net", o->nets, "Network manifests, comma-separated: one per source net (training seed)");
  add_data_options(cmd, o->spec.data);
  cmd->add_option("--neurons", o->neurons,
                  "Neuron model JSON: one for every spiking layer, or one per spiking layer, comma-separated");
  cmd->add_option("--tau", o->taus, "Trace time constants, comma-separated");
  cmd->add_option("--rate", o->rates, "Target rates r, comma-separated (alpha_l = r / q99_l, or r with --scale const)");
  cmd->add_option("--T", o->T, "Windows T, increasing and comma-separated: read from one run of the largest");
  cmd->add_option("--sampler", o->samplers, "Samplers, comma-separated: exact, uniformization, end-state, euler")
      ->capture_default_str();
  cmd->add_option("--trials", o->spec.trials, "Stochastic trials per cell")->check(kNoMinus)->capture_default_str();
  cmd->add_option("--dt", o->spec.dt, "Time step")->capture_default_str();
  cmd->add_option("--readout", o->readout, "spike or integrate (as simulate network)")->capture_default_str();
  cmd->add_option("--scale", o->scale, "q99 or const (as simulate network)")->capture_default_str();
  cmd->add_option("--limit", o->spec.limit, "Use only the first N test images (0: all)")->capture_default_str();
  cmd->add_option("--subset", o->subset, "Test images: all, stride:K[:OFFSET] or index:FILE (as simulate network)")
      ->capture_default_str();
  cmd->add_option("--trace-weight", o->trace_weight, "integral or 1/tau (as simulate network)")->capture_default_str();
  cmd->add_option("--output-scale", o->output_scale, "logits or activation (as simulate network)")
      ->capture_default_str();
  cmd->add_option("--layer-alpha", o->layer_alpha, "alpha_l per spiking layer, or auto (as simulate network)");
  cmd->add_option("--seed", o->spec.seed, "Random seed")->check(kNoMinus)->capture_default_str();
  cmd->add_option("--threads", o->threads, "Threads (0: all cores); results do not depend on it")
      ->capture_default_str()
      ->check(kThreadCount);
  cmd->add_option("--criterion", o->spec.criterion, "Gap criterion in percentage points for the cheapest cell")
      ->capture_default_str();
  cmd->add_option("--max-runs", o->spec.limits.runs, "Refuse a grid of more runs than this")
      ->check(kNoMinus)
      ->capture_default_str();
  cmd->add_option("--max-neuron-steps", o->spec.limits.neuron_steps,
                  "Refuse a sweep (or shard) of more work than this: runs x test images x T/dt x spiking neurons")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--max-memory", o->max_memory_gib, "Refuse a sweep whose document needs more memory than this (GiB)")
      ->capture_default_str();
  cmd->add_option("--shard", o->shard, "Run part i of n (i/n) and write a part for 'sweep merge'");
  cmd->add_option("--out", o->out, "Output JSON (the sweep document, or the part with --shard)");
  cmd->add_flag("--json", o->json, "Print the document on stdout too");
  cmd->add_flag("--dry-run", o->dry_run, "Check the grid and read every input, run nothing, write nothing");

  auto m = std::make_shared<MergeOptions>();
  auto* mcmd = cmd->add_subcommand("merge", "Combine the parts of a sharded sweep into the unsharded document");
  mcmd->add_option("parts", m->parts, "Part files written by sweep --shard i/n")->required();
  mcmd->add_option("--out", m->out, "Output JSON")->required();
  mcmd->add_flag("--json", m->json, "Print the document on stdout too");
  mcmd->callback([m] { merge(*m); });

  cmd->callback([o, cmd] {
    if (cmd->got_subcommand("merge")) return;
    for (const auto& [name, value] : std::vector<std::pair<const char*, const std::string*>>{
             {"--net", &o->nets}, {"--neurons", &o->neurons}, {"--tau", &o->taus},
             {"--rate", &o->rates}, {"--T", &o->T}, {"--out", &o->out}})
      if (value->empty()) throw InputError(fmt::format("sweep: {} is required", name));
    run(*o);
  });
});

}  // namespace
}  // namespace ctmc::cli
