// Sparse polynomials and the Markov chain tree theorem, checked against hand
// derivations (paper Appendix A), Cayley's formula, and exact rational GTH.
#include <doctest/doctest.h>

#include <cctype>
#include <random>
#include <string>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/solvers/gth.hpp"
#include "ctmc/solvers/latex_text.hpp"
#include "ctmc/solvers/polynomial.hpp"
#include "ctmc/solvers/stationary.hpp"
#include "ctmc/solvers/tree_theorem.hpp"

using namespace ctmc::solvers;
using P = Polynomial;

namespace {
P var(const char* name) { return P::variable(name); }
}  // namespace

TEST_CASE("polynomial ring identities hold exactly") {
  const P a = var("a"), b = var("b"), c = var("c");
  CHECK(pow(a + b, 2) == a * a + P(2) * a * b + b * b);
  CHECK((a + b) * (a - b) == a * a - b * b);
  CHECK((a - a).is_zero());
  CHECK(a * (b + c) == a * b + a * c);
  CHECK(P(0) == P());
  CHECK(P(Rational(3, 2)) * P(2) == P(3));
  CHECK(pow(a - b, 3).size() == 4);
  CHECK((a * b * b).degree() == 3);
  CHECK(a != b);
}

TEST_CASE("polynomial substitution and evaluation agree with direct rational arithmetic") {
  const P x = var("x"), y = var("y");
  const P p = P(3) * pow(x, 3) - x * y + P(Rational(1, 7));
  // x -> (1 - y): compare by evaluating both sides at several exact points.
  const P q = p.substitute("x", P(1) - y);
  for (int k = -3; k <= 3; ++k) {
    const Rational yv(k, 5);
    const Rational xv = 1 - yv;
    const Rational direct = 3 * xv * xv * xv - xv * yv + Rational(1, 7);
    CHECK(q.evaluate([&](std::uint32_t v) { return v == variable_index("y") ? yv : Rational(0); }) == direct);
  }
  CHECK(q.variables() == std::vector<std::uint32_t>{variable_index("y")});
}

TEST_CASE("polynomial printing is sorted and readable") {
  const P a = var("a"), b = var("b"), c = var("c"), d = var("d");
  const P den = d * (a + b + c) + a * c;
  CHECK(den.to_text() == "a*c + a*d + b*d + c*d");
  CHECK((a * c * d).to_text() == "a*c*d");
  CHECK(fraction_text(a * c * d, den) == "a*c*d / (a*c + a*d + b*d + c*d)");
  CHECK(fraction_latex(a * c * d, den) == "\\frac{a c d}{a c + a d + b d + c d}");
  CHECK((P(Rational(-3, 2)) * a * a + P(1)).to_text() == "-3/2*a^2 + 1");
  CHECK((P(Rational(-3, 2)) * a * a + P(1)).to_latex() == "-\\frac{3}{2} a^{2} + 1");
  CHECK(P::variable("kappa_0").to_latex() == "\\kappa_{0}");
  CHECK(P().to_text() == "0");
}

TEST_CASE("tree theorem reproduces the paper's three-state derivation (Appendix A)") {
  const P a = var("a"), b = var("b"), c = var("c"), d = var("d");
  // B=0, G=1, R=2; B->G a, G->B b, G->R c (spike), R->B d.
  const std::vector<SymbolicTransition> tr = {{0, 1, a, false}, {1, 0, b, false}, {1, 2, c, true}, {2, 0, d, false}};
  const auto r = tree_theorem(3, tr);
  // Hand derivation: pi_B a = pi_G (b+c), pi_G c = pi_R d.
  CHECK(r.tree_sums[0] == d * (b + c));
  CHECK(r.tree_sums[1] == a * d);
  CHECK(r.tree_sums[2] == a * c);
  CHECK(r.flux_num == a * c * d);
  CHECK(r.flux_den == d * (a + b + c) + a * c);
  CHECK(r.trees == 4);
  // And the templated closed form instantiated with polynomials is the same rational function.
  const auto cf = three_state_flux<P>(a, b, c, d);
  CHECK(cf.num * r.flux_den == r.flux_num * cf.den);
}

TEST_CASE("tree theorem: two-state and full three-state closed forms") {
  const P a = var("a"), d = var("d");
  const auto r2 = tree_theorem(2, {{0, 1, a, true}, {1, 0, d, false}});
  const auto cf2 = two_state_flux<P>(a, d);
  CHECK(cf2.num * r2.flux_den == r2.flux_num * cf2.den);

  std::array<P, 6> q;
  const char* names[6] = {"q_BG", "q_BR", "q_GB", "q_GR", "q_RB", "q_RG"};
  for (int k = 0; k < 6; ++k) q[k] = var(names[k]);
  const auto r3 = tree_theorem(3, {{0, 1, q[kBG], false},
                                   {0, 2, q[kBR], false},
                                   {1, 0, q[kGB], true},
                                   {1, 2, q[kGR], false},
                                   {2, 0, q[kRB], true},
                                   {2, 1, q[kRG], false}});
  const auto cf3 = full_three_state_flux<P>(q);
  CHECK(cf3.num * r3.flux_den == r3.flux_num * cf3.den);
  // A wrong formula (one tree term dropped) is not identical.
  CHECK(cf3.num * (r3.flux_den - q[kGB] * q[kRB]) != r3.flux_num * cf3.den);
}

TEST_CASE("tree theorem counts n^(n-1) in-trees on the complete graph (Cayley)") {
  for (std::size_t n : {2u, 3u, 4u, 5u, 7u}) {
    std::vector<SymbolicTransition> tr;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if (i != j) tr.push_back({i, j, P(1), false});
    tr[0].spike = true;
    const auto r = tree_theorem(n, tr);
    std::size_t expect = 1;
    for (std::size_t k = 0; k + 1 < n; ++k) expect *= n;
    CHECK(r.trees == expect);
    // With unit rates each tree sum is the count n^(n-2).
    CHECK(r.tree_sums[0] == P(static_cast<int>(expect / n)));
  }
}

TEST_CASE("tree sums evaluated at random rationals equal exact rational GTH") {
  std::mt19937_64 rng(12345);
  std::uniform_int_distribution<int> num(1, 1000), den(1, 97);
  const std::size_t n = 6;
  // A random sparse strongly connected chain: a ring plus random chords.
  std::vector<SymbolicTransition> tr;
  std::vector<std::pair<std::size_t, std::size_t>> ends;
  for (std::size_t i = 0; i < n; ++i) ends.emplace_back(i, (i + 1) % n);
  ends.emplace_back(2, 0);
  ends.emplace_back(5, 3);
  ends.emplace_back(1, 4);
  std::vector<Rational> values;
  for (std::size_t k = 0; k < ends.size(); ++k) {
    const std::string name = "t_" + std::to_string(k);
    tr.push_back({ends[k].first, ends[k].second, P::variable(name), k == 3});
    values.push_back(Rational(num(rng), den(rng)));
  }
  const auto r = tree_theorem(n, tr);
  auto value = [&](std::uint32_t v) {
    for (std::size_t k = 0; k < ends.size(); ++k)
      if (variable_index("t_" + std::to_string(k)) == v) return values[k];
    return Rational(0);
  };
  DenseMatrix<Rational> q(n);
  for (std::size_t k = 0; k < ends.size(); ++k) q(ends[k].first, ends[k].second) = values[k];
  const auto pi = gth_dense(q);
  const Rational total = r.flux_den.evaluate(value);
  for (std::size_t i = 0; i < n; ++i) CHECK(r.tree_sums[i].evaluate(value) / total == pi[i]);
  CHECK(r.flux_num.evaluate(value) / total == pi[3] * values[3]);
}

TEST_CASE("tree theorem rejects chains it cannot handle") {
  std::vector<SymbolicTransition> ring;
  for (std::size_t i = 0; i < 8; ++i) ring.push_back({i, (i + 1) % 8, P(1), i == 0});
  CHECK_THROWS_AS(tree_theorem(8, ring), ctmc::InputError);
  // Two absorbing states: no spanning in-tree for any root.
  CHECK_THROWS_AS(tree_theorem(3, {{0, 1, P(1), true}, {0, 2, P(1), false}}), ctmc::InputError);
  CHECK_THROWS_AS(tree_theorem(2, {{0, 0, P(1), true}}), ctmc::InputError);
}

TEST_CASE("flux_formula of a three-state model uses the paper's symbols") {
  const Affine a{Rational(1), Rational(2)}, b{Rational(1, 2), Rational(0)}, c{Rational(0), Rational(1)},
      d{Rational(3), Rational(0)};
  const auto f = flux_formula(three_state_model(a, b, c, d), "model");
  CHECK(f.text == "F = a*c*d / (a*c + a*d + b*d + c*d)");
  REQUIRE(f.symbols.legend.size() == 4);
  CHECK(f.symbols.legend[0].rate_text == "max(0, 1 + 2*H)");
  CHECK(f.symbols.legend[1].rate_text == "0.5");
  CHECK(f.symbols.legend[2].rate_text == "max(0, H)");
}

TEST_CASE("cancel_content removes common monomials and constants, keeping the value") {
  const P g = var("gamma"), r = var("rho"), k = var("kappa");
  P num = P(2) * g * g * r * r * r * k;
  P den = P(2) * g * g * r * r * k + P(2) * g * g * r * r * r;
  const P num0 = num, den0 = den;
  cancel_content(num, den);
  CHECK(num == k * r);
  CHECK(den == k + r);
  CHECK(num * den0 == num0 * den);  // same rational function
  // 3k / (-6r) = -k / (2r): the common constant 3 goes, the sign moves up.
  P n2 = P(3) * k, d2 = P(-6) * r;
  cancel_content(n2, d2);
  CHECK(n2 == -k);
  CHECK(d2 == P(2) * r);
}

TEST_CASE("variables print in natural name order whatever their creation order") {
  const P k10 = var("kappa_10"), k2 = var("kappa_2");
  CHECK((k10 + k2).to_text() == "kappa_2 + kappa_10");
  CHECK((k10 * k2).to_text() == "kappa_2*kappa_10");
}

namespace {

// The symbol of the transition from -> to in a model's legend ("" if none).
std::string symbol_of(const Model& m, const SymbolicModel& s, const std::string& from, const std::string& to) {
  for (const auto& rs : s.legend) {
    const auto& t = m.transitions[rs.transition];
    if (m.states[t.from] == from && m.states[t.to] == to) return rs.name;
  }
  return "";
}

}  // namespace

TEST_CASE("the paper's symbols follow the family's structure, not the order transitions are listed in") {
  // reorder.json: three-state, transitions in another order. By index, G -> R
  // would be labelled a; by structure it is c.
  const auto m = model_from_json_text(R"({"states":["B","G","R"],"transitions":[
    {"from":"G","to":"R","offset":3,"spike":true},
    {"from":"B","to":"G","offset":2},
    {"from":"R","to":"B","offset":"1/2"},
    {"from":"G","to":"B","offset":1}],
    "meta":{"family":"three-state"}})",
                                      "reorder.json");
  const auto f = flux_formula(m, "reorder.json");
  CHECK(symbol_of(m, f.symbols, "B", "G") == "a");
  CHECK(symbol_of(m, f.symbols, "G", "B") == "b");
  CHECK(symbol_of(m, f.symbols, "G", "R") == "c");
  CHECK(symbol_of(m, f.symbols, "R", "B") == "d");
  CHECK(f.text == "F = a*c*d / (a*c + a*d + b*d + c*d)");  // paper eq. 2
  // The states listed in another order as well.
  const auto m2 = model_from_json_text(R"({"states":["R","B","G"],"transitions":[
    {"from":"R","to":"B","offset":1},{"from":"G","to":"R","offset":1,"spike":true},
    {"from":"G","to":"B","offset":1},{"from":"B","to":"G","offset":1}],"meta":{"family":"three-state"}})",
                                       "states.json");
  CHECK(flux_formula(m2, "states.json").text == "F = a*c*d / (a*c + a*d + b*d + c*d)");
}

TEST_CASE("meta.family without the family's shape gives generic r_X_Y symbols") {
  // wrongshape.json: two-state by meta, but states X, Y (and
  // listed R -> B first): the paper's a and d would be wrong.
  const auto m = model_from_json_text(R"({"states":["X","Y"],"transitions":[
    {"from":"Y","to":"X","offset":3},{"from":"X","to":"Y","offset":2,"spike":true}],"meta":{"family":"two-state"}})",
                                      "wrongshape.json");
  const auto s = symbolic_model(m);
  CHECK(symbol_of(m, s, "X", "Y") == "r_X_Y");
  CHECK(symbol_of(m, s, "Y", "X") == "r_Y_X");
  // Right states and edges, but the spike on R -> B instead of B -> R.
  const auto m2 = model_from_json_text(R"({"states":["B","R"],"transitions":[
    {"from":"B","to":"R","offset":1},{"from":"R","to":"B","offset":1,"spike":true}],"meta":{"family":"two-state"}})",
                                       "spike.json");
  const auto s2 = symbolic_model(m2);
  CHECK(symbol_of(m2, s2, "B", "R") == "r_B_R");
  CHECK(symbol_of(m2, s2, "R", "B") == "r_R_B");
  // Three-state by meta with B -> R in place of G -> B.
  const auto m3 = model_from_json_text(R"({"states":["B","G","R"],"transitions":[
    {"from":"B","to":"G","offset":2},{"from":"B","to":"R","offset":1},
    {"from":"G","to":"R","offset":3,"spike":true},{"from":"R","to":"B","offset":1}],"meta":{"family":"three-state"}})",
                                       "shape.json");
  const auto s3 = symbolic_model(m3);
  CHECK(symbol_of(m3, s3, "B", "G") == "r_B_G");
  CHECK(symbol_of(m3, s3, "G", "R") == "r_G_R");
  // The family's own model keeps a, d.
  const auto s4 = symbolic_model(two_state_model({Rational(1), Rational(1)}, {Rational(2), Rational(0)}));
  REQUIRE(s4.legend.size() == 2);
  CHECK(s4.legend[0].name == "a");
  CHECK(s4.legend[1].name == "d");
}

TEST_CASE("state names that sanitize alike still get distinct symbols") {
  const auto m = model_from_json_text(R"({"states":["A-1","A1","B"],"transitions":[
    {"from":"A-1","to":"B","offset":1,"spike":true},{"from":"A1","to":"B","offset":1},
    {"from":"B","to":"A-1","offset":1},{"from":"B","to":"A1","offset":1}]})",
                                      "alike.json");
  const auto s = symbolic_model(m);
  CHECK(symbol_of(m, s, "A-1", "B") == "r_A1_B");
  CHECK(symbol_of(m, s, "A1", "B") == "r_A1_B_2");
  CHECK(symbol_of(m, s, "B", "A-1") == "r_B_A1");
  CHECK(symbol_of(m, s, "B", "A1") == "r_B_A1_2");
}

// TeX reads "\x" as one control symbol; a letter after a backslash starts a
// control word (\input, \write). In escaped text every backslash starts a
// control word of the escapes' own (\backslash, \hat, \sim) or a control
// symbol, braces balance, and no $ & # ^ ~ % stands unescaped.
namespace {
bool inert_tex(const std::string& t) {
  int depth = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '\\') {
      std::size_t j = i + 1;
      while (j < t.size() && std::isalpha(static_cast<unsigned char>(t[j]))) ++j;
      const std::string word = t.substr(i + 1, j - i - 1);
      if (!word.empty() && word != "backslash" && word != "hat" && word != "sim" && word != "mathrm") return false;
      i = word.empty() ? i + 1 : j - 1;
      continue;
    }
    if (static_cast<unsigned char>(c) < 0x20 || std::string("$&#^~%").find(c) != std::string::npos) return false;
    if (c == '{') ++depth;
    if (c == '}' && --depth < 0) return false;
  }
  return depth == 0;
}
}  // namespace

TEST_CASE("latex_text and default LaTeX names escape every TeX special of a user's name") {
  CHECK(latex_text("B}\\input{/etc/passwd}") == "B\\}\\backslash{}input\\{/etc/passwd\\}");
  CHECK(latex_text("a b") == "a\\ b");
  CHECK(latex_text("$&#_%") == "\\$\\&\\#\\_\\%");
  CHECK(latex_text("x\ny") == "x\\backslash{}x0ay");
  const char* hostile[] = {"B}\\input{/etc/passwd}", "}}\\write18{rm -rf x}", "a^b~c$d&e#f%g", "\\\\\\", "{",
                           "line\nbreak\r\x7f", "\\catcode`\\{=12", "\\csname input\\endcsname"};
  for (const char* h : hostile) {
    INFO(h);
    CHECK(inert_tex(latex_text(h)));
    // Through the variable path: a multi-letter name goes into \mathrm{...},
    // the part after '_' into a subscript.
    const std::string name = std::string("z") + h;
    CHECK(inert_tex(default_latex_name(name)));
    CHECK(inert_tex(default_latex_name(name + "_" + h + "_" + h)));
  }
  // The usual names are spelled as before.
  CHECK(default_latex_name("r_B_G") == "r_{B,G}");
  CHECK(default_latex_name("kappa_0") == "\\kappa_{0}");
  CHECK(default_latex_name("rate_up") == "\\mathrm{rate}_{up}");
}
