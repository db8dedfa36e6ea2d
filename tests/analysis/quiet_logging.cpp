// The analysis suite, like every program that fits, keeps Ceres' logging
// to FATAL messages (solver_logging.hpp), once at start.
#include "ctmc/analysis/solver_logging.hpp"

namespace {
const bool kQuiet = (ctmc::analysis::quiet_solver_logging(), true);
}  // namespace
