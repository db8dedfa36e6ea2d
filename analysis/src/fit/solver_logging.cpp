#include "ctmc/analysis/solver_logging.hpp"

#include <glog/logging.h>

namespace ctmc::analysis {

void quiet_solver_logging() { FLAGS_minloglevel = google::GLOG_FATAL; }

}  // namespace ctmc::analysis
