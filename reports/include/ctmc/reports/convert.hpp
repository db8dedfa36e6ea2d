// `ctmc-snn convert` (commands/convert.hpp) and its pieces under the names
// the reports use (report deep converts its nets with them).
#pragma once
#include "ctmc/commands/convert.hpp"
#include "ctmc/reports/layer_fit.hpp"
#include "ctmc/reports/writer.hpp"

namespace ctmc::reports {

using commands::ConvertLayer;
using commands::ConvertOptions;
using commands::ConvertResult;
using commands::kMaxConvertValues;
using commands::SpikingLayerFit;

using commands::fit_spiking_layer;
using commands::layer_targets;
using commands::preactivation_images;
using commands::run_convert;
using commands::sample_preactivations;

}  // namespace ctmc::reports
