// ctmc-snn simulate network --net NET.json --data DIR --neurons M.json[,M2.json,...]
//     [--T 50] [--tau 0.02] [--rate 3] [--dt 0.005] [--trials 1] [--seed 0]
//     [--threads 0] [--sampler exact|uniformization|end-state|euler]
//     [--kernel auto|reference|vectorised|fast] [--conv-path auto|event|dense]
//     [--readout spike|integrate] [--scale q99|const] [--limit N]
//     [--if p99.9|p100 [--v0 0|0.5] [--if-steps N]] [--json]
//
// Converts the network (dense, or a layer graph with convolutions and
// average pooling: spiking.hpp) to CTMC neurons (DESIGN.md section 7) and prints
// A_ANN, A_MF, A_SNN (mean and sd over trials), the decomposition
// A_ANN - A_SNN = (A_ANN - A_MF) + (A_MF - A_SNN) (paper eq. decomp), SynOps
// per sample (eq. synops) and spikes per neuron per sample; with --if, the
// integrate-and-fire baseline on the same network (if_baseline.hpp).
#include <fmt/format.h>

#include <cmath>
#include <cstdint>

#include "command.hpp"
#include "data_options.hpp"
#include "ctmc/commands/command_text.hpp"
#include "ctmc/commands/simulate_network.hpp"
#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/sim/neurons/sampler.hpp"
#include "ctmc/sim/formats/tensor_inputs.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/number_text.hpp"

namespace ctmc::cli {
namespace {

struct SimNetOptions {
  std::string net, neurons;
  sim::DataSource data;
  commands::NetworkCommandOptions cmd;
  commands::NetworkOptionTexts texts;  // parsed into cmd before the run
  bool json = false;
};

constexpr double kPercent = 100.0;

// On stderr in both output modes: the flux there is the chain's
// extrapolation, not a fit of the activation.
void warn_outside_fit_domain(const sim::NetworkSimResult& r) {
  for (std::size_t l = 0; l < r.alpha.size(); ++l)
    if (!std::isnan(r.fit_domain[l].first) && r.outside_fit_domain[l] > 0)
      fmt::print(stderr,
                 "warning: layer {}: {:.3g}% of the mean-field inputs H lie outside the neuron model's fit domain "
                 "[{}, {}] (meta.domain); its flux there is extrapolated, not fitted\n",
                 l + 1, kPercent * r.outside_fit_domain[l], r.fit_domain[l].first, r.fit_domain[l].second);
}

void print_layers(const commands::NetworkCommandResult& res) {
  const auto& r = res.sim;
  for (std::size_t l = 0; l < r.alpha.size(); ++l) {
    fmt::print("  layer {}: {} (alpha_fit {:.6g}), q99 = {:.6g}, alpha = {:.6g}", l + 1, res.neurons[l],
               r.alpha_fit[l], r.q99[l], r.alpha[l]);
    if (!std::isnan(r.fit_domain[l].first))
      fmt::print(", fit domain [{}, {}] ({:.3g}% of mean-field inputs outside)", r.fit_domain[l].first,
                 r.fit_domain[l].second, kPercent * r.outside_fit_domain[l]);
    fmt::print("\n");
  }
}

void print_if_baseline(const commands::NetworkCommandOptions& o, const sim::IfResult& ifr) {
  fmt::print("IF baseline ({} normalisation, v0 = {}, T = {} steps, reset by subtraction): A_IF = {:.2f}%, "
             "A_ANN - A_IF = {:.2f} pp, SynOps per sample = {:.1f} (sd {:.1f}), spikes per neuron = {:.4f}\n",
             commands::if_norm_name(*o.if_norm), o.v0, o.if_steps, kPercent * ifr.acc_if,
             kPercent * (ifr.acc_ann - ifr.acc_if),
             ifr.synops_mean, ifr.synops_sd, ifr.spikes_per_neuron);
}

void print_text(const SimNetOptions& c, const commands::NetworkCommandResult& res) {
  const auto& o = c.cmd;
  const auto& opt = res.run;
  const auto& r = res.sim;
  fmt::print("network {} on {} test images of {}; T = {}, dt = {} ({} steps), tau = {}, r = {}, scale {}\n", c.net,
             r.samples, res.data, opt.snn.T, opt.snn.dt, r.steps, opt.snn.tau, opt.rate,
             sim::scale_name(opt.scale));
  fmt::print("sampler {}: {}\nreadout {}; {} trial(s), seed {}\n", sim::sampler_name(opt.snn.sampler),
             sim::sampler_rule(opt.snn.sampler), sim::readout_name(opt.snn.readout), opt.trials, opt.seed);
  fmt::print("spiking kernel {}, conv path {}\n", sim::kernel_name(r.kernel),
             sim::conv_path_name(opt.snn.conv_path));
  const sim::NetworkSimOptions d;
  if (opt.snn.trace_weight != d.snn.trace_weight || opt.output_scale != d.output_scale ||
      opt.subset.text != d.subset.text || !opt.layer_alpha.empty())
    fmt::print("conventions: trace weight {}, output scale {}, test subset {}{}\n",
               sim::trace_weight_name(opt.snn.trace_weight), sim::output_scale_name(opt.output_scale),
               opt.subset.text,
               opt.layer_alpha.empty() ? "" : ", layer alpha " + commands::layer_alpha_text(opt.layer_alpha));
  print_layers(res);
  const double ann = kPercent * r.acc_ann, mf = kPercent * r.acc_mf, snn = kPercent * r.acc_snn_mean;
  if (opt.trials > 1)
    fmt::print("A_ANN = {:.2f}%\nA_MF  = {:.2f}%\nA_SNN = {:.2f}% (sd {:.2f} over {} trials)\n", ann, mf, snn,
               kPercent * r.acc_snn_sd, opt.trials);
  else
    fmt::print("A_ANN = {:.2f}%\nA_MF  = {:.2f}%\nA_SNN = {:.2f}% (1 trial: no sd)\n", ann, mf, snn);
  fmt::print("A_ANN - A_SNN = {:.2f} pp = (A_ANN - A_MF) {:.2f} pp + (A_MF - A_SNN) {:.2f} pp\n",
             kPercent * (r.acc_ann - r.acc_snn_mean), kPercent * (r.acc_ann - r.acc_mf),
             kPercent * (r.acc_mf - r.acc_snn_mean));
  fmt::print("SynOps per sample = {:.1f} (sd {:.1f} over samples); spikes per neuron per sample = {:.4f} (over the {} "
             "CTMC neurons of the spiking layers: the output layer too with --readout spike); CTMC transitions per "
             "sample = {:.1f}\n",
             r.synops_mean, r.synops_sd, r.spikes_per_neuron, r.spiking_neurons, r.transitions_per_sample);
  if (res.if_baseline) print_if_baseline(o, *res.if_baseline);
  if (opt.snn.sampler == sim::SamplerKind::Euler)
    fmt::print("euler: {} neuron-steps had rate*dt summing above 1 and were renormalized{}\n", r.euler_renormalized,
               r.euler_renormalized ? " (FLAGGED: dt too large for these rates)" : "");
}

void run(const SimNetOptions& c) {
  commands::NetworkInputs in;
  in.neurons = [&] {
    std::vector<sim::NeuronModel> neurons;
    for (const auto& path : ctmc::split_input_list(c.neurons, "--neurons"))
      neurons.push_back({solvers::read_model_file(path), path});
    return neurons;
  };
  in.net = [&] { return sim::load_network(c.net); };
  in.graph = [&] { return sim::load_net(c.net); };
  in.data = [&] { return sim::load_data(c.data); };
  in.net_name = c.net;
  in.data_name = sim::data_source_text(c.data);
  const auto res = commands::run_simulate_network(c.cmd, in);
  warn_outside_fit_domain(res.sim);
  if (c.json)
    fmt::print("{}\n", commands::to_json(res).dump(2));
  else
    print_text(c, res);
}

Register reg([](CLI::App& root) {
  auto* group = subcommand_group(root, "simulate", "Simulate CTMC neurons and networks");
  auto o = std::make_shared<SimNetOptions>();
  auto* cmd = group->add_subcommand(
      "network", "ANN vs mean-field vs spiking CTMC network: accuracies, gap decomposition, SynOps, spikes per neuron");
  cmd->add_option("--net", o->net, "Network manifest JSON (safetensors weights beside it)")->required();
  add_data_options(cmd, o->data);
  cmd->add_option("--neurons", o->neurons,
                  "Neuron model JSON: one file for every spiking layer, or one per spiking layer, comma-separated "
                  "(hidden layers, then the output layer when --readout spike); meta.alpha_fit is honoured")
      ->required();
  cmd->add_option("--T", o->cmd.opt.snn.T, "Inference window T (a multiple of --dt)")->capture_default_str();
  cmd->add_option("--tau", o->cmd.opt.snn.tau, "Synaptic trace time constant tau")->capture_default_str();
  cmd->add_option("--rate", o->cmd.opt.rate, "Target rate r: alpha_l = r / q99_l (or r with --scale const)")
      ->capture_default_str();
  cmd->add_option("--dt", o->cmd.opt.snn.dt, "Time step (H held for each step)")->capture_default_str();
  cmd->add_option("--trials", o->cmd.opt.trials, "Stochastic trials")->check(kNoMinus)->capture_default_str();
  cmd->add_option("--seed", o->cmd.opt.seed, "Random seed")->check(kNoMinus)->capture_default_str();
  cmd->add_option("--threads", o->cmd.opt.threads, "Threads (0: all cores, or OMP_NUM_THREADS if set); results do not depend on it")
      ->capture_default_str()
      ->check(kThreadCount);
  cmd->add_option("--sampler", o->texts.sampler,
                  "exact (every spike on the path), uniformization (same law), end-state or euler (reproduce other "
                  "codes; biased)")
      ->capture_default_str();
  cmd->add_option("--kernel", o->texts.kernel,
                  "auto (vectorised for the exact and end-state samplers, reference for the others), vectorised (one "
                  "Philox stream per neuron, SIMD passes), fast (float32 lanes, opt-in) or reference (one stream per "
                  "sample): the same law, other random numbers")
      ->capture_default_str();
  cmd->add_option("--conv-path", o->texts.conv_path,
                  "How spikes reach a convolution: auto (dense from 60% of its inputs spiking in a step), event or "
                  "dense; the same sums bit for bit, only the speed differs")
      ->capture_default_str();
  cmd->add_option("--readout", o->texts.readout, "spike (argmax of output spike counts) or integrate (argmax of mean H^L)")
      ->capture_default_str();
  cmd->add_option("--scale", o->texts.scale, "Layer scales: q99 (alpha_l = r / q99_l) or const (alpha_l = r)")
      ->capture_default_str();
  cmd->add_option("--limit", o->cmd.opt.limit, "Use only the first N test images (0: all)")->capture_default_str();
  cmd->add_option("--subset", o->texts.subset,
                  "Test images: all, stride:K[:OFFSET] (every K-th from OFFSET) or index:FILE (whole numbers, each "
                  "image at most once); --limit then takes the first N of them")
      ->capture_default_str();
  cmd->add_option("--trace-weight", o->texts.trace_weight,
                  "Trace increment per spike: integral ((1 - e^(-dt/tau))/dt, the kernel integrates to one) or 1/tau "
                  "(other codes; inputs then (dt/tau)/(1 - e^(-dt/tau)) times larger)")
      ->capture_default_str();
  cmd->add_option("--output-scale", o->texts.output_scale,
                  "q99 of a spiking output layer: logits (z^L) or activation (phi(z^L), phi = the output neuron "
                  "model's meta.target)")
      ->capture_default_str();
  cmd->add_option("--layer-alpha", o->texts.layer_alpha,
                  "alpha_l per spiking layer, comma-separated, overriding --scale/--rate where given (auto: keep the "
                  "rule)");
  auto* if_opt = cmd->add_option("--if", o->texts.if_norm,
                                 "Also run the IF baseline with this activation-percentile normalisation: p99.9 or "
                                 "p100 (relu or cliprelu hidden layers)");
  // Only meaningful with --if: given alone they would be ignored without a word.
  cmd->add_option("--v0", o->cmd.v0,
                  "IF baseline: initial membrane potential as a fraction of the threshold, in [0, 1) (0 and 0.5 are "
                  "the usual choices)")
      ->capture_default_str()
      ->needs(if_opt);
  cmd->add_option("--if-steps", o->cmd.if_steps, "IF baseline: number of time steps")->capture_default_str()->needs(if_opt);
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o] {
    commands::set_network_options(o->cmd, o->texts);
    run(*o);
  });
});

}  // namespace
}  // namespace ctmc::cli
