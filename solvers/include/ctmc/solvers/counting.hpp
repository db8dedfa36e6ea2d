// Counting statistics of the spike train of a CTMC neuron (DESIGN.md
// section 5). The spike count N(t) is a Markovian arrival process with
// D1 = the matrix of spike-transition rates and D0 = Q - D1.
//
// Finite t (Van Loan, "Computing integrals involving the matrix exponential",
// IEEE TAC 23, 1978): with
//   A = [[Q, D1, 0], [0, Q, D1], [0, 0, Q]],   exp(A t) = [[E, F1, F2], [0, E, F1], [0, 0, E]],
// F1 = int_0^t e^{Qs} D1 e^{Q(t-s)} ds and F2 the corresponding double
// integral, so that for an initial distribution pi0
//   E[N(t)] = pi0 F1 1,   E[N(t)(N(t)-1)] = 2 pi0 F2 1,
//   Var N(t) = 2 pi0 F2 1 + E[N(t)] - E[N(t)]^2
// (the first two derivatives at z = 1 of E z^N(t) = pi0 exp((D0 + z D1) t) 1).
// The last line would cancel catastrophically at large t (terms of size
// (lambda t)^2 for a result of size v t), so where lambda t > 1 the code
// computes the moments of the centered count N(t) - lambda t instead, by the
// same construction with D1 replaced by D1 - lambda I (see counting.cpp);
// below, uncentered (E[N(t)] can be far below lambda t, and adding lambda t
// back would cancel it). The Taylor degree also covers the longest path of
// A's graph, so blocks whose entries start at (rate t)^d keep their relative
// accuracy at small rate t (solvers/src/expm.hpp). What remains is the
// scaling and squaring's own error growth, about 2^s eps for s ~ log2 ||Q t||
// squarings: MPFR adds s guard bits and keeps full precision at any t; double
// refuses t beyond 25 squarings (InputError) rather than lose more digits.
//
// Asymptotic (Neuts; Narayana and Neuts 1992): with theta the stationary
// vector (solved by GTH) and the deviation matrix D (theta D = 0, Q D =
// 1 theta - I),
//   lambda = lim E[N(t)]/t = theta D1 1 (= the stationary flux F),
//   v = lim Var N(t)/t = lambda + 2 theta D1 D D1 1,
// and the Fano factor v / lambda. D D1 1 solves a Poisson equation, by
// GTH-style elimination with one state pinned (counting.cpp): one closed
// class, which solve_stationary ensures, makes it solvable. In rationals the
// results are exact.
//
// Errors: InputError for a chain beyond 1000 states (double) or 300 (MPFR)
// for the finite-T moments, a wrong-sized or negative initial distribution, a
// negative t, a chain with several closed classes at H, and (double) a t
// that is not finite or needs more than 25 squarings.
#pragma once
#include <string>
#include <vector>

#include "ctmc/solvers/dense_matrix.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/scalar.hpp"

namespace ctmc::solvers {

// Generator Q(H) (diagonal = minus the exit rate, summed exactly in the
// rationals before rounding) and its spike part D1(H), rounded into T.
template <class T>
struct SpikeGenerator {
  DenseMatrix<T> q, d1;
};
template <class T>
SpikeGenerator<T> spike_generator(const Model& m, const Rational& H);

template <class T>
struct CountingMoments {
  T mean;      // E[N(t)]
  T variance;  // Var N(t)
  T factorial_moment2;  // E[N(t)(N(t)-1)]
};

// Moments of N(t) from the initial distribution pi0 (one entry per state,
// >= 0, summing to 1 up to rounding). T = double or Mpfr (at the current
// default precision).
template <class T>
CountingMoments<T> counting_moments(const Model& m, const Rational& H, const std::vector<T>& pi0, const T& t,
                                    const std::string& source = "model");

template <class T>
struct AsymptoticCounting {
  std::vector<T> theta;  // stationary distribution
  T rate;                // lambda = theta D1 1
  T variance_rate;       // lim Var N(t) / t
  T fano() const { return variance_rate / rate; }  // requires rate != 0
};

// T = double, Mpfr or Rational (exact). The deviation term comes from a
// GTH-style solve of the Poisson equation with one state pinned (no pivot
// formed by a subtraction), so rates spread over many orders of magnitude
// (1e-12..1e12, or H = 1e300 on an affine rate) keep full relative accuracy.
template <class T>
AsymptoticCounting<T> asymptotic_counting(const Model& m, const Rational& H, const std::string& source = "model");

extern template SpikeGenerator<double> spike_generator(const Model&, const Rational&);
extern template SpikeGenerator<Mpfr> spike_generator(const Model&, const Rational&);
extern template SpikeGenerator<Rational> spike_generator(const Model&, const Rational&);
// The two supported scalars (defined in counting.cpp). MPFR works with 64 + s
// guard bits internally (s: the squarings) and rounds the results to the current precision; it
// does so by raising the calling thread's working precision for the duration
// of the call (a PrecisionScope). Both versions are thread-safe. Cost: the dense exponential of the
// 3n x 3n Van Loan matrix kept in block form (expm_van_loan), about
// 6 n^3 (m + s) operations; meant for small neurons (n up to a few tens).
template <>
CountingMoments<double> counting_moments(const Model&, const Rational&, const std::vector<double>&, const double&,
                                         const std::string&);
template <>
CountingMoments<Mpfr> counting_moments(const Model&, const Rational&, const std::vector<Mpfr>&, const Mpfr&,
                                       const std::string&);
extern template AsymptoticCounting<double> asymptotic_counting(const Model&, const Rational&, const std::string&);
extern template AsymptoticCounting<Mpfr> asymptotic_counting(const Model&, const Rational&, const std::string&);
extern template AsymptoticCounting<Rational> asymptotic_counting(const Model&, const Rational&, const std::string&);

}  // namespace ctmc::solvers
