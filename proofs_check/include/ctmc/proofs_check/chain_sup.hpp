// Certified sup error of any CTMC neuron against its target over a whole
// interval: sup over H in [lo, hi] of |nu_theta(H) - alpha phi(H)|,
// where the fit tables otherwise only look at their 401 grid points.
//
// Enclosure of the flux over a cell X = [x0, x1]. By the Markov chain tree
// theorem (solvers/tree_theorem.hpp) F = N / D with
//   D = sum_i w_i,  N = sum over spike transitions i -> j of r_ij w_i,
// w_i the sum over spanning in-trees into i of the product of their rates:
// polynomials with nonnegative coefficients in the rates, hence nondecreasing
// in each rate. Every rate max(0, p + s H) takes its extremes over X at the
// cell's ends, so with r_lo, r_hi the componentwise extremes,
//   N(r_lo) / D(r_hi) <= F(H) <= N(r_hi) / D(r_lo)   for all H in X,
// which converges to the flux as the cell shrinks (first order). The tree
// sums are computed in double with Higham's a-priori bound for sums and
// products of nonnegative numbers (relative error at most gamma_K, K the
// number of operations in the longest chain), applied once at the end.
// The target is enclosed with the activations' MPFI enclosures
// (activations/activation_interval.hpp), so the cell bound is rigorous.
//
// Branch and bound: cells are bisected in order of their upper bound; point
// values (exact-enclosure evaluations at cell ends and midpoints inside
// [lo, hi]) give the proven lower bound. It stops once the largest cell
// bound is within rel_tol of the best point value (or abs_tol above it), so
// lower <= sup <= upper <= lower (1 + rel_tol) + abs_tol.
//
// Limits: the enumeration of trees grows like n^(n-2); chains up to
// kTreeTheoremMaxStates (7) states, every fit family of the toolkit. The
// Bernstein chains have their own certified sup (bernstein.hpp).
#pragma once
#include <cstdint>
#include <string>

#include "ctmc/activations/activation.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/scalar.hpp"

namespace ctmc::proofs_check {

struct ChainSupOptions {
  double rel_tol = 0.01;     // the enclosure is tight to 1%
  // Absolute slack, as a multiple of max |alpha phi| on the points: fits at the
  // rounding floor (errors ~1e-13) cannot be enclosed to 1% in double.
  double abs_tol_scale = 1e-10;
  std::size_t initial_cells = 400;
  std::int64_t max_cells = 300000;  // budget; converged = false when it runs out
  unsigned precision = 128;          // MPFI bits of the target's enclosures
  // Stop as soon as upper <= stop_below (> 0): enough to show the sup is
  // below a tolerance (converged is then true).
  double stop_below = 0;
  // The centred (second-order) cell bound (off: the monotone bound alone,
  // the benchmark's baseline).
  bool centred = true;
};

struct ChainSupResult {
  double lower = 0;     // proven: sup >= lower (a point value, at argmax)
  double upper = 0;     // proven: sup <= upper
  double argmax = 0;
  std::int64_t cells = 0;        // cells bounded
  std::int64_t evaluations = 0;  // point values
  bool converged = false;
};

// Throws InputError (message starting with `source`) for an empty domain,
// a chain of more than 7 states, a table activation that does not cover
// [lo, hi], a rate above 1e35 on the domain, or a chain without a unique
// closed class somewhere on the domain.
ChainSupResult certified_chain_sup(const solvers::Model& model, const activations::Activation& act,
                                   const solvers::Rational& alpha, const solvers::Rational& lo,
                                   const solvers::Rational& hi, const ChainSupOptions& opt = {},
                                   const std::string& source = "model");

}  // namespace ctmc::proofs_check
