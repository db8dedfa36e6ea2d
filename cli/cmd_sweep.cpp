// ctmc-snn sweep --net NET.json[,NET2.json,...] --data DIR --neurons M.json[,...]
//     --tau LIST --rate LIST --T LIST [--sampler LIST] [--kernel auto|reference|vectorised] [--trials N] [--dt DT]
//     [--readout spike|integrate] [--scale q99|const] [--limit N] [--seed S]
//     [--threads N] [--criterion PP] [--shard i/n] [--max-runs N]
//     [--max-neuron-steps X] [--max-memory GIB] [--dry-run] --out FILE [--json]
// ctmc-snn sweep merge PART.json... --out FILE [--json]
//
// A grid of spiking-conversion runs (sim/studies/sweep.hpp): accuracies, the gap
// decomposition, SynOps, spikes per neuron and CTMC transitions per cell,
// Pareto frontiers and the cheapest cell under a gap criterion. With --shard
// the command runs a deterministic part of the runs and writes a part; merge
// combines the parts into the document the unsharded run writes.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <utility>

#include "command.hpp"
#include "data_options.hpp"
#include "ctmc/commands/command_text.hpp"
#include "ctmc/commands/sweep.hpp"
#include "ctmc/core/errors.hpp"

namespace ctmc::cli {
namespace {

// The summary on stdout: the cheapest point under the criterion and the
// frontier's size, per sampler.
void print_summary(const commands::SweepSummary& s) {
  fmt::print("{} cells ({} runs) over {} net(s); {} points (sampler, tau, r, T)\n", s.cells, s.runs, s.nets, s.points);
  for (const auto& ss : s.samplers) {
    fmt::print("sampler {}: frontier of {} points (gap vs SynOps), {} (gap vs transitions)\n", ss.sampler,
               ss.frontier_synops, ss.frontier_transitions);
    for (const auto& [cost, least] : {std::pair{"synops", &ss.least_synops}, {"transitions", &ss.least_transitions}}) {
      if (!*least) {
        fmt::print("  least {} under a gap of {} pp: no cell meets the criterion\n", cost, s.criterion_pp);
        continue;
      }
      const commands::SweepPointSummary& p = **least;
      fmt::print("  least {} under a gap of {} pp: tau = {}, r = {}, T = {}: gap {:.2f} pp (sd {:.2f}), SynOps {:.1f}, "
                 "transitions {:.1f}, spikes/neuron {:.4f}\n",
                 cost, s.criterion_pp, p.tau, p.rate, p.T, p.gap_mean, p.gap_sd, p.synops_mean, p.transitions_mean,
                 p.spikes_per_neuron_mean);
    }
  }
}

void print_result(const commands::SweepCommandResult& r, bool json) {
  using Kind = commands::SweepCommandResult::Kind;
  if (r.kind == Kind::DryRun) {
    fmt::print("sweep: {} runs (each one trial over the test images up to T = {}); inputs read and valid\n", r.runs,
               r.T_max);
    return;
  }
  if (json) {
    fmt::print("{}\n", commands::to_json(r).dump(2));
    return;
  }
  if (r.kind == Kind::Part)
    fmt::print("shard {}/{}: {} runs written to {}; combine the parts with 'ctmc-snn sweep merge'\n", r.shard.index,
               r.shard.count, r.runs, r.out);
  else
    print_summary(r.summary);
}

void run(const commands::SweepCommandOptions& o, bool json) {
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
  print_result(commands::run_sweep_command(o, progress), json);
}

// The option texts of `sweep`, parsed once into the typed options
// (typed_options) by the parsers the Python module shares: lists by
// command_text.hpp, samplers and conventions by sim's parse_*.
struct SweepTexts {
  std::string nets, neurons, taus, rates, T, samplers = "exact", readout = "spike", scale = "q99";
  std::string trace_weight = "integral", output_scale = "logits", subset = "all", kernel = "auto", layer_alpha, shard;
};

// InputError naming the option for a text that is not one.
void typed_options(const SweepTexts& t, commands::SweepCommandOptions& o) {
  sim::SweepSpec& s = o.spec;
  s.nets = ctmc::split_input_list(t.nets, "--net");
  s.neurons = ctmc::split_input_list(t.neurons, "--neurons");
  s.taus = commands::number_list(t.taus, "--tau");
  s.rates = commands::number_list(t.rates, "--rate");
  s.T = commands::number_list(t.T, "--T");
  s.samplers.clear();
  for (const auto& name : ctmc::split_input_list(t.samplers, "--sampler")) s.samplers.push_back(sim::parse_sampler(name));
  s.readout = sim::parse_readout(t.readout);
  s.scale = sim::parse_scale_mode(t.scale);
  s.trace_weight = sim::parse_trace_weight(t.trace_weight);
  s.kernel = sim::parse_kernel(t.kernel, "kernel");
  s.output_scale = sim::parse_output_scale(t.output_scale);
  s.subset = sim::parse_test_subset(t.subset);
  if (!t.layer_alpha.empty()) s.layer_alpha = commands::layer_alpha_list(t.layer_alpha);
  if (!t.shard.empty()) o.shard = sim::parse_shard(t.shard);
}

struct MergeOptions {
  std::vector<std::string> parts;
  std::string out;
  bool json = false;
};

Register reg([](CLI::App& root) {
  auto o = std::make_shared<commands::SweepCommandOptions>();
  auto t = std::make_shared<SweepTexts>();
  auto json = std::make_shared<bool>(false);
  auto* cmd = root.add_subcommand(
      "sweep", "A grid of spiking-conversion runs (nets x samplers x tau x r x trials, T as checkpoints of one path): "
               "accuracies, gap decomposition, SynOps, transitions, Pareto frontiers; --shard i/n and 'sweep merge' "
               "split it across machines");
  cmd->add_option("--net", t->nets, "Network manifests, comma-separated: one per source net (training seed)");
  add_data_options(cmd, o->spec.data);
  cmd->add_option("--neurons", t->neurons,
                  "Neuron model JSON: one for every spiking layer, or one per spiking layer, comma-separated");
  cmd->add_option("--tau", t->taus, "Trace time constants, comma-separated");
  cmd->add_option("--rate", t->rates, "Target rates r, comma-separated (alpha_l = r / q99_l, or r with --scale const)");
  cmd->add_option("--T", t->T, "Windows T, increasing and comma-separated: read from one run of the largest");
  cmd->add_option("--sampler", t->samplers, "Samplers, comma-separated: exact, uniformization, end-state, euler")
      ->capture_default_str();
  cmd->add_option("--trials", o->spec.trials, "Stochastic trials per cell")->check(kNoMinus)->capture_default_str();
  cmd->add_option("--dt", o->spec.dt, "Time step")->capture_default_str();
  cmd->add_option("--readout", t->readout, "spike or integrate (as simulate network)")->capture_default_str();
  cmd->add_option("--scale", t->scale, "q99 or const (as simulate network)")->capture_default_str();
  cmd->add_option("--limit", o->spec.limit, "Use only the first N test images (0: all)")->capture_default_str();
  cmd->add_option("--subset", t->subset, "Test images: all, stride:K[:OFFSET] or index:FILE (as simulate network)")
      ->capture_default_str();
  cmd->add_option("--trace-weight", t->trace_weight, "integral or 1/tau (as simulate network)")->capture_default_str();
  cmd->add_option("--kernel", t->kernel,
                  "auto, reference, vectorised or fast (as simulate network; recorded in the document's spec)")
      ->capture_default_str();
  cmd->add_option("--output-scale", t->output_scale, "logits or activation (as simulate network)")
      ->capture_default_str();
  cmd->add_option("--layer-alpha", t->layer_alpha, "alpha_l per spiking layer, or auto (as simulate network)");
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
      ->check(kPositive)
      ->capture_default_str();
  cmd->add_option("--max-memory", o->max_memory_gib, "Refuse a sweep whose document needs more memory than this (GiB)")
      ->capture_default_str();
  cmd->add_option("--shard", t->shard, "Run part i of n (i/n) and write a part for 'sweep merge'");
  cmd->add_option("--out", o->out, "Output JSON (the sweep document, or the part with --shard)");
  cmd->add_flag("--json", *json, "Print the document on stdout too");
  cmd->add_flag("--dry-run", o->dry_run, "Check the grid and read every input, run nothing, write nothing");

  auto m = std::make_shared<MergeOptions>();
  auto* mcmd = cmd->add_subcommand("merge", "Combine the parts of a sharded sweep into the unsharded document");
  mcmd->add_option("parts", m->parts, "Part files written by sweep --shard i/n")->required();
  mcmd->add_option("--out", m->out, "Output JSON")->required();
  mcmd->add_flag("--json", m->json, "Print the document on stdout too");
  mcmd->callback([m] { print_result(commands::run_sweep_merge(m->parts, m->out), m->json); });

  cmd->callback([o, t, json, cmd] {
    if (cmd->got_subcommand("merge")) return;
    for (const auto& [name, value] : std::vector<std::pair<const char*, const std::string*>>{
             {"--net", &t->nets}, {"--neurons", &t->neurons}, {"--tau", &t->taus},
             {"--rate", &t->rates}, {"--T", &t->T}, {"--out", &o->out}})
      if (value->empty()) throw InputError(fmt::format("sweep: {} is required", name));
    typed_options(*t, *o);
    run(*o, *json);
  });
});

}  // namespace
}  // namespace ctmc::cli
