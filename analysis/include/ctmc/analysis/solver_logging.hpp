// Ceres, the fitter's solver, logs through glog, and glog's level is state of
// the whole process (no per-thread or per-call level exists). The fitter
// never sets it; a program that fits (the CLI, the Python module, a bench, a
// test suite) decides once, at start, by calling this.
#pragma once

namespace ctmc::analysis {

// glog to FATAL messages only: Ceres reports a start whose first evaluation
// fails (a chain reducible at some H) at ERROR level, and such a start simply
// scores +inf in the search.
void quiet_solver_logging();

}  // namespace ctmc::analysis
