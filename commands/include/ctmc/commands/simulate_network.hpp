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
  sim::NetworkSimOptions opt;  // the numbers: T, tau, dt, rate, trials, seed, threads, limit
  std::string sampler = "exact", readout = "spike", scale = "q99", trace_weight = "integral",
              output_scale = "logits", subset = "all", layer_alpha;
  std::string kernel = "auto", conv_path = "auto";  // SpikingConfig::kernel, ::conv_path
  std::string if_norm;  // empty: no IF baseline
  double v0 = 0;
  int if_steps = 32;
};
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
  NetworkCommandOptions options;       // as given (the option texts the document repeats)
  sim::NetworkSimOptions run;          // as run: the option texts parsed
  std::vector<std::string> neurons;    // the neuron model of each spiking layer
  sim::NetworkSimResult sim;           // accuracies in [0, 1]
  std::optional<sim::IfResult> if_baseline;
};

NetworkCommandResult run_simulate_network(const NetworkCommandOptions& o, const NetworkInputs& in);
// Accuracies in percent and gaps in percentage points, as the document says.
void write(DocumentWriter& w, const NetworkCommandResult& r);
nlohmann::ordered_json to_json(const NetworkCommandResult& r);

}  // namespace ctmc::commands
