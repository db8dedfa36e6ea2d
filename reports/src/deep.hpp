// Report "deep": the paper's deep experiments (section 4.3-4.4, Table 1's
// VGG-11 rows, Figures 5-6, Appendix B's IF baseline and Appendix D's
// transition-count frontier) reproduced end to end with this toolkit:
//
//   train    VGG-11 with BatchNorm (sim::train_net, what `ctmc-snn train
//            --arch vgg11` runs) per data set, activation and seed: the
//            strided-convolution net on the MNIST digits (ReLU and
//            ClipReLU6), the average-pooling net on CIFAR-10 (ReLU and a
//            clip at the ReLU net's 95th preactivation percentile);
//   fit      one CTMC neuron per spiking layer (14) on quantiles of the
//            layer's preactivations over training images (what `ctmc-snn
//            convert` does);
//   sweep    tau x r with T as checkpoints (sim::run_sweep): frontiers of gap
//            against SynOps and transitions, the cheapest cell under the
//            criterion (0.5 pp MNIST, 2 pp CIFAR-10);
//   cases    one run at the paper's Cases I and II with the per-layer
//            quantiles of the ANN, mean-field and decoded SNN activations
//            (Figure 5C) and the decomposition of eq. (decomp);
//   IF       the integrate-and-fire baseline (p99.9 / p100, v0 in {0, 0.5});
//   PyTorch  a VGG-11 trained in PyTorch imported three ways, and an
//            independent PyTorch implementation's figures checked
//            (deep_torch.hpp).
//
// CIFAR-10 is not in any package here: its section runs when --cifar DIR
// names a CIFAR-10 binary folder and otherwise says so in one line.
// Internal header of reports (not installed); tests include it as "deep.hpp".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ctmc::reports {

struct ReportContext;

// A named operating point (T, tau, r) (Appendix "Deep operating points").
struct OperatingPoint {
  std::string name;
  double T, tau, r;
};

struct DeepDesign {
  std::string label;  // stated in the report
  double width = 0.125;  // VGG-11's channel scale (1: the paper's 64..512)
  std::vector<std::uint64_t> seeds{1};
  int epochs = 6, cifar_epochs = 6;
  int train_limit = 0, cifar_train_limit = 0;  // first N training images (0: all)
  int test_images = 100;                      // spread over each test split (--subset stride:K)
  // The cases' own sweep (their (tau, r) at their T) when the grid does not
  // hold them: on this many test images, spread the same way.
  int case_images = 100;
  int quantile_images = 20;                   // the first of them, for the layer quantiles (Figure 5C)
  int trials = 1, cifar_trials = 1;
  // The sweep grids (T as checkpoints). A case off its data set's grid runs in
  // a sweep of its own (case_images).
  std::vector<double> taus, rates, T, cifar_rates, cifar_T;
  double dt = 0.005;
  // The paper's Cases I and II.
  std::vector<OperatingPoint> mnist_cases{{"Case I", 50, 0.02, 3}, {"Case II", 30, 0.02, 3}};
  std::vector<OperatingPoint> cifar_cases{{"Case I", 50, 0.02, 5}, {"Case II", 40, 0.02, 4}};
  int fit_images = 1000;
  std::size_t fit_samples = 2000;
  int fit_starts = 32;
  std::vector<int> if_steps;
  bool fashion = false;  // also VGG-11 on Fashion-MNIST
  // The PyTorch cross-check's fixture (deep_torch.hpp), relative to the
  // current folder or the source tree; empty: the section is left out.
  std::string torch_dir = "tests/fixtures/torch_vgg11";
};

// The reduced default (sized for `report all` on 2 cores) or the paper's
// design (`--full`: four seeds, 8 trials on MNIST, full width).
DeepDesign deep_design(bool full);

// Runs the study and writes the report; the exit status (0: every check held).
int run_deep_report(const ReportContext& ctx, const DeepDesign& design);

}  // namespace ctmc::reports
