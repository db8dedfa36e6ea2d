// The transcendental functions of the spiking kernel, in one place: the
// kernel calls them only through these wrappers, so that the implementation
// (and with it the platform dependence of the last bit) is chosen here.
#pragma once
#include <cmath>

namespace ctmc::sim::kmath {

inline double log(double x) { return std::log(x); }
inline double exp(double x) { return std::exp(x); }
inline double log1p(double x) { return std::log1p(x); }

}  // namespace ctmc::sim::kmath
