// The documents of simulate neuron and simulate network.
#include <cmath>

#include "ctmc/commands/simulate_network.hpp"
#include "ctmc/commands/simulate_neuron.hpp"
#include "ctmc/sim/neurons/sampler.hpp"

namespace ctmc::commands {
namespace {

void put_statistics(DocumentWriter& w, const NeuronSimResult& r) {
  {
    const auto& e = r.empirical;
    const Object empirical(w, "empirical");
    put(w, "mean_count", e.mean_count);
    put(w, "rate", e.rate);
    put(w, "se_rate", e.se_rate);
    put(w, "variance_count", e.variance_count);
    put(w, "se_variance_count", e.se_variance_count);
    put(w, "variance_per_time", e.variance_per_time);
    put(w, "fano", e.fano);
  }
  {
    const auto& x = r.exact;
    const Object exact(w, "exact");
    put(w, "stationary_flux", x.stationary_flux);
    put(w, "mean_count", x.mean_count);
    put(w, "rate", x.rate);
    put(w, "variance_count", x.variance_count);
    put(w, "asymptotic_variance_rate", x.asymptotic_variance_rate);
    put(w, "asymptotic_fano", x.asymptotic_fano);
  }
  const auto& a = r.agreement;
  const Object agreement(w, "agreement");
  put(w, "z_mean", a.z_mean);
  put(w, "z_variance", a.z_variance);
  put(w, "variance_tested", a.variance_tested);
  put(w, "threshold", a.threshold);
  put(w, "checked", a.checked);
  put(w, "ok", a.ok);
}

}  // namespace

void write(DocumentWriter& w, const NeuronSimResult& r) {
  const Object doc(w, "");
  put(w, "model", r.model);
  put(w, "H", r.H);
  put(w, "T", r.T);
  put(w, "alpha", r.alpha);
  put(w, "trials", r.trials);
  put(w, "seed", r.seed);
  put(w, "start", r.start);
  put(w, "transitions", r.transitions);
  put_statistics(w, r);
  const Object occupancy(w, "occupancy");
  for (const auto& o : r.occupancy) {
    const Object state(w, o.state);
    put(w, "empirical", o.empirical);
    put(w, "stationary", o.stationary);
  }
}

namespace {

constexpr double kPercent = 100.0;

void put_layers(DocumentWriter& w, const NetworkCommandResult& res) {
  const auto& r = res.sim;
  const Array layers(w, "layers");
  for (std::size_t l = 0; l < r.alpha.size(); ++l) {
    const Object layer(w, "");
    put(w, "layer", l + 1);
    put(w, "neuron", res.neurons[l]);
    put(w, "alpha_fit", r.alpha_fit[l]);
    put(w, "q99", r.q99[l]);
    put(w, "alpha", r.alpha[l]);
    const auto [lo, hi] = r.fit_domain[l];
    if (std::isnan(lo)) continue;
    put(w, "fit_domain", std::vector<double>{lo, hi});
    put(w, "mean_field_inputs_outside_fit_domain", r.outside_fit_domain[l]);
  }
}

void put_accuracies(DocumentWriter& w, const sim::NetworkSimResult& r) {
  // train/evaluate --json give fractions; here the unit is said explicitly.
  put(w, "units", "accuracies in percent, gaps in percentage points");
  put(w, "A_ANN", kPercent * r.acc_ann);
  put(w, "A_MF", kPercent * r.acc_mf);
  put(w, "A_SNN_mean", kPercent * r.acc_snn_mean);
  put(w, "A_SNN_sd", kPercent * r.acc_snn_sd);
  {
    const Array trials(w, "A_SNN_trials");
    for (double a : r.acc_snn) put(w, "", kPercent * a);
  }
  put(w, "gap", kPercent * (r.acc_ann - r.acc_snn_mean));
  put(w, "mean_field_mismatch", kPercent * (r.acc_ann - r.acc_mf));
  put(w, "sampling_gap", kPercent * (r.acc_mf - r.acc_snn_mean));
}

void put_if_baseline(DocumentWriter& w, const NetworkCommandOptions& o, const sim::IfResult& ifr) {
  const Object baseline(w, "if_baseline");
  put(w, "normalisation", if_norm_name(*o.if_norm));
  put(w, "v0", o.v0);
  put(w, "steps", o.if_steps);
  put(w, "lambda", ifr.lambda);
  put(w, "A_IF", kPercent * ifr.acc_if);
  put(w, "gap", kPercent * (ifr.acc_ann - ifr.acc_if));
  put(w, "synops_per_sample_mean", ifr.synops_mean);
  put(w, "synops_per_sample_sd", ifr.synops_sd);
  put(w, "spikes_per_neuron", ifr.spikes_per_neuron);
}

}  // namespace

void write(DocumentWriter& w, const NetworkCommandResult& res) {
  const auto& o = res.options;
  const auto& opt = res.run;
  const auto& r = res.sim;
  const Object doc(w, "");
  put(w, "net", res.net);
  put(w, "data", res.data);
  put(w, "test_images", r.samples);
  put(w, "T", opt.snn.T);
  put(w, "dt", opt.snn.dt);
  put(w, "steps", r.steps);
  put(w, "tau", opt.snn.tau);
  put(w, "rate", opt.rate);
  put(w, "scale", sim::scale_name(opt.scale));
  put(w, "sampler", sim::sampler_name(opt.snn.sampler));
  put(w, "sampler_rule", sim::sampler_rule(opt.snn.sampler));
  put(w, "kernel", sim::kernel_name(r.kernel));
  put(w, "conv_path", sim::conv_path_name(opt.snn.conv_path));
  put(w, "readout", sim::readout_name(opt.snn.readout));
  put(w, "trace_weight", sim::trace_weight_name(opt.snn.trace_weight));
  put(w, "output_scale", sim::output_scale_name(opt.output_scale));
  put(w, "subset", opt.subset.text);
  put(w, "trials", opt.trials);
  put(w, "seed", opt.seed);
  put_layers(w, res);
  put_accuracies(w, r);
  put(w, "synops_per_sample_mean", r.synops_mean);
  put(w, "synops_per_sample_sd", r.synops_sd);
  put(w, "spikes_per_neuron", r.spikes_per_neuron);
  put(w, "spiking_neurons", r.spiking_neurons);
  put(w, "transitions_per_sample", r.transitions_per_sample);
  if (opt.snn.sampler == sim::SamplerKind::Euler) put(w, "euler_renormalized_steps", r.euler_renormalized);
  if (res.if_baseline) put_if_baseline(w, o, *res.if_baseline);
}

nlohmann::ordered_json to_json(const NeuronSimResult& r) { return json_of(r); }
nlohmann::ordered_json to_json(const NetworkCommandResult& r) { return json_of(r); }

}  // namespace ctmc::commands
