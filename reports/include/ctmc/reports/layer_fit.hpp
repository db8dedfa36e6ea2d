// One CTMC neuron per spiking layer (commands/layer_fit.hpp, which `convert`
// runs) under the names the reports use (report conversion fits its layers
// with it).
#pragma once
#include "ctmc/commands/layer_fit.hpp"

namespace ctmc::reports {

using commands::conversion_family;
using commands::conversion_rate_bound;
using commands::layer_fit_options;
using commands::fit_layer_neuron;
using commands::LayerFit;
using commands::quantile_samples_text;
using commands::rectified_linear;

}  // namespace ctmc::reports
