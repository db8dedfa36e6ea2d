// Sparse multivariate polynomials with exact rational (GMP) coefficients, in
// named variables: the symbolic side of the Markov chain tree theorem
// (tree_theorem.hpp, DESIGN.md section 5). No CAS dependency: only what the
// tree theorem and the closed-form identities need, namely +, -, *, ==,
// substitution of a variable by a polynomial, evaluation, and printing as
// plain text and LaTeX.
//
// Representation: a map from monomials to nonzero coefficients. A monomial is
// a vector of (variable index, exponent >= 1) pairs sorted by variable index,
// so equal polynomials have equal maps (== is structural and exact). Terms are
// kept in graded lexicographic order (higher total degree first, then the
// variable created first is the largest), which is also the printing order.
//
// Variables are interned by name in a process-wide table (thread-safe); the
// index order is creation order, so create a family's symbols in the order
// they should print (a, b, c, d). Each variable also has a LaTeX spelling.
//
// Polynomial is constructible from int, so the templated closed forms of
// families.hpp (which use T(0), T(1), +, -, *) instantiate with
// T = Polynomial.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ctmc/solvers/scalar.hpp"

namespace ctmc::solvers {

// A product of variables: (variable index, exponent) sorted by index.
using Monomial = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

// Graded lexicographic order, "greater" monomials first: the order terms are
// stored and printed in.
struct MonomialOrder {
  bool operator()(const Monomial& x, const Monomial& y) const;
};

// Interns a variable: the same name always gives the same index. `latex` is
// its LaTeX spelling (default: derived from the name, e.g. "kappa_0" ->
// "\kappa_{0}", "r_B_G" -> "r_{B,G}"); the first registration fixes it.
std::uint32_t variable_index(const std::string& name, const std::string& latex = "");
std::string variable_name(std::uint32_t index);
std::string variable_latex(std::uint32_t index);
// The default LaTeX spelling of a variable name (Greek letter names become
// commands, the part after the first '_' becomes a subscript).
std::string default_latex_name(const std::string& name);

class Polynomial {
 public:
  using Terms = std::map<Monomial, Rational, MonomialOrder>;

  Polynomial() = default;
  Polynomial(int c);  // NOLINT: implicit, so that T(1) - u works for T = Polynomial
  explicit Polynomial(const Rational& c);
  // The polynomial x for the variable `name` (interned).
  static Polynomial variable(const std::string& name, const std::string& latex = "");
  static Polynomial variable(std::uint32_t index);

  const Terms& terms() const { return terms_; }
  bool is_zero() const { return terms_.empty(); }
  std::size_t size() const { return terms_.size(); }
  // Largest total degree (0 for constants and for the zero polynomial).
  std::uint32_t degree() const;
  // Indices of the variables that occur, ascending.
  std::vector<std::uint32_t> variables() const;

  Polynomial& operator+=(const Polynomial& o);
  Polynomial& operator-=(const Polynomial& o);
  Polynomial& operator*=(const Polynomial& o);
  Polynomial operator-() const;
  friend Polynomial operator+(Polynomial a, const Polynomial& b) { return a += b; }
  friend Polynomial operator-(Polynomial a, const Polynomial& b) { return a -= b; }
  friend Polynomial operator*(const Polynomial& a, const Polynomial& b);
  friend bool operator==(const Polynomial& a, const Polynomial& b) { return a.terms_ == b.terms_; }
  friend bool operator!=(const Polynomial& a, const Polynomial& b) { return !(a == b); }

  // This polynomial with every occurrence of variable `var` replaced by `by`.
  Polynomial substitute(std::uint32_t var, const Polynomial& by) const;
  Polynomial substitute(const std::string& name, const Polynomial& by) const;
  // Exact value at the point given by value(var index); value is called only
  // for variables that occur.
  Rational evaluate(const std::function<Rational(std::uint32_t)>& value) const;

  // The largest monomial dividing every term and the rational content (gcd
  // of the coefficients' numerators over the lcm of their denominators);
  // (1, 0) for the zero polynomial.
  std::pair<Monomial, Rational> content() const;
  // Exact division by c * m; throws std::invalid_argument when m does not
  // divide every term or c = 0.
  Polynomial divide_exact(const Monomial& m, const Rational& c) const;

  // "3/2*a^2*b - c + 1"; "0" for the zero polynomial. Variables print sorted
  // by name (digit runs numerically), terms by degree then lexicographically.
  std::string to_text() const;
  // "\frac{3}{2} a^{2} b - c + 1".
  std::string to_latex() const;

 private:
  void add_term(const Monomial& m, const Rational& c);
  Terms terms_;
};

Polynomial pow(const Polynomial& p, std::uint32_t e);

// Divides num and den by their common monomial factor and rational content
// (the fraction's value is unchanged), choosing the sign that gives den more
// positive than negative terms. A display simplification, not a full gcd.
void cancel_content(Polynomial& num, Polynomial& den);

// num / den as text "(num) / (den)" (parentheses only where needed) and as
// LaTeX "\frac{num}{den}".
std::string fraction_text(const Polynomial& num, const Polynomial& den);
std::string fraction_latex(const Polynomial& num, const Polynomial& den);

}  // namespace ctmc::solvers
