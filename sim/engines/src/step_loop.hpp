// Internal: the per-step loop of the spiking kernels (spiking.cpp's
// reference and vectorised kernels, spiking_fast.cpp's fast one). Each
// kernel supplies its state layout and its lane pass as a `Steps` policy:
//   out, counts, fired  its SampleRun (counts sized, dense_steps zeroed), the
//                       transitions tallied, each spiking layer's step spikes
//   kTransmitFirst      whether layer l-1's step spikes go into layer l's
//                       current before layer l's pass (see below)
//   layer1(k)           layer 1 over step k (its H is constant), with the
//                       readout's sum of H when it is the only layer
//   read(l)             layer l's H for step k taken from bias + current
//                       ahead of the pass, where the kernel does it there
//   pass(l, k)          layer l's neurons over step k (or the integrating
//                       readout's H), with the readout's sum of H at l = L-1
//   transmit(l, f)      f, layer l-1's step spikes, into layer l's current;
//                       true when it took the dense path
//   sync_counts()       out.counts from the kernel's lane order, if it has one
//   h_sum()             the readout's sum of H as an Eigen vector
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>

#include "ctmc/sim/engines/spiking.hpp"

namespace ctmc::sim {

// Layers in order within step k, each through the update order of trace.hpp:
// layer l reads its input H for step k (step 1), its neurons advance over
// the step (step 2), and its current is closed for step k (step 3: decay,
// plus the step-k spikes of layer l-1, simulated just before). Steps 2 and 3
// of one layer commute only where H was read out of the current before the
// pass (the reference kernel's h_buf, kTransmitFirst); the vectorised
// kernels read b + I inside the lane pass, so their spikes go in after it.
// Each kernel keeps its own order, hence its own sums and bits.
template <class Steps>
SampleRun SpikingNetwork::step_loop(Steps& s) const {
  const std::size_t L = sizes_.size();
  const std::size_t S = layers_.size();
  const auto transmit_step = [&](std::size_t l) {
    if (l - 1 >= S) return;
    if (s.transmit(l, s.fired[l - 1])) ++s.out.dense_steps[l - 1];
    s.fired[l - 1].clear();
  };
  std::size_t next_checkpoint = 0;
  s.out.at.reserve(checkpoint_steps_.size());
  for (std::int64_t k = 0; k < steps_; ++k) {
    for (std::size_t l = 0; l < L; ++l) {
      if (l == 0) {
        s.layer1(k);
        continue;
      }
      s.read(l);
      if constexpr (Steps::kTransmitFirst) transmit_step(l);
      s.pass(l, k);
      if constexpr (!Steps::kTransmitFirst) transmit_step(l);
    }
    if (S == L) s.fired[L - 1].clear();  // output spikes are counted, not transmitted
    if (next_checkpoint < checkpoint_steps_.size() && k + 1 == checkpoint_steps_[next_checkpoint]) {
      s.sync_counts();
      SampleRun& at = s.out.at.emplace_back();
      at.counts = s.out.counts;
      read_out(at, s.h_sum(), k + 1, cfg_.checkpoints[next_checkpoint], s.counts);
      ++next_checkpoint;
    }
  }
  s.sync_counts();
  read_out(s.out, s.h_sum(), steps_, cfg_.T, s.counts);
  return std::move(s.out);
}

}  // namespace ctmc::sim
