// Stationary distribution and stationary spike flux of a Model at an input H
// (DESIGN.md sections 4-5).
//
// F(H) = sum over spike transitions i -> j of pi_i(H) r_ij(H), pi Q = 0,
// pi 1 = 1. Rates are evaluated exactly at the rational H and rounded once
// into T. The chain's structure (which rates are > 0) is decided exactly, so
// reducibility is found in the rationals: the solver restricts to the unique
// closed communicating class (pi = 0 outside it); several closed classes are an
// InputError naming them.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "ctmc/solvers/dense_matrix.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/scalar.hpp"

namespace ctmc::solvers {

// Adjacency of positive rates: out[i] lists j with r_ij > 0.
using Graph = std::vector<std::vector<std::size_t>>;
Graph rate_graph(const Model& m, const std::vector<Rational>& rates);

// Strongly connected components (Tarjan, iterative): the component of each
// vertex, numbered in the order they complete, so every component that a
// component reaches has a smaller number; `count` receives how many there are.
std::vector<std::size_t> strongly_connected_components(const Graph& g, std::size_t& count);

// Closed communicating classes (strongly connected components with no edge
// leaving them), each sorted, in order of their smallest state.
std::vector<std::vector<std::size_t>> closed_classes(const Graph& g);

// Which stationary solver to use. Auto: dense GTH for small chains (at most
// kDenseGthLimit states in the closed class), sparse GTH with a fill-reducing
// order for large ones.
enum class Method { Auto, Dense, Sparse };
inline constexpr std::size_t kDenseGthLimit = 48;

template <class T>
struct Stationary {
  std::vector<T> pi;             // over all states (0 outside the closed class)
  T flux;                        // stationary spike flux
  std::vector<std::size_t> support;  // the closed class solved on
};

// Solves at H; `source` names the model in error messages.
template <class T>
Stationary<T> solve_stationary(const Model& m, const Rational& H, Method method = Method::Auto,
                               const std::string& source = "model");

extern template Stationary<double> solve_stationary(const Model&, const Rational&, Method, const std::string&);
extern template Stationary<Mpfr> solve_stationary(const Model&, const Rational&, Method, const std::string&);
extern template Stationary<Rational> solve_stationary(const Model&, const Rational&, Method, const std::string&);
extern template Stationary<Interval> solve_stationary(const Model&, const Rational&, Method, const std::string&);

}  // namespace ctmc::solvers
