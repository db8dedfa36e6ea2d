// Binomial mean absolute deviation and the sharper Bernstein bound
// (DESIGN.md section 6; REFERENCES.md "Binomial mean absolute deviation").
//
// For K ~ Bin(N, u) and m = floor(N u) + 1, de Moivre's formula
//   E|K - N u| = 2 m C(N, m) u^m (1 - u)^(N - m + 1)
// makes E|K/N - u| a polynomial on each piece [j/N, (j+1)/N); on the piece
// with m = k it is maximal at u = k/(N+1) (zero of the derivative of
// u^k (1-u)^(N+1-k), which lies inside the piece), so
//   m_N = max_u E|K/N - u| = max_{1<=k<=N} v_k,
//   v_k = (2k/N) C(N,k) k^k (N+1-k)^(N+1-k) / (N+1)^(N+1),
// an exact rational (v_k = v_{N+1-k}). For large N a rigorous closed-form
// bound from Robbins' Stirling bounds (1/(12n+1) < log n! - log(sqrt(2 pi n)
// (n/e)^n) < 1/(12n)) and (1+1/x)^x < e, N log(1+1/N) >= 1 - 1/(2N):
//   m_N <= (1 + 2/(N-1)) e^(7/(12N)) / sqrt(2 pi N),   N >= 2,
// whose factor tends to 1 (m_N sqrt N -> 1/sqrt(2 pi)).
//
// Internal header of proofs_check (not installed): the Bernstein claims
// (bernstein_claims.cpp) use it; the library and its tests include it as
// "bernstein_binomial.hpp" (tests/CMakeLists.txt gives them proofs_check/src).
#pragma once
#include <cstdint>

#include "ctmc/solvers/scalar.hpp"

namespace ctmc::proofs_check {

// E|K - N u| exactly, by de Moivre's formula; 0 <= u <= 1.
solvers::Rational binomial_mad_de_moivre(std::int64_t n, const solvers::Rational& u);

struct MaxMeanAbsDev {
  solvers::Rational value;  // m_N exactly
  std::int64_t k = 0;       // attained at u = k/(N+1) (the smaller of k, N+1-k)
};
// Exact m_N for 1 <= N <= kMaxExactMadN. Candidates k are screened in double
// (log-gamma, margin 1e-7 in the log, far above its rounding error) and the
// survivors compared exactly.
constexpr std::int64_t kMaxExactMadN = 100000;
MaxMeanAbsDev max_mean_abs_deviation(std::int64_t n);

// The closed-form upper bound above (N >= 2), rounded up; 1/2 for N = 1.
double max_mean_abs_deviation_asymptotic_upper(std::int64_t n);
// A rigorous upper bound of m_N as a double: the exact value rounded up when
// N <= exact_limit, else the closed-form bound.
double max_mean_abs_deviation_upper(std::int64_t n, std::int64_t exact_limit = 4096);

// A rigorous lower bound of m_N as a double: the exact value rounded down
// when N <= exact_limit, else v_k at k = floor((N+1)/2) from log-gamma with
// directed rounding (MPFR).
double max_mean_abs_deviation_lower(std::int64_t n, std::int64_t exact_limit = 4096);

}  // namespace ctmc::proofs_check
