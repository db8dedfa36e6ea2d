// The study behind report "theorem" (paper Appendix B, the theorem and its
// corollary): computed here as typed results, which other code and tests can
// call; theorem_report.cpp writes the report from them.
//
// Six targets, each with rho = 2 max phi and rho = 1.1 max phi
// (proofs_check/bernstein_claims.hpp, DESIGN.md section 6):
//  - certified sup |F_N - psi| for N = 1, 2, 4, ..., 4096 next to the paper's
//    bound L_h/(2 sqrt N), the sharper (L_h/2) m_N and L_h/(2 sqrt(2 pi N));
//  - the smallest N for eps = 1e-2, 1e-3, 1e-4 against the paper's sufficient
//    N = ceil((L_h/(2 eps))^2) and the sharper bound's;
//  - claim 1 (symbolic for all N; exact rationals at N = 8);
//  - Voronovskaya's limit for the smooth targets.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ctmc/proofs_check/bernstein.hpp"
#include "ctmc/proofs_check/bernstein_claims.hpp"

namespace ctmc::reports {

// One target and rho factor.
struct TheoremCase {
  std::string label, activation, rho_factor;
  int lo = 0, hi = 0;
  double rho = 0, max_phi = 0;
  proofs_check::LipschitzBound lh;
  std::vector<proofs_check::BoundsAtN> rows;  // N = 2^0 .. 2^12
  std::vector<proofs_check::EpsSearch> eps;   // eps = 1e-2, 1e-3, 1e-4
  std::vector<std::pair<std::int64_t, std::vector<std::pair<double, double>>>> curves;  // N -> (I, F_N)
  std::vector<std::pair<double, double>> psi;                                          // (I, phi)
  double seconds = 0;
};

// Claim 1 numerically for one target: inputs proved of those tried.
struct Claim1Numeric {
  std::string activation;
  int proved = 0, tried = 0;
};

// Voronovskaya's limit for one smooth target (rho = 2 max phi).
struct VoronovskayaCase {
  std::string activation;
  std::vector<proofs_check::VoronovskayaRow> rows;
};

struct TheoremStudy {
  unsigned precision = 0;  // MPFI/MPFR bits used
  proofs_check::Claim claim1;
  std::vector<std::string> claim1_identities;
  std::vector<Claim1Numeric> claim1_numeric;  // exact rationals at N = 8
  std::vector<TheoremCase> cases;             // target-major, rho factors 2 then 1.1
  std::vector<VoronovskayaCase> voronovskaya;
};

// The study at `precision` bits (clamped to [128, 256]); the cases run on
// `threads` workers (0: all cores). Every number is independent of the
// thread count. Throws std::runtime_error naming the case that failed.
TheoremStudy compute_theorem_study(unsigned precision, int threads);

}  // namespace ctmc::reports
