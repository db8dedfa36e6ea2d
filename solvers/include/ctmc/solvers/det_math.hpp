// Deterministic elementary functions: the same bits on every x86-64 machine,
// whatever C library or CPU runs the binary.
//
// Why not <cmath>: glibc's exp, log, pow, tanh, ... are resolved at load time
// to CPU-specific variants (FMA, AVX2), which round differently in about one
// case in 10^3, and their algorithms change between glibc releases (2.41's
// tanhf differs from 2.36's for 14% of arguments). A seeded simulation or training run that
// calls them prints different last digits, and then different spike counts,
// on another machine. Every function here is SLEEF's deterministic scalar
// variant ("cinz", portable C without FMA; `Sleef_cinz_<f>d1_u10purec`): plain
// IEEE-754 double/float additions and multiplications in a fixed order, so
// the result depends only on the argument (the same bits from Debian 12's
// SLEEF 3.5.1 and Debian 13's 3.6.1; the golden-hash test, tests/golden/,
// would show a release that changed them).
//
// Accuracy (SLEEF's documented bounds for the u10 variants, checked against
// MPFR in tests/solvers/det_math_test.cpp, which prints the measured maxima):
// at most 1.0 ulp for exp, expm1, log, log1p, log2, log10, tanh and pow, in
// double and float, and for lgamma of a positive argument (SLEEF states
// max(1 ulp, 1e-15 absolute) for a negative one). Measured on 10^4 seeded
// arguments per range: 0.89 (exp), 0.99 (expm1, tanh, tanhf), 0.51-0.87
// (the others). Special values follow C99 Annex F (exp(-inf) = 0,
// log(0) = -inf, log(-1) = NaN, ...).
//
// sqrt, fma, floor and the like are exactly rounded by IEEE 754 and need no
// replacement. Exact, MPFR and interval paths never go through here.
#pragma once

namespace ctmc::detmath {

double exp(double x);
double expm1(double x);  // e^x - 1, accurate near 0
double log(double x);
double log1p(double x);  // log(1 + x), accurate near 0
double log2(double x);
double log10(double x);
double tanh(double x);
double pow(double x, double y);
double lgamma(double x);  // log |Gamma(x)|

float exp(float x);
float expm1(float x);
float log(float x);
float log1p(float x);
float tanh(float x);
float pow(float x, float y);

}  // namespace ctmc::detmath
