// bernstein --activation NAME --domain LO,HI [--rho R | --rho-factor F]
//           (--N N | --eps E) [--precision BITS] [--cap N] [--bracket R] [--json]:
// the paper's Appendix B theorem and corollary for one target
// (proofs_check/bernstein_claims.hpp).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ctmc/commands/document.hpp"
#include "ctmc/proofs_check/bernstein.hpp"
#include "ctmc/proofs_check/bernstein_claims.hpp"

namespace ctmc::commands {

struct BernsteinOptions {
  std::string activation, domain, rho, rho_factor, eps;
  std::optional<std::int64_t> n;
  unsigned precision = 128;
  std::int64_t cap = 1000000;
  double bracket = 0;
};

struct BernsteinResult {
  std::string activation, domain_lo, domain_hi, rho;  // exact text
  double rho_double = 0, max_phi = 0;
  unsigned precision_bits = 0;
  proofs_check::LipschitzBound lipschitz;  // L_h in u
  proofs_check::Claim claim1_symbolic;
  std::vector<std::string> identities;
  std::int64_t claim1_n = 0;  // the N of the numeric claim-1 points (none beyond 4096)
  std::vector<proofs_check::Claim1Point> claim1_numeric;
  std::optional<proofs_check::BoundsAtN> bounds;  // with --N
  // With --eps: the search for the smallest N, claim 2, and whether the
  // corollary's sufficient N was found not to be sufficient.
  std::optional<proofs_check::EpsSearch> eps_search;
  double eps = 0;
  std::int64_t cap = 0;
  proofs_check::Claim claim2;
  bool paper_sufficient_n_refuted = false;
  // For a smooth activation: N (B_N h - h) against its limit.
  std::optional<std::vector<proofs_check::VoronovskayaRow>> voronovskaya;
  int refuted = 0;  // the claims found false (the CLI then exits 1)
};

BernsteinResult run_bernstein(const BernsteinOptions& o);
void write(DocumentWriter& w, const BernsteinResult& r);
nlohmann::ordered_json to_json(const BernsteinResult& r);

}  // namespace ctmc::commands
