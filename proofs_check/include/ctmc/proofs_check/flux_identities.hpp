// Checks of the closed-form stationary-flux identities (paper eq. 2 for the
// three-state neuron, eq. bernrate F_N = rho M_N / (rho + M_N) for the
// Bernstein chain, and the two-state / full-three-state forms of
// DESIGN.md section 4) against the flux of the generator itself.
//
// For each family case the closed form (families.hpp) is compared with the
// chain built by the family's model builder, in four independent ways:
//  1. symbolic proof (chains of <= 7 states): the Markov chain tree theorem
//     gives the generator's flux as num_t / den_t in the rate symbols; the
//     identity holds as rational functions iff
//         num_cf * den_t == num_t * den_cf
//     as polynomials (for Bernstein in u, gamma, kappa_0..kappa_N, rho after
//     writing the rates as gamma (N-i) u and gamma i (1-u)). Proved/Refuted.
//  2. exact: at random rational rate points (varied magnitudes), rational GTH
//     on the model must equal the closed form in the rationals.
//  3. MPFR at p bits (256 and 1024 by default) over stiff grids (rates
//     1e-12 .. 1e12) and random points: relative error of the MPFR GTH flux
//     against the EXACT rational closed form at the same rational rates must
//     be <= 2^-(p-8). Interval (MPFI) GTH at the first precision must enclose
//     the exact value at every point.
//  4. double: GTH and dense partial-pivoting LU (Eigen) on the stiff points,
//     correct digits of each (shown, not a pass criterion: LU is expected to
//     lose digits there, which is the point of showing it).
//
// The rates reach the solvers through the model's rectified affine rates:
// each rate value r is written as offset + slope * H with a random slope and
// offset = r - slope * H (exactly), so the full model pipeline is exercised
// while both sides still see the same rational rate values.
//
// Randomness: every point has its own std::mt19937_64 stream seeded by
// point_seed from (seed, case name / check kind, point index), so results do
// not depend on the order or thread count in which points are checked.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ctmc/solvers/families.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/polynomial.hpp"
#include "ctmc/solvers/scalar.hpp"
#include "ctmc/solvers/tree_theorem.hpp"

namespace ctmc::proofs_check {

using solvers::Fraction;
using solvers::Model;
using solvers::Polynomial;
using solvers::Rational;

enum class FluxFamily { TwoState, ThreeState, FullThreeState, Bernstein };

// How a point's parameters are drawn: Random = rational rates with varied
// magnitudes (mantissa p/q times 10^k, |k| <= 3); Stiff = log-uniform
// magnitudes spanning 1e-12 .. 1e12.
enum class PointKind { Random, Stiff };

// The model a parameter point describes, and the input at which its rates
// equal the parameters' rates.
struct FamilyInstance {
  Model model;
  Rational H;
};

// One family (for Bernstein: one N) with everything the checks need. The
// closed forms are std::functions so that a test can substitute a wrong one
// and watch it being refuted.
struct FamilyCase {
  FluxFamily family = FluxFamily::ThreeState;
  std::size_t N = 0;                 // Bernstein degree (0 otherwise)
  std::string name;                  // "three-state", "bernstein(N=4)"
  std::size_t states = 0;
  std::vector<std::string> symbols;  // parameter names, e.g. a, b, c, d or u, gamma, kappa_0.., rho
  std::string closed_form_text, closed_form_latex;  // the closed form as the family writes it
  std::string paper_formula_latex;   // the paper's published formula (empty: none)
  std::string paper_reference;       // e.g. "paper eq. (2)"

  std::function<Fraction<Rational>(const std::vector<Rational>&)> closed_form;
  std::function<Fraction<Polynomial>(const std::vector<Polynomial>&)> closed_form_symbolic;
  // Parameters of one point; `rng` is the point's own stream.
  std::function<std::vector<Rational>(std::mt19937_64& rng, PointKind kind)> sample;
  // Deterministic stiff grid (all corners of the magnitudes 1e-12, 1, 1e12 or
  // the family's analogue); `rng` fills parameters the grid does not fix.
  std::function<std::vector<std::vector<Rational>>(std::mt19937_64& rng)> stiff_grid;
  // The family's model at the parameters (through the family's builder).
  std::function<FamilyInstance(const std::vector<Rational>&, std::mt19937_64& rng)> build;
  // The rate of transition k of a built model as a polynomial in the symbols.
  std::function<Polynomial(const Model&, std::size_t k, const std::vector<Polynomial>& symbols)> symbolic_rate;
};

FamilyCase family_case(FluxFamily family, std::size_t N = 0);
// two-state, three-state, full-three-state, then bernstein(N) for each N.
std::vector<FamilyCase> standard_cases(const std::vector<std::size_t>& bernstein_N = {1, 2, 4, 8, 16, 32, 64});

struct FluxCheckOptions {
  std::uint64_t seed = 1;
  std::size_t rational_points = 1000;  // random points checked exactly
  std::size_t mpfr_random_points = 100;  // random points also checked in MPFR/MPFI
  std::size_t stiff_random_points = 100;  // random stiff points added to the stiff grid
  std::vector<unsigned> precisions = {256, 1024};  // MPFR; MPFI at the first one
  int threads = 0;                     // OpenMP threads for the exact check (0: all)
};

// Result of one scalar type over one set of points.
struct ScalarCheck {
  std::string scalar;        // "rational", "mpfr-256", "mpfi-256", "double-gth", "double-lu"
  std::string points_kind;   // "random", "stiff+random", "stiff"
  std::size_t points = 0;
  std::size_t failures = 0;  // points that violated the requirement
  double max_rel_error = 0;  // max |x - exact| / |exact| (for intervals: max relative width)
  double min_correct_bits = 0, min_correct_digits = 0;
  double mean_correct_digits = 0;  // average over the points (for the double comparison)
  double tolerance = 0;      // required bound on the relative error (0: exact)
  bool informational = false;  // shown only, never fails the case
  std::string worst;         // the parameters of the worst point
  bool passed() const { return informational || failures == 0; }
};

enum class Verdict { Proved, Refuted, Unknown };
std::string to_string(Verdict v);

struct SymbolicCheck {
  Verdict verdict = Verdict::Unknown;
  std::string reason;  // why Unknown (too many states), or what was compared
  std::string derived_text, derived_latex;  // tree-theorem flux of the generator
  std::size_t trees = 0;
};

struct FluxCheckResult {
  std::string name;
  std::size_t states = 0;
  SymbolicCheck symbolic;
  std::vector<ScalarCheck> scalars;
  bool passed() const;  // symbolic not refuted and every non-informational scalar check held
};

SymbolicCheck check_symbolic(const FamilyCase& c);
FluxCheckResult check_family(const FamilyCase& c, const FluxCheckOptions& options);

// The seed of one point's stream: named_stream_seed(seed, tag, index)
// (ctmc/core/seeding.hpp), the tag naming the purpose ("case/kind").
std::uint64_t point_seed(std::uint64_t seed, const std::string& tag, std::uint64_t index);

}  // namespace ctmc::proofs_check
