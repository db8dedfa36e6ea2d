// The IF baseline's grid (paper Appendix B): percentile normalisation p99.9
// and p100, initial membrane v0 in {0, 0.5} of the threshold, and the given
// time steps (increasing), each point averaged over the source nets (training
// seeds).
// Internal header of reports (not installed).
#pragma once
#include <vector>

#include "ctmc/sim/formats/dataset.hpp"
#include "ctmc/sim/engines/if_baseline.hpp"
#include "ctmc/sim/engines/stats.hpp"

namespace ctmc::reports {

struct IfPoint {
  double percentile, v0;
  int steps;
  double gap, gap_sd, synops, spikes_per_neuron;  // gap in pp, means (and the gap's sd) over the nets
};

// NetT: sim::Mlp or sim::Net. The first `limit` images of `subset` of the
// test split, the scales from the train split.
template <class NetT>
std::vector<IfPoint> run_if_grid(const std::vector<NetT>& nets, const sim::DatasetSplit& split,
                                 const std::vector<int>& steps_list, int limit, const sim::TestSubset& subset,
                                 int threads) {
  std::vector<IfPoint> out;
  for (double p : {99.9, 100.0}) {
    sim::IfOptions o;
    o.percentile = p;
    o.threads = threads;
    o.limit = limit;
    o.subset = subset;
    // lambda depends on the percentile only: one pass over the train split per net.
    std::vector<std::vector<double>> lambda;
    for (const NetT& net : nets) lambda.push_back(sim::if_scales(net, split.train, o));
    for (double v0 : {0.0, 0.5}) {
      o.v0 = v0;
      // One run per net to the longest window, read out at each.
      std::vector<std::vector<sim::IfResult>> runs;
      for (std::size_t k = 0; k < nets.size(); ++k)
        runs.push_back(sim::simulate_if_scaled(nets[k], lambda[k], split.test, o, steps_list));
      for (std::size_t i = 0; i < steps_list.size(); ++i) {
        std::vector<double> gaps, synops, spn;
        for (const auto& r : runs) {
          gaps.push_back(100 * (r[i].acc_ann - r[i].acc_if));
          synops.push_back(r[i].synops_mean);
          spn.push_back(r[i].spikes_per_neuron);
        }
        out.push_back({p, v0, steps_list[i], sim::mean_of(gaps), sim::sd_of(gaps), sim::mean_of(synops),
                       sim::mean_of(spn)});
      }
    }
  }
  return out;
}

}  // namespace ctmc::reports
