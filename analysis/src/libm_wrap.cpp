// Ceres's own calls into the C library's pow and log, made deterministic.
//
// Debian's libceres.a (linked statically) calls pow in the Levenberg-Marquardt
// trust-region update (levenberg_marquardt_strategy.cc: the radius shrinks by
// 1 - (2 rho - 1)^3 after a successful step, rho the step quality), in
// polynomial.cc, and log in its sparse-matrix helpers. glibc resolves pow to a
// CPU-specific variant (FMA or not) at load time and changes its algorithms
// between releases, so a fit's trust-region radii, and with them the fitted
// rates, could differ in the last bits between machines (README,
// "Reproducibility"; det_math.hpp).
//
// Every program that links `analysis` is linked with `--wrap=pow --wrap=log`
// (analysis/CMakeLists.txt): the linker sends each reference to pow or log in
// the program's own objects and static archives, Ceres's included, to
// __wrap_pow / __wrap_log below, which are SLEEF's deterministic variants (at
// most 1 ulp, the same bits on every x86-64 machine). Shared libraries loaded
// at run time (MPFR, GMP, the C++ library) keep the C library's functions;
// they compute nothing we print in double. `--undefined` makes the linker
// take this object from the archive even when nothing of ours refers to it.
#include "ctmc/solvers/det_math.hpp"

extern "C" {
double __wrap_pow(double x, double y) { return ctmc::detmath::pow(x, y); }
double __wrap_log(double x) { return ctmc::detmath::log(x); }
}
