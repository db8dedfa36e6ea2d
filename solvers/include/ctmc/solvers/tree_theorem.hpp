// Symbolic stationary distribution by the Markov chain tree theorem
// (Freidlin-Wentzell; Leighton-Rivest 1986), DESIGN.md section 5.
//
// For an irreducible CTMC with off-diagonal rates q_ij, pi_i is proportional
// to the tree sum
//     w_i = sum over spanning trees T directed into i of prod_{(k->l) in T} q_kl,
// so pi_i = w_i / sum_j w_j, and the stationary spike flux is
//     F = sum_{spike i->j} q_ij w_i / sum_j w_j     (DESIGN.md section 4).
// With symbolic rates the w_i are polynomials, so F is a rational function
// num/den given exactly; it proves a closed form when
// num_cf * den == num * den_cf as polynomials (cross-multiplication, no
// division needed). The paper's three-state chain gives w_B = d(b+c),
// w_G = a d, w_R = a c and F = a c d / (d(a+b+c) + a c) (paper eq. 2).
//
// Enumeration: every non-root state picks one outgoing edge, assignments that
// close a cycle are rejected as soon as they are made. The number of trees
// grows like n^(n-2), so chains are limited to kTreeTheoremMaxStates states;
// larger chains throw InputError.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/polynomial.hpp"

namespace ctmc::solvers {

constexpr std::size_t kTreeTheoremMaxStates = 7;

// A transition with a symbolic rate (any polynomial, e.g. gamma*(N-i)*u).
struct SymbolicTransition {
  std::size_t from = 0, to = 0;
  Polynomial rate;
  bool spike = false;
};

struct TreeTheoremResult {
  std::vector<Polynomial> tree_sums;  // w_i, the unnormalized stationary numerators
  Polynomial flux_num, flux_den;      // F = flux_num / flux_den, flux_den = sum_i w_i
  std::size_t trees = 0;              // spanning in-trees found, over all roots
};

// Applies the theorem to a chain of n states. Parallel transitions with the
// same ends are summed. Throws InputError (message starting with `source`)
// for n > kTreeTheoremMaxStates, an endpoint out of range, a self-loop, or
// when no spanning tree exists (den = 0: the chain is reducible for every
// value of the symbols).
TreeTheoremResult tree_theorem(std::size_t n, const std::vector<SymbolicTransition>& transitions,
                               const std::string& source = "tree theorem");

// One rate symbol of a model and what it stands for.
struct RateSymbol {
  std::size_t transition = 0;  // index into Model::transitions
  std::string name, latex;     // e.g. "r_B_G", "r_{B,G}"; "a" for the three-state family
  std::string rate_text;       // "max(0, 1/2 + 3*H)" (or "2" for a constant rate)
};

// A model's transitions with one symbol per transition. Families two-state
// and three-state (meta.family) use the paper's names a, b, c, d when the
// model has exactly the family's states and transitions (matched by from, to
// and spike, in any order); every other model uses r_<from>_<to> with the
// state names reduced to [A-Za-z0-9].
// Transitions whose rate is identically zero (slope 0, offset 0) get no
// symbol and are left out.
struct SymbolicModel {
  std::size_t states = 0;
  std::vector<SymbolicTransition> transitions;
  std::vector<RateSymbol> legend;
};
SymbolicModel symbolic_model(const Model& m);

// The stationary flux of a model as a formula in its rate symbols.
struct FluxFormula {
  SymbolicModel symbols;
  TreeTheoremResult tree;
  // "F = (num) / (den)", with the monomial and constant factors common to
  // num and den cancelled (cancel_content).
  std::string text;
  std::string latex;  // "F = \frac{num}{den}"
};
FluxFormula flux_formula(const Model& m, const std::string& source);

}  // namespace ctmc::solvers
