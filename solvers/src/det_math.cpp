// det_math.hpp through SLEEF's deterministic portable-C scalar entry points.
// Only the "cinz ... purec" symbols are used: SLEEF's unsuffixed names
// (Sleef_expd1_u10) dispatch at run time between the FMA and non-FMA builds,
// which round differently, exactly what this module exists to avoid.
#include "ctmc/solvers/det_math.hpp"

#include <sleef.h>

// The deterministic variants are meant to give the same bits in every SLEEF
// release; Debian's 3.5.1 and 3.6.1 builds agree on 2e6 arguments per
// function (README "Reproducibility"). A release that breaks this shows in
// the golden-hash test.
static_assert(SLEEF_VERSION_MAJOR == 3, "det_math uses SLEEF 3's deterministic (cinz) entry points");

namespace ctmc::detmath {

double exp(double x) { return Sleef_cinz_expd1_u10purec(x); }
double expm1(double x) { return Sleef_cinz_expm1d1_u10purec(x); }
double log(double x) { return Sleef_cinz_logd1_u10purec(x); }
double log1p(double x) { return Sleef_cinz_log1pd1_u10purec(x); }
double log2(double x) { return Sleef_cinz_log2d1_u10purec(x); }
double log10(double x) { return Sleef_cinz_log10d1_u10purec(x); }
double tanh(double x) { return Sleef_cinz_tanhd1_u10purec(x); }
double pow(double x, double y) { return Sleef_cinz_powd1_u10purec(x, y); }
double lgamma(double x) { return Sleef_cinz_lgammad1_u10purec(x); }

float exp(float x) { return Sleef_cinz_expf1_u10purec(x); }
float expm1(float x) { return Sleef_cinz_expm1f1_u10purec(x); }
float log(float x) { return Sleef_cinz_logf1_u10purec(x); }
float log1p(float x) { return Sleef_cinz_log1pf1_u10purec(x); }
float tanh(float x) { return Sleef_cinz_tanhf1_u10purec(x); }
float pow(float x, float y) { return Sleef_cinz_powf1_u10purec(x, y); }

}  // namespace ctmc::detmath
