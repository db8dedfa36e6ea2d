// Sweep documents from planted run records, for the tests of the sweep's
// statistics (tests/sim) and of the claims ledgers built on them
// (tests/reports): one net, the exact sampler, tau 0.1, one rate per
// planted cell (r = 1, 2, ...), one checkpoint T = 1.
#pragma once
#include <cstdint>
#include <vector>

#include "ctmc/sim/studies/sweep_document.hpp"

namespace ctmc::testing {

// A planted run: the SNN's discordant images against the ANN (n10: only the
// ANN right; the mean field agrees with the ANN everywhere, so the same
// against it), and a SynOps cost with its sd over the images.
struct Planted {
  std::uint64_t n10, n01;
  double synops, synops_sd;
};

// cells[r][t]: the run of rate r + 1 and trial t, on `images` test images.
inline sim::SweepDocument planted_document(const std::vector<std::vector<Planted>>& cells, std::size_t images) {
  using namespace ctmc::sim;
  SweepSpec spec;
  spec.nets = {"net.json"};
  spec.neurons = {"neuron.json"};
  spec.taus = {0.1};
  for (std::size_t r = 0; r < cells.size(); ++r) spec.rates.push_back(static_cast<double>(r + 1));
  spec.T = {1};
  spec.trials = static_cast<int>(cells.front().size());
  std::vector<RunRecord> runs;
  for (std::size_t r = 0; r < cells.size(); ++r)
    for (std::size_t t = 0; t < cells[r].size(); ++t) {
      const Planted& p = cells[r][t];
      const double n = static_cast<double>(images);
      RunRecord rec;
      rec.run = runs.size();
      rec.tau = 0.1;
      rec.rate = spec.rates[r];
      rec.trial = static_cast<int>(t);
      rec.test_images = images;
      rec.a_ann = rec.a_mf = 90;
      rec.ann_vs_mf = {0, 0, images};
      RunWindow w;
      w.T = 1;
      w.a_snn = 90 - 100 * (static_cast<double>(p.n10) - static_cast<double>(p.n01)) / n;
      w.synops_per_sample = p.synops;
      w.synops_sd = p.synops_sd;
      w.spikes_per_neuron = 0.5 + 0.01 * static_cast<double>(r);
      w.ann_vs_snn = w.mf_vs_snn = {p.n10, p.n01, images};
      rec.layers.push_back({1, 1, 0});
      w.layers.push_back({w.spikes_per_neuron, 0});
      rec.windows.push_back(w);
      runs.push_back(rec);
    }
  return sweep_document(spec, runs);
}

}  // namespace ctmc::testing
