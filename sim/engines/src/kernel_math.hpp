// The transcendental functions of the spiking kernel, in one place: the
// kernel calls them only through these wrappers, so that the implementation
// (and with it the platform dependence of the last bit) is chosen here:
// det_math's, whose results do not depend on the C library or the CPU.
#pragma once
#include "ctmc/solvers/det_math.hpp"

namespace ctmc::sim::kmath {

inline double log(double x) { return detmath::log(x); }
inline double exp(double x) { return detmath::exp(x); }
inline double log1p(double x) { return detmath::log1p(x); }

}  // namespace ctmc::sim::kmath
