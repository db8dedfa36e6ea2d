// Test support for fit_moves_test.cpp, which runs search moves without
// fit(): fit() keeps glog (Ceres' logging) to FATAL messages, since a solve
// that fails scores +inf and need not be logged. A file of its own because
// glog's CHECK macros clash with doctest's.
#include <glog/logging.h>

void quiet_ceres_logging_for_tests() { FLAGS_minloglevel = google::GLOG_FATAL; }
