// The claims of the paper's Appendix B, checked (DESIGN.md section 6):
//   claim 1  the Bernstein chain's stationary flux, solved from its generator,
//            equals rho M_N / (rho + M_N)   (eq. B.bernrate);
//   claim 2  sup |F_N - psi| -> 0: the smallest N with sup error < eps;
//   claim 3  corollary: sup |F_N - psi| <= L_h / (2 sqrt N);
//   sharper  sup |F_N - psi| <= (L_h / 2) m_N,  m_N = max_u E|K/N - u|;
//   Voronovskaya: N (B_N h - h)(u) -> u (1-u) h''(u) / 2 for smooth h.
// Each verdict is Proved / Refuted / Unknown with the bound that decided it
// (a numeric agreement that is not a proof is Unknown, never Proved).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ctmc/proofs_check/bernstein.hpp"
#include "ctmc/proofs_check/flux_identities.hpp"  // Verdict, shared by the module's checks

namespace ctmc::proofs_check {

std::string verdict_name(Verdict v);  // "Proved" / "Refuted" / "Unknown"

struct Claim {
  std::string id, statement;
  Verdict verdict = Verdict::Unknown;
  std::string decided_by;  // the bound or argument that decided it
};

// Claim 1 for every N >= 1, every i and every kappa >= 0, rho > 0, gamma > 0,
// 0 < u < 1, symbolically: the product-form law pi(A_i) = c b_i(u),
// pi(R_i) = c b_i(u) kappa_i / rho is checked against the global balance
// equation of every state (interior A_i, A_0, A_N, R_i) as exact polynomial
// identities in the symbols N, i, u, gamma, rho, kappa_{i-1,i,i+1}, after
// b_{i+-1} = b_i times the binomial ratios; the ratio lemma
// C(N,i+1)(i+1) = C(N,i)(N-i) is checked in integers for N <= 300 and
// sum_i b_i = 1 as a polynomial identity in u for N <= 40. The chain is
// irreducible on the states it can reach for 0 < u < 1, so the stationary
// law is unique and the flux is sum_i pi(A_i) kappa_i = rho M / (rho + M).
Claim claim1_symbolic(std::vector<std::string>* identities = nullptr);

// Claim 1 numerically at inputs u (rational, in [0, 1]) for the chain with
// kappa_i = h(i/N) rounded to the working precision (exact rationals): exact
// rational GTH vs the exact formula for N <= exact_max_n (Proved or Refuted
// at that u), else MPFI sparse GTH vs an MPFI enclosure of the formula
// (Refuted when disjoint, else Unknown with the enclosures' gap bound: an
// enclosure cannot prove an equality). The exact path costs about 0.1 s for
// five inputs at N = 256, 0.8 s at N = 512, 5 s at N = 1024 and 6 minutes at
// N = 4096 (sigmoid on [-6, 6]), hence the default limit: `ctmc-snn bernstein`
// checks N = 64 by default, and a limit below 64 would leave claim 1 Unknown
// there.
struct Claim1Point {
  Rational u;
  std::string method;  // "exact rationals" or "MPFI"
  double flux = 0;     // midpoint
  double max_rel_gap = 0;  // max relative distance between the two enclosures (0 when exact and equal)
  Verdict verdict = Verdict::Unknown;
};
std::vector<Claim1Point> claim1_numeric(const BernsteinProblem& p, std::int64_t n, const std::vector<Rational>& us,
                                        std::int64_t exact_max_n = 256);

// The sup error at one N with the three bounds.
struct BoundsAtN {
  std::int64_t n = 0;
  SupResult sup;
  double m_n_lo = 0, m_n_hi = 0;          // m_N enclosure
  double paper_lo = 0, paper_hi = 0;      // L_h / (2 sqrt N), with L_h's enclosure
  double sharper_lo = 0, sharper_hi = 0;  // (L_h / 2) m_N
  double asymptotic = 0;                  // L_h / (2 sqrt(2 pi N)), midpoint (not a bound)
  Claim corollary, sharper;
};
BoundsAtN bounds_at(const BernsteinProblem& p, const LipschitzBound& lh, std::int64_t n, const SupOptions& opt,
                    Arithmetic arith = Arithmetic::DoubleErrorBound);

// Smallest N with certified sup error < eps (claim 2), bracketed.
// A sufficient N too large to represent (paper_n > 2^62, sharper_n > 2^53).
inline constexpr std::int64_t kNBeyondRange = -1;

struct EpsSearch {
  double eps = 0;
  std::int64_t n_lo = 0;   // largest tested N with a proven point error >= eps (0: none)
  std::int64_t n_hi = 0;   // an N with certified sup error < eps (0: none up to the cap)
  bool minimal = false;    // n_lo + 1 == n_hi
  bool capped = false;     // no N <= cap certified
  double lower_at_hi = 0, upper_at_hi = 0;   // sup bracket at n_hi
  double lower_at_cap = 0, upper_at_cap = 0; // when capped: point value and the sharper bound at the cap
  std::int64_t paper_n = 0;    // ceil((L_h / (2 eps))^2), L_h's upper bound; kNBeyondRange above 2^62
  std::int64_t sharper_n = 0;  // an N with (L_h/2) m_N < eps, found by binary search (m_N bound: exact to
                               // N = 4096, then a closed form that is looser, so the bound jumps up at 4097 and
                               // above that this is a sufficient N, not always the smallest); kNBeyondRange above 2^53
  std::int64_t tested = 0;
  std::string reasoning;
};
struct EpsSearchOptions {
  std::int64_t cap = 1000000;
  std::int64_t certify_max_evals = 20000;
  // Stop bisecting once n_hi - n_lo <= max(1, rel_stop * n_hi); 0: to the end.
  double rel_stop = 0;
  Arithmetic arithmetic = Arithmetic::DoubleErrorBound;
};
EpsSearch smallest_n(const BernsteinProblem& p, const LipschitzBound& lh, double eps,
                     const EpsSearchOptions& opt = {});

// Voronovskaya: N (B_N h - h)(u) (an MPFI enclosure, midpoint shown) against
// u (1-u) h''(u) / 2.
struct VoronovskayaRow {
  std::int64_t n = 0;
  double u = 0, scaled = 0, limit = 0, rel_diff = 0;
};
std::vector<VoronovskayaRow> voronovskaya(const BernsteinProblem& p, double u, const std::vector<std::int64_t>& ns);

nlohmann::ordered_json to_json(const Claim& c);

}  // namespace ctmc::proofs_check
