// bernstein, fit, fit --score: over reports/commands.hpp, the bodies the CLI runs.
#include "core.hpp"

namespace ctmc::python {

std::string bernstein_json(const BernsteinArgs& o) { return reports::bernstein_json(o).dump(); }

std::string score_json(const FitArgs& o) { return reports::score_json(o).dump(); }

std::string fit_json(const FitArgs& o) { return reports::fit_json(o).dump(); }

}  // namespace ctmc::python
