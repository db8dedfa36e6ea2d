// One CTMC neuron per spiking layer, fitted to the layer's target activation
// where the layer's inputs lie (paper section 4: layerwise neurons and rate
// scaling): what `report conversion` and `ctmc-snn convert` both do.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "ctmc/analysis/fit.hpp"
#include "ctmc/commands/fit.hpp"

namespace ctmc::commands {

// relu and cliprelu_K: the piecewise-linear targets.
bool rectified_linear(const std::string& activation);

// The low-state families the paper uses: three-state for the sigmoids, the
// two-state chain for the piecewise-linear targets; softplus takes the
// full three-state family, whose fit is two orders better than two-state.
std::string conversion_family(const std::string& activation);

// The bound R on offsets, slopes and constant rates of a fit. The fit's
// default (1000) lets the three-state sigmoid settle on a fast B <-> G
// flicker at the bound (G -> B at 1000): MSE 1.4e-3 against 2.0e-3 at R =
// 10 on the MNIST layer-1 sample, for some 500 silent transitions per
// spike, which the exact sampler draws one by one (a sweep run 50x slower).
// The two-state chain of a rectified linear target needs its fast return
// R -> B (2 transitions per spike, whatever the rate) and keeps the default.
double conversion_rate_bound(const std::string& activation);

// The samples file `fit --samples` reads: a '#' line (header, one line),
// then min(n, sorted.size()) quantiles of the sorted values, the k-th at
// (k + 1/2) / n of the way through them, to 9 significant digits.
std::string quantile_samples_text(const std::vector<float>& sorted, std::size_t n, const std::string& header);

// The neuron of one spiking layer: conversion_family(target) fitted to the
// target, rate bound conversion_rate_bound(target), on the samples file
// `samples` (a name) in `folder`, without widening the bound (a refit would
// only report what a wider bound gives). The data's description names the
// file as `ctmc-snn fit --samples` run from `folder` would.
struct LayerFit {
  analysis::FitProblem problem;
  analysis::FitResult result;
};
LayerFit fit_layer_neuron(const std::string& folder, const std::string& samples, const std::string& target,
                          int starts, unsigned long long seed, int threads);

// The `ctmc-snn fit` options of that fit, writing `output`: run from the
// folder, fit_command_line of them repeats it.
FitCommandOptions layer_fit_options(const std::string& samples, const std::string& target, int starts,
                                    unsigned long long seed, const std::string& output);

}  // namespace ctmc::commands
