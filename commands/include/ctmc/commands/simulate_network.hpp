// simulate network --net NET.json --data DIR --neurons M.json[,...] ...
//                  [--if p99.9|p100 [--v0 V] [--if-steps N]] [--json]:
// the ANN, its mean field and the spiking CTMC network (DESIGN.md section
// 7), with A_ANN - A_SNN = (A_ANN - A_MF) + (A_MF - A_SNN) (paper eq.
// decomp), SynOps (eq. synops), and the IF baseline with --if.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ctmc/commands/document.hpp"
#include "ctmc/sim/formats/dataset.hpp"
#include "ctmc/sim/engines/if_baseline.hpp"
#include "ctmc/sim/nets/manifest.hpp"
#include "ctmc/sim/engines/network_sim.hpp"

namespace ctmc::commands {

struct NetworkCommandOptions {
  // The numbers (T, tau, dt, rate, trials, seed, threads, limit) and the
  // conventions, typed: snn.sampler, snn.kernel, snn.conv_path, snn.readout,
  // snn.trace_weight, scale, output_scale, subset, layer_alpha (NaN: that
  // layer keeps the scale rule; empty: every layer does).
  sim::NetworkSimOptions opt;
  std::optional<double> if_norm;  // the IF baseline's percentile (--if p99.9: 99.9); none: no IF baseline
  double v0 = 0;
  int if_steps = 32;
};

// The conventions as text, the way the CLI's options and the Python
// module's keywords take them (the defaults are the texts of
// NetworkCommandOptions' defaults; empty layer_alpha and if_norm: none).
struct NetworkOptionTexts {
  std::string sampler = "exact", kernel = "auto", conv_path = "auto", readout = "spike", scale = "q99",
              trace_weight = "integral", output_scale = "logits", subset = "all", layer_alpha, if_norm;
};
// Sets o's conventions from their texts, each by its option's parser (the
// one both front ends use); InputError naming the option for a text that is
// not one.
void set_network_options(NetworkCommandOptions& o, const NetworkOptionTexts& t);
// The text parse_if_norm reads, for the document and the command line.
std::string if_norm_name(double percentile);  // 99.9 -> "p99.9"

// What the network runs on, each read when the command gets to it (after the
// options are checked), and the names the document gives them.
struct NetworkInputs {
  std::function<std::vector<sim::NeuronModel>()> neurons;
  std::function<sim::Mlp()> net;
  // The same manifest as a layer graph (load_net), for a net that `net`
  // refuses for its convolutions or pooling; unset: dense nets only.
  std::function<sim::Net()> graph;
  std::function<sim::DatasetSplit()> data;
  std::string net_name, data_name;
};

struct NetworkCommandResult {
  std::string net, data;
  NetworkCommandOptions options;       // as given (the conventions the document repeats)
  sim::NetworkSimOptions run;          // as run
  std::vector<std::string> neurons;    // the neuron model of each spiking layer
  sim::NetworkSimResult sim;           // accuracies in [0, 1]
  std::optional<sim::IfResult> if_baseline;
};

NetworkCommandResult run_simulate_network(const NetworkCommandOptions& o, const NetworkInputs& in);
// Accuracies in percent and gaps in percentage points, as the document says.
void write(DocumentWriter& w, const NetworkCommandResult& r);
nlohmann::ordered_json to_json(const NetworkCommandResult& r);

}  // namespace ctmc::commands
