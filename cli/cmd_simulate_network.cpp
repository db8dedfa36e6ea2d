// ctmc-snn simulate network --net NET.json --data DIR --neurons M.json[,M2.json,...]
//     [--T 50] [--tau 0.02] [--rate 3] [--dt 0.005] [--trials 1] [--seed 0]
//     [--threads 0] [--sampler exact|uniformization|end-state|euler]
//     [--readout spike|integrate] [--scale q99|const] [--limit N]
//     [--if p99.9|p100 [--v0 0|0.5] [--if-steps N]] [--json]
//
// Converts the network to CTMC neurons (DESIGN.md section 7) and prints
// A_ANN, A_MF, A_SNN (mean and sd over trials), the decomposition
// A_ANN - A_SNN = (A_ANN - A_MF) + (A_MF - A_SNN) (paper eq. decomp), SynOps
// per sample (eq. synops) and spikes per neuron per sample; with --if, the
// integrate-and-fire baseline on the same network (if_baseline.hpp).
#include <fmt/format.h>

#include <cmath>

#include <nlohmann/json.hpp>
#include <optional>

#include "command.hpp"
#include "data_options.hpp"
#include "number_list.hpp"
#include "ctmc/sim/dataset.hpp"
#include "ctmc/sim/if_baseline.hpp"
#include "ctmc/sim/manifest.hpp"
#include "ctmc/sim/network_sim.hpp"
#include "ctmc/solvers/errors.hpp"
#include "ctmc/solvers/model.hpp"

namespace ctmc::cli {
namespace {

struct SimNetOptions {
  std::string net, neurons;
  sim::DataSource data;
  std::string sampler = "exact", readout = "spike", scale = "q99";
  std::string trace_weight = "integral", output_scale = "logits", subset = "all", layer_alpha;
  sim::NetworkSimOptions opt;
  std::string if_norm;  // empty: no IF baseline
  double v0 = 0;
  int if_steps = 32;
  bool json = false;
};

void run(SimNetOptions o) {
  o.opt.snn.sampler = sim::parse_sampler(o.sampler);
  o.opt.snn.readout = sim::parse_readout(o.readout);
  o.opt.scale = sim::parse_scale_mode(o.scale);
  o.opt.snn.trace_weight = sim::parse_trace_weight(o.trace_weight);
  o.opt.output_scale = sim::parse_output_scale(o.output_scale);
  o.opt.subset = sim::parse_test_subset(o.subset);
  if (!o.layer_alpha.empty()) o.opt.layer_alpha = layer_alpha_list(o.layer_alpha);
  std::vector<sim::NeuronModel> neurons;
  for (const auto& path : solvers::split_input_list(o.neurons, "--neurons")) neurons.push_back({solvers::read_model_file(path), path});
  if (neurons.empty()) throw InputError("--neurons: no model file given");
  const sim::Mlp net = sim::load_network(o.net);
  const sim::DatasetSplit data = sim::load_data(o.data);
  // The IF baseline first: it is the cheaper of the two, so its bad input
  // (e.g. --if-steps beyond the work budget) is not found after the CTMC run.
  std::optional<sim::IfResult> ifr;
  if (!o.if_norm.empty()) {
    sim::IfOptions io;
    io.percentile = sim::parse_if_norm(o.if_norm);
    io.v0 = o.v0;
    io.steps = o.if_steps;
    io.readout = o.opt.snn.readout;
    io.threads = o.opt.threads;
    io.limit = o.opt.limit;
    io.subset = o.opt.subset;
    ifr = sim::simulate_if(net, data.train, data.test, io);
  }
  const sim::NetworkSimResult r = sim::simulate_network(net, data.train, data.test, neurons, o.opt);

  const double pp = 100.0;
  nlohmann::ordered_json j;
  j["net"] = o.net;
  j["data"] = sim::data_source_text(o.data);
  j["test_images"] = r.samples;
  j["T"] = o.opt.snn.T;
  j["dt"] = o.opt.snn.dt;
  j["steps"] = r.steps;
  j["tau"] = o.opt.snn.tau;
  j["rate"] = o.opt.rate;
  j["scale"] = o.scale;
  j["sampler"] = o.sampler;
  j["sampler_rule"] = sim::sampler_rule(o.opt.snn.sampler);
  j["readout"] = o.readout;
  j["trace_weight"] = o.trace_weight;
  j["output_scale"] = o.output_scale;
  j["subset"] = o.subset;
  j["trials"] = o.opt.trials;
  j["seed"] = o.opt.seed;
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (std::size_t l = 0; l < r.alpha.size(); ++l) {
    layers.push_back({{"layer", l + 1},
                      {"neuron", neurons.size() == 1 ? neurons[0].source : neurons[l].source},
                      {"alpha_fit", r.alpha_fit[l]},
                      {"q99", r.q99[l]},
                      {"alpha", r.alpha[l]}});
    const auto [lo, hi] = r.fit_domain[l];
    if (std::isnan(lo)) continue;
    layers.back()["fit_domain"] = {lo, hi};
    layers.back()["mean_field_inputs_outside_fit_domain"] = r.outside_fit_domain[l];
    // On stderr in both output modes: the flux there is the chain's
    // extrapolation, not a fit of the activation.
    if (r.outside_fit_domain[l] > 0)
      fmt::print(stderr,
                 "warning: layer {}: {:.3g}% of the mean-field inputs H lie outside the neuron model's fit domain "
                 "[{}, {}] (meta.domain); its flux there is extrapolated, not fitted\n",
                 l + 1, pp * r.outside_fit_domain[l], lo, hi);
  }
  j["layers"] = layers;
  // train/evaluate --json give fractions; here the unit is said explicitly.
  j["units"] = "accuracies in percent, gaps in percentage points";
  j["A_ANN"] = pp * r.acc_ann;
  j["A_MF"] = pp * r.acc_mf;
  j["A_SNN_mean"] = pp * r.acc_snn_mean;
  j["A_SNN_sd"] = pp * r.acc_snn_sd;
  nlohmann::ordered_json per_trial = nlohmann::ordered_json::array();
  for (double a : r.acc_snn) per_trial.push_back(pp * a);
  j["A_SNN_trials"] = per_trial;
  j["gap"] = pp * (r.acc_ann - r.acc_snn_mean);
  j["mean_field_mismatch"] = pp * (r.acc_ann - r.acc_mf);
  j["sampling_gap"] = pp * (r.acc_mf - r.acc_snn_mean);
  j["synops_per_sample_mean"] = r.synops_mean;
  j["synops_per_sample_sd"] = r.synops_sd;
  j["spikes_per_neuron"] = r.spikes_per_neuron;
  j["spiking_neurons"] = r.spiking_neurons;
  j["transitions_per_sample"] = r.transitions_per_sample;
  if (o.opt.snn.sampler == sim::SamplerKind::Euler) j["euler_renormalized_steps"] = r.euler_renormalized;
  if (ifr) {
    nlohmann::ordered_json lam = nlohmann::ordered_json::array();
    for (double v : ifr->lambda) lam.push_back(v);
    j["if_baseline"] = {{"normalisation", o.if_norm}, {"v0", o.v0},        {"steps", o.if_steps},
                        {"lambda", lam},              {"A_IF", pp * ifr->acc_if}, {"gap", pp * (ifr->acc_ann - ifr->acc_if)},
                        {"synops_per_sample_mean", ifr->synops_mean}, {"synops_per_sample_sd", ifr->synops_sd},
                        {"spikes_per_neuron", ifr->spikes_per_neuron}};
  }
  if (o.json) {
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("network {} on {} test images of {}; T = {}, dt = {} ({} steps), tau = {}, r = {}, scale {}\n", o.net,
             r.samples, sim::data_source_text(o.data), o.opt.snn.T, o.opt.snn.dt, r.steps, o.opt.snn.tau, o.opt.rate, o.scale);
  fmt::print("sampler {}: {}\nreadout {}; {} trial(s), seed {}\n", o.sampler, sim::sampler_rule(o.opt.snn.sampler),
             o.readout, o.opt.trials, o.opt.seed);
  if (o.trace_weight != "integral" || o.output_scale != "logits" || o.subset != "all" || !o.layer_alpha.empty())
    fmt::print("conventions: trace weight {}, output scale {}, test subset {}{}\n", o.trace_weight, o.output_scale,
               o.subset, o.layer_alpha.empty() ? "" : ", layer alpha " + o.layer_alpha);
  for (const auto& l : layers) {
    fmt::print("  layer {}: {} (alpha_fit {:.6g}), q99 = {:.6g}, alpha = {:.6g}", l["layer"].get<int>(),
               l["neuron"].get<std::string>(), l["alpha_fit"].get<double>(), l["q99"].get<double>(),
               l["alpha"].get<double>());
    if (l.contains("fit_domain"))
      fmt::print(", fit domain [{}, {}] ({:.3g}% of mean-field inputs outside)", l["fit_domain"][0].get<double>(),
                 l["fit_domain"][1].get<double>(), pp * l["mean_field_inputs_outside_fit_domain"].get<double>());
    fmt::print("\n");
  }
  if (o.opt.trials > 1)
    fmt::print("A_ANN = {:.2f}%\nA_MF  = {:.2f}%\nA_SNN = {:.2f}% (sd {:.2f} over {} trials)\n", pp * r.acc_ann,
               pp * r.acc_mf, pp * r.acc_snn_mean, pp * r.acc_snn_sd, o.opt.trials);
  else
    fmt::print("A_ANN = {:.2f}%\nA_MF  = {:.2f}%\nA_SNN = {:.2f}% (1 trial: no sd)\n", pp * r.acc_ann, pp * r.acc_mf,
               pp * r.acc_snn_mean);
  fmt::print("A_ANN - A_SNN = {:.2f} pp = (A_ANN - A_MF) {:.2f} pp + (A_MF - A_SNN) {:.2f} pp\n",
             pp * (r.acc_ann - r.acc_snn_mean), pp * (r.acc_ann - r.acc_mf), pp * (r.acc_mf - r.acc_snn_mean));
  fmt::print("SynOps per sample = {:.1f} (sd {:.1f} over samples); spikes per neuron per sample = {:.4f} (over the {} "
             "CTMC neurons of the spiking layers: the output layer too with --readout spike); CTMC transitions per "
             "sample = {:.1f}\n",
             r.synops_mean, r.synops_sd, r.spikes_per_neuron, r.spiking_neurons, r.transitions_per_sample);
  if (ifr)
    fmt::print("IF baseline ({} normalisation, v0 = {}, T = {} steps, reset by subtraction): A_IF = {:.2f}%, "
               "A_ANN - A_IF = {:.2f} pp, SynOps per sample = {:.1f} (sd {:.1f}), spikes per neuron = {:.4f}\n",
               o.if_norm, o.v0, o.if_steps, pp * ifr->acc_if, pp * (ifr->acc_ann - ifr->acc_if), ifr->synops_mean,
               ifr->synops_sd, ifr->spikes_per_neuron);
  if (o.opt.snn.sampler == sim::SamplerKind::Euler)
    fmt::print("euler: {} neuron-steps had rate*dt summing above 1 and were renormalized{}\n", r.euler_renormalized,
               r.euler_renormalized ? " (FLAGGED: dt too large for these rates)" : "");
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
  cmd->add_option("--T", o->opt.snn.T, "Inference window T (a multiple of --dt)")->capture_default_str();
  cmd->add_option("--tau", o->opt.snn.tau, "Synaptic trace time constant tau")->capture_default_str();
  cmd->add_option("--rate", o->opt.rate, "Target rate r: alpha_l = r / q99_l (or r with --scale const)")
      ->capture_default_str();
  cmd->add_option("--dt", o->opt.snn.dt, "Time step (H held for each step)")->capture_default_str();
  cmd->add_option("--trials", o->opt.trials, "Stochastic trials")->check(kNoMinus)->capture_default_str();
  cmd->add_option("--seed", o->opt.seed, "Random seed")->check(kNoMinus)->capture_default_str();
  cmd->add_option("--threads", o->opt.threads, "Threads (0: all cores, or OMP_NUM_THREADS if set); results do not depend on it")
      ->capture_default_str()
      ->check(CLI::Range(0, kMaxThreads));
  cmd->add_option("--sampler", o->sampler,
                  "exact (every spike on the path), uniformization (same law), end-state or euler (reproduce other "
                  "codes; biased)")
      ->capture_default_str();
  cmd->add_option("--readout", o->readout, "spike (argmax of output spike counts) or integrate (argmax of mean H^L)")
      ->capture_default_str();
  cmd->add_option("--scale", o->scale, "Layer scales: q99 (alpha_l = r / q99_l) or const (alpha_l = r)")
      ->capture_default_str();
  cmd->add_option("--limit", o->opt.limit, "Use only the first N test images (0: all)")->capture_default_str();
  cmd->add_option("--subset", o->subset,
                  "Test images: all, stride:K[:OFFSET] (every K-th from OFFSET) or index:FILE (whole numbers, each "
                  "image at most once); --limit then takes the first N of them")
      ->capture_default_str();
  cmd->add_option("--trace-weight", o->trace_weight,
                  "Trace increment per spike: integral ((1 - e^(-dt/tau))/dt, the kernel integrates to one) or 1/tau "
                  "(other codes; inputs then (dt/tau)/(1 - e^(-dt/tau)) times larger)")
      ->capture_default_str();
  cmd->add_option("--output-scale", o->output_scale,
                  "q99 of a spiking output layer: logits (z^L) or activation (phi(z^L), phi = the output neuron "
                  "model's meta.target)")
      ->capture_default_str();
  cmd->add_option("--layer-alpha", o->layer_alpha,
                  "alpha_l per spiking layer, comma-separated, overriding --scale/--rate where given (auto: keep the "
                  "rule)");
  auto* if_opt = cmd->add_option("--if", o->if_norm,
                                 "Also run the IF baseline with this activation-percentile normalisation: p99.9 or "
                                 "p100 (relu or cliprelu hidden layers)");
  // Only meaningful with --if: given alone they would be ignored without a word.
  cmd->add_option("--v0", o->v0,
                  "IF baseline: initial membrane potential as a fraction of the threshold, in [0, 1) (0 and 0.5 are "
                  "the usual choices)")
      ->capture_default_str()
      ->needs(if_opt);
  cmd->add_option("--if-steps", o->if_steps, "IF baseline: number of time steps")->capture_default_str()->needs(if_opt);
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o] { run(*o); });
});

}  // namespace
}  // namespace ctmc::cli
