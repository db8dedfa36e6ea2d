#include "ctmc/solvers/polynomial.hpp"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/latex_text.hpp"

#include <stdexcept>

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
  if (s.size() > 1) return "\\mathrm{" + latex_text(s) + "}";
  return latex_text(s);
}

}  // namespace

std::string latex_text(const std::string& text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '\\': out += "\\backslash{}"; break;
      case '{': out += "\\{"; break;
      case '}': out += "\\}"; break;
      case '$': out += "\\$"; break;
      case '&': out += "\\&"; break;
      case '#': out += "\\#"; break;
      case '%': out += "\\%"; break;
      case '_': out += "\\_"; break;
      case '^': out += "\\hat{}"; break;
      case '~': out += "\\sim{}"; break;
      case ' ': out += "\\ "; break;
      default:
        if (c < 0x20 || c == 0x7f) out += std::string("\\backslash{}x") + kHex[c >> 4] + kHex[c & 15];
        else out += ch;
    }
  }
  return out;
}

std::string default_latex_name(const std::string& name) {
  const auto us = name.find('_');
  if (us == std::string::npos) return latex_base(name);
  // The subscript: the name's parts after the first '_', comma-separated.
  std::string sub;
  for (std::size_t b = us + 1;;) {
    const auto e = name.find('_', b);
    sub += latex_text(name.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    sub += ',';
    b = e + 1;
  }
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

// Natural order of names: digit runs compare as numbers, so kappa_2 < kappa_10.
bool natural_less(const std::string& x, const std::string& y) {
  std::size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    const bool dx = std::isdigit(static_cast<unsigned char>(x[i])), dy = std::isdigit(static_cast<unsigned char>(y[j]));
    if (dx && dy) {
      std::size_t i2 = i, j2 = j;
      while (i2 < x.size() && std::isdigit(static_cast<unsigned char>(x[i2]))) ++i2;
      while (j2 < y.size() && std::isdigit(static_cast<unsigned char>(y[j2]))) ++j2;
      const std::string a = x.substr(i, i2 - i), b = y.substr(j, j2 - j);
      if (a.size() != b.size()) return a.size() < b.size();
      if (a != b) return a < b;
      i = i2;
      j = j2;
    } else {
      if (x[i] != y[j]) return x[i] < y[j];
      ++i;
      ++j;
    }
  }
  return x.size() - i < y.size() - j;
}

// Prints terms in graded lexicographic order of the variables sorted by name
// (not by creation order, which depends on what else the process built), so
// the same polynomial always prints the same way.
template <class Coef, class Var>
std::string print_terms(const Polynomial::Terms& terms, const std::string& times, Coef coef_text, Var var_text) {
  if (terms.empty()) return "0";
  std::vector<std::uint32_t> vars;
  for (const auto& [m, c] : terms)
    for (const auto& ve : m) vars.push_back(ve.first);
  std::sort(vars.begin(), vars.end());
  vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
  std::vector<std::string> names;
  for (auto v : vars) names.push_back(variable_name(v));
  std::vector<std::size_t> by_name(vars.size());
  for (std::size_t k = 0; k < by_name.size(); ++k) by_name[k] = k;
  std::sort(by_name.begin(), by_name.end(),
            [&](std::size_t x, std::size_t y) { return natural_less(names[x], names[y]); });
  std::vector<std::uint32_t> rank_of(vars.empty() ? 0 : vars.back() + 1, 0);
  for (std::size_t r = 0; r < by_name.size(); ++r) rank_of[vars[by_name[r]]] = static_cast<std::uint32_t>(r);

  // Each term re-keyed by display rank, then ordered like MonomialOrder.
  std::vector<std::pair<Monomial, const Rational*>> shown;
  for (const auto& [m, c] : terms) {
    Monomial d;
    for (const auto& [v, e] : m) d.emplace_back(rank_of[v], e);
    std::sort(d.begin(), d.end());
    shown.emplace_back(std::move(d), &c);
  }
  std::sort(shown.begin(), shown.end(), [](const auto& x, const auto& y) { return MonomialOrder()(x.first, y.first); });

  std::string out;
  bool first = true;
  for (const auto& [m, cp] : shown) {
    const Rational& c = *cp;
    const bool negative = c < 0;
    const Rational mag = negative ? Rational(-c) : c;
    if (first) out += negative ? "-" : "";
    else out += negative ? " - " : " + ";
    first = false;
    std::string body;
    if (m.empty() || mag != 1) body = coef_text(mag);
    for (const auto& [r, e] : m) {
      if (!body.empty()) body += times;
      body += var_text(vars[by_name[r]], e);
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

std::pair<Monomial, Rational> Polynomial::content() const {
  if (terms_.empty()) return {Monomial{}, Rational(0)};
  // Monomial gcd: for each variable, the smallest exponent over all terms.
  Monomial g = terms_.begin()->first;
  for (const auto& [m, c] : terms_) {
    Monomial next;
    std::size_t j = 0;
    for (const auto& [v, e] : g) {
      while (j < m.size() && m[j].first < v) ++j;
      if (j < m.size() && m[j].first == v) next.emplace_back(v, std::min(e, m[j].second));
    }
    g = std::move(next);
  }
  // Rational content: gcd of the numerators over lcm of the denominators.
  Integer num = 0, den = 1;
  for (const auto& [m, c] : terms_) {
    num = gcd(num, Integer(bmp::numerator(c)));
    den = lcm(den, Integer(bmp::denominator(c)));
  }
  return {g, Rational(num, den)};
}

Polynomial Polynomial::divide_exact(const Monomial& m, const Rational& c) const {
  if (c == 0) throw std::invalid_argument("Polynomial::divide_exact: division by zero");
  Polynomial r;
  for (const auto& [t, coef] : terms_) {
    Monomial q;
    std::size_t j = 0;
    for (const auto& [v, e] : t) {
      if (j < m.size() && m[j].first < v) throw std::invalid_argument("Polynomial::divide_exact: monomial does not divide");
      std::uint32_t sub = 0;
      if (j < m.size() && m[j].first == v) sub = m[j++].second;
      if (sub > e) throw std::invalid_argument("Polynomial::divide_exact: monomial does not divide");
      if (e > sub) q.emplace_back(v, e - sub);
    }
    if (j != m.size()) throw std::invalid_argument("Polynomial::divide_exact: monomial does not divide");
    r.terms_.emplace(std::move(q), coef / c);
  }
  return r;
}

void cancel_content(Polynomial& num, Polynomial& den) {
  if (den.is_zero()) return;
  auto [mn, cn] = num.content();
  auto [md, cd] = den.content();
  Monomial g;
  if (!num.is_zero()) {
    std::size_t j = 0;
    for (const auto& [v, e] : md) {
      while (j < mn.size() && mn[j].first < v) ++j;
      if (j < mn.size() && mn[j].first == v) g.emplace_back(v, std::min(e, mn[j].second));
    }
  } else {
    g = md;
  }
  Rational c = cd;
  if (!num.is_zero()) {
    c = Rational(gcd(Integer(bmp::numerator(cn)), Integer(bmp::numerator(cd))),
                 lcm(Integer(bmp::denominator(cn)), Integer(bmp::denominator(cd))));
  }
  // Sign for readability: the denominator gets more positive than negative
  // terms (ties: its leading stored coefficient positive).
  std::size_t negative = 0;
  for (const auto& [m, coef] : den.terms()) negative += coef < 0;
  const std::size_t positive = den.size() - negative;
  if (negative > positive || (negative == positive && den.terms().begin()->second < 0)) c = -c;
  num = num.divide_exact(g, c);
  den = den.divide_exact(g, c);
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
