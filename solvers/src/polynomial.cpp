#include "ctmc/solvers/polynomial.hpp"

#include <algorithm>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "ctmc/solvers/errors.hpp"

namespace ctmc::solvers {

// ---------------------------------------------------------------- variables

namespace {

struct VariableTable {
  std::mutex mutex;
  std::unordered_map<std::string, std::uint32_t> index;
  std::vector<std::string> names, latex;
};

VariableTable& table() {
  static VariableTable t;
  return t;
}

const char* const kGreek[] = {"alpha", "beta",  "gamma", "delta", "epsilon", "zeta", "eta",   "theta",
                              "iota",  "kappa", "lambda", "mu",   "nu",      "xi",   "pi",    "rho",
                              "sigma", "tau",   "upsilon", "phi", "chi",     "psi",  "omega", "Gamma",
                              "Delta", "Theta", "Lambda", "Xi",   "Pi",      "Sigma", "Phi",  "Psi", "Omega"};

std::string latex_base(const std::string& s) {
  for (const char* g : kGreek)
    if (s == g) return std::string("\\") + g;
  if (s.size() > 1) return "\\mathrm{" + s + "}";
  return s;
}

}  // namespace

std::string default_latex_name(const std::string& name) {
  const auto us = name.find('_');
  if (us == std::string::npos) return latex_base(name);
  std::string sub = name.substr(us + 1);
  std::replace(sub.begin(), sub.end(), '_', ',');
  return latex_base(name.substr(0, us)) + "_{" + sub + "}";
}

std::uint32_t variable_index(const std::string& name, const std::string& latex) {
  if (name.empty()) throw InputError("polynomial: empty variable name");
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.index.find(name);
  if (it != t.index.end()) return it->second;
  const auto i = static_cast<std::uint32_t>(t.names.size());
  t.index.emplace(name, i);
  t.names.push_back(name);
  t.latex.push_back(latex.empty() ? default_latex_name(name) : latex);
  return i;
}

std::string variable_name(std::uint32_t index) {
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  return t.names.at(index);
}

std::string variable_latex(std::uint32_t index) {
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  return t.latex.at(index);
}

// ---------------------------------------------------------------- monomials

namespace {

std::uint32_t total_degree(const Monomial& m) {
  std::uint32_t d = 0;
  for (const auto& [v, e] : m) d += e;
  return d;
}

// Product of two monomials: merge of two sorted lists, adding exponents.
Monomial multiply(const Monomial& x, const Monomial& y) {
  Monomial r;
  r.reserve(x.size() + y.size());
  std::size_t i = 0, j = 0;
  while (i < x.size() || j < y.size()) {
    if (j == y.size() || (i < x.size() && x[i].first < y[j].first)) {
      r.push_back(x[i++]);
    } else if (i == x.size() || y[j].first < x[i].first) {
      r.push_back(y[j++]);
    } else {
      r.emplace_back(x[i].first, x[i].second + y[j].second);
      ++i;
      ++j;
    }
  }
  return r;
}

}  // namespace

bool MonomialOrder::operator()(const Monomial& x, const Monomial& y) const {
  const auto dx = total_degree(x), dy = total_degree(y);
  if (dx != dy) return dx > dy;
  // Lexicographic with the first-created variable largest: at the first
  // difference, the monomial with the smaller variable index (or the larger
  // exponent of the same variable) is the greater one and comes first.
  const std::size_t n = std::min(x.size(), y.size());
  for (std::size_t k = 0; k < n; ++k) {
    if (x[k].first != y[k].first) return x[k].first < y[k].first;
    if (x[k].second != y[k].second) return x[k].second > y[k].second;
  }
  return x.size() > y.size();  // unreachable for equal degrees unless equal
}

// ---------------------------------------------------------------- polynomials

Polynomial::Polynomial(int c) {
  if (c != 0) terms_.emplace(Monomial{}, Rational(c));
}

Polynomial::Polynomial(const Rational& c) {
  if (c != 0) terms_.emplace(Monomial{}, c);
}

Polynomial Polynomial::variable(const std::string& name, const std::string& latex) {
  return variable(variable_index(name, latex));
}

Polynomial Polynomial::variable(std::uint32_t index) {
  Polynomial p;
  p.terms_.emplace(Monomial{{index, 1}}, Rational(1));
  return p;
}

std::uint32_t Polynomial::degree() const { return terms_.empty() ? 0 : total_degree(terms_.begin()->first); }

std::vector<std::uint32_t> Polynomial::variables() const {
  std::vector<std::uint32_t> vs;
  for (const auto& [m, c] : terms_)
    for (const auto& [v, e] : m) vs.push_back(v);
  std::sort(vs.begin(), vs.end());
  vs.erase(std::unique(vs.begin(), vs.end()), vs.end());
  return vs;
}

void Polynomial::add_term(const Monomial& m, const Rational& c) {
  if (c == 0) return;
  auto [it, inserted] = terms_.emplace(m, c);
  if (inserted) return;
  it->second += c;
  if (it->second == 0) terms_.erase(it);
}

Polynomial& Polynomial::operator+=(const Polynomial& o) {
  for (const auto& [m, c] : o.terms_) add_term(m, c);
  return *this;
}

Polynomial& Polynomial::operator-=(const Polynomial& o) {
  for (const auto& [m, c] : o.terms_) add_term(m, -c);
  return *this;
}

Polynomial Polynomial::operator-() const {
  Polynomial r(*this);
  for (auto& [m, c] : r.terms_) c = -c;
  return r;
}

Polynomial operator*(const Polynomial& a, const Polynomial& b) {
  Polynomial r;
  for (const auto& [ma, ca] : a.terms_)
    for (const auto& [mb, cb] : b.terms_) r.add_term(multiply(ma, mb), ca * cb);
  return r;
}

Polynomial& Polynomial::operator*=(const Polynomial& o) { return *this = *this * o; }

Polynomial pow(const Polynomial& p, std::uint32_t e) {
  Polynomial r(1), base(p);
  while (e > 0) {  // binary powering
    if (e & 1u) r *= base;
    e >>= 1;
    if (e > 0) base *= base;
  }
  return r;
}

Polynomial Polynomial::substitute(std::uint32_t var, const Polynomial& by) const {
  Polynomial r;
  std::vector<Polynomial> powers{Polynomial(1)};  // by^k, computed on demand
  for (const auto& [m, c] : terms_) {
    Monomial rest;
    std::uint32_t e = 0;
    for (const auto& ve : m) {
      if (ve.first == var) e = ve.second;
      else rest.push_back(ve);
    }
    if (e == 0) {
      r.add_term(m, c);
      continue;
    }
    while (powers.size() <= e) powers.push_back(powers.back() * by);
    Polynomial t;
    t.terms_.emplace(std::move(rest), c);
    r += t * powers[e];
  }
  return r;
}

Polynomial Polynomial::substitute(const std::string& name, const Polynomial& by) const {
  return substitute(variable_index(name), by);
}

Rational Polynomial::evaluate(const std::function<Rational(std::uint32_t)>& value) const {
  std::map<std::uint32_t, Rational> cache;
  Rational sum(0);
  for (const auto& [m, c] : terms_) {
    Rational t = c;
    for (const auto& [v, e] : m) {
      auto it = cache.find(v);
      if (it == cache.end()) it = cache.emplace(v, value(v)).first;
      for (std::uint32_t k = 0; k < e; ++k) t *= it->second;
    }
    sum += t;
  }
  return sum;
}

// ---------------------------------------------------------------- printing

namespace {

std::string rational_text(const Rational& q) {
  std::ostringstream os;
  os << q;  // "p/q" or "p"
  return os.str();
}

std::string rational_latex(const Rational& q) {
  const Integer num = bmp::numerator(q), den = bmp::denominator(q);
  if (den == 1) return num.str();
  return "\\frac{" + num.str() + "}{" + den.str() + "}";
}

template <class Coef, class Var>
std::string print_terms(const Polynomial::Terms& terms, const std::string& times, Coef coef_text, Var var_text) {
  if (terms.empty()) return "0";
  std::string out;
  bool first = true;
  for (const auto& [m, c] : terms) {
    const bool negative = c < 0;
    const Rational mag = negative ? Rational(-c) : c;
    if (first) out += negative ? "-" : "";
    else out += negative ? " - " : " + ";
    first = false;
    std::string body;
    if (m.empty() || mag != 1) body = coef_text(mag);
    for (const auto& [v, e] : m) {
      if (!body.empty()) body += times;
      body += var_text(v, e);
    }
    out += body;
  }
  return out;
}

}  // namespace

std::string Polynomial::to_text() const {
  return print_terms(
      terms_, "*", rational_text,
      [](std::uint32_t v, std::uint32_t e) { return variable_name(v) + (e > 1 ? "^" + std::to_string(e) : ""); });
}

std::string Polynomial::to_latex() const {
  return print_terms(terms_, " ", rational_latex, [](std::uint32_t v, std::uint32_t e) {
    std::string s = variable_latex(v);
    if (e > 1) s = (s.find('_') != std::string::npos ? "{" + s + "}" : s) + "^{" + std::to_string(e) + "}";
    return s;
  });
}

std::string fraction_text(const Polynomial& num, const Polynomial& den) {
  if (den == Polynomial(1)) return num.to_text();
  const std::string n = num.to_text(), d = den.to_text();
  // The numerator needs parentheses only for a sum; the denominator for any
  // product or quotient too, since "a / b*c" would read as (a/b)*c.
  const bool wrap_num = num.size() > 1;
  const bool wrap_den = den.size() > 1 || d.find_first_of("*/") != std::string::npos;
  return (wrap_num ? "(" + n + ")" : n) + " / " + (wrap_den ? "(" + d + ")" : d);
}

std::string fraction_latex(const Polynomial& num, const Polynomial& den) {
  if (den == Polynomial(1)) return num.to_latex();
  return "\\frac{" + num.to_latex() + "}{" + den.to_latex() + "}";
}

}  // namespace ctmc::solvers
