#include "ctmc/solvers/tree_theorem.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <tuple>
#include <unordered_set>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"

namespace ctmc::solvers {

namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// Depth-first enumeration of the spanning in-trees of one root. `order` lists
// the non-root states; level k chooses the parent (outgoing edge) of
// order[k]. `partial` is the product of the edges chosen so far, so each
// finished tree costs one multiplication.
struct TreeEnumerator {
  const std::vector<std::vector<std::pair<std::size_t, const Polynomial*>>>& out;
  std::vector<std::size_t> order;
  std::vector<std::size_t> parent;
  std::size_t root = 0;
  Polynomial sum;
  std::size_t trees = 0;

  // Following parents from `to` through already-assigned states: a cycle
  // exactly when the walk comes back to `v`. (Unassigned states and the root
  // end the walk.)
  bool closes_cycle(std::size_t v, std::size_t to) const {
    std::size_t w = to;
    while (w != kNone && w != root) {
      if (w == v) return true;
      w = parent[w];
    }
    return false;
  }

  void descend(std::size_t level, const Polynomial& partial) {
    if (level == order.size()) {
      // Every non-root state has a parent and no cycle was closed, so every
      // walk ends at the root: a spanning tree directed into it.
      sum += partial;
      ++trees;
      return;
    }
    const std::size_t v = order[level];
    for (const auto& [to, rate] : out[v]) {
      if (closes_cycle(v, to)) continue;
      parent[v] = to;
      descend(level + 1, partial * *rate);
      parent[v] = kNone;
    }
  }
};

std::string sanitize(const std::string& s) {
  std::string r;
  for (char ch : s)
    if (std::isalnum(static_cast<unsigned char>(ch))) r += ch;
  return r.empty() ? "s" : r;
}

std::string affine_text(const Transition& t) {
  if (t.slope.value == 0) return exact_text(t.offset.value);
  std::string slope = t.slope.value == 1 ? "H" : (t.slope.value == -1 ? "-H" : exact_text(t.slope.value) + "*H");
  if (t.offset.value == 0) return "max(0, " + slope + ")";
  if (t.slope.value < 0) {
    const Rational mag = -t.slope.value;
    slope = mag == 1 ? "H" : exact_text(mag) + "*H";
    return "max(0, " + exact_text(t.offset.value) + " - " + slope + ")";
  }
  return "max(0, " + exact_text(t.offset.value) + " + " + slope + ")";
}

// The paper's symbol for each transition of a two-state or three-state family
// model, matched by (from, to, spike) so that the order the transitions are
// listed in does not matter; all empty when the model does not have exactly
// the family's states and transitions (meta.family alone proves nothing).
std::vector<std::string> family_symbols(const Model& m, const std::string& family) {
  using Edge = std::tuple<const char*, const char*, bool, const char*>;  // from, to, spike, symbol
  std::vector<std::string> states;
  std::vector<Edge> want;
  if (family == "two-state") {
    states = {"B", "R"};
    want = {{"B", "R", true, "a"}, {"R", "B", false, "d"}};
  } else if (family == "three-state") {
    states = {"B", "G", "R"};
    want = {{"B", "G", false, "a"}, {"G", "B", false, "b"}, {"G", "R", true, "c"}, {"R", "B", false, "d"}};
  }
  std::vector<std::string> none(m.transitions.size());
  if (want.empty() || m.transitions.size() != want.size()) return none;
  std::vector<std::string> sorted = m.states;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != states) return none;  // `states` is listed sorted
  std::vector<std::string> names(m.transitions.size());
  for (const auto& [from, to, spike, symbol] : want) {
    bool found = false;
    for (std::size_t k = 0; k < m.transitions.size() && !found; ++k) {
      const auto& t = m.transitions[k];
      if (names[k].empty() && m.states[t.from] == from && m.states[t.to] == to && t.spike == spike) {
        names[k] = symbol;
        found = true;
      }
    }
    if (!found) return none;
  }
  return names;
}

void check_size(std::size_t n, const std::string& source) {
  if (n == 0) throw InputError(source + ": the chain has no states");
  if (n > kTreeTheoremMaxStates)
    throw InputError(fmt::format("{}: {} states: the symbolic tree theorem is limited to {} states", source, n,
                                 kTreeTheoremMaxStates));
}

}  // namespace

TreeTheoremResult tree_theorem(std::size_t n, const std::vector<SymbolicTransition>& transitions,
                               const std::string& source) {
  check_size(n, source);
  // Sum parallel transitions, then build adjacency lists.
  std::vector<std::vector<Polynomial>> rate(n, std::vector<Polynomial>(n));
  std::vector<std::vector<char>> present(n, std::vector<char>(n, 0));
  for (const auto& t : transitions) {
    if (t.from >= n || t.to >= n)
      throw InputError(fmt::format("{}: transition {} -> {}: state out of range", source, t.from, t.to));
    if (t.from == t.to) throw InputError(fmt::format("{}: transition {} -> {}: self-loop", source, t.from, t.to));
    rate[t.from][t.to] += t.rate;
    present[t.from][t.to] = 1;
  }
  std::vector<std::vector<std::pair<std::size_t, const Polynomial*>>> out(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (present[i][j] && !rate[i][j].is_zero()) out[i].emplace_back(j, &rate[i][j]);

  TreeTheoremResult r;
  r.tree_sums.resize(n);
  for (std::size_t root = 0; root < n; ++root) {
    TreeEnumerator e{out, {}, std::vector<std::size_t>(n, kNone), root, Polynomial(), 0};
    for (std::size_t v = 0; v < n; ++v)
      if (v != root) e.order.push_back(v);
    e.descend(0, Polynomial(1));
    r.tree_sums[root] = std::move(e.sum);
    r.trees += e.trees;
  }
  for (std::size_t i = 0; i < n; ++i) r.flux_den += r.tree_sums[i];
  if (r.flux_den.is_zero())
    throw InputError(source + ": no spanning tree: the chain is reducible whatever the rates");
  for (const auto& t : transitions)
    if (t.spike) r.flux_num += t.rate * r.tree_sums[t.from];
  return r;
}

SymbolicModel symbolic_model(const Model& m) {
  SymbolicModel s;
  s.states = m.size();
  std::string family;
  if (m.meta.is_object() && m.meta.contains("family") && m.meta["family"].is_string())
    family = m.meta["family"].get<std::string>();
  // The paper's names, when the model really has the family's shape.
  const std::vector<std::string> names = family_symbols(m, family);
  std::unordered_set<std::string> taken;  // a scan of the legend per symbol would be quadratic
  for (std::size_t k = 0; k < m.transitions.size(); ++k) {
    const auto& t = m.transitions[k];
    if (t.slope.value == 0 && t.offset.value == 0) continue;  // identically zero
    RateSymbol rs;
    rs.transition = k;
    rs.name = names[k].empty() ? "r_" + sanitize(m.states[t.from]) + "_" + sanitize(m.states[t.to]) : names[k];
    // Distinct state names can sanitize alike ("A-1", "A1"): keep symbols distinct.
    const std::string base = rs.name;
    for (int dup = 2; taken.count(rs.name); ++dup) rs.name = base + "_" + std::to_string(dup);
    taken.insert(rs.name);
    rs.latex = default_latex_name(rs.name);
    rs.rate_text = affine_text(t);
    s.transitions.push_back({t.from, t.to, Polynomial::variable(rs.name, rs.latex), t.spike});
    s.legend.push_back(std::move(rs));
  }
  return s;
}

FluxFormula flux_formula(const Model& m, const std::string& source) {
  // Before naming every transition: a 40,000-state chain is refused at once.
  check_size(m.size(), source);
  FluxFormula f;
  f.symbols = symbolic_model(m);
  f.tree = tree_theorem(m.size(), f.symbols.transitions, source);
  // Shown with common monomial factors and constants cancelled (e.g. the
  // gamma^N the Bernstein trees share); the tree sums stay as derived.
  Polynomial num = f.tree.flux_num, den = f.tree.flux_den;
  cancel_content(num, den);
  f.text = "F = " + fraction_text(num, den);
  f.latex = "F = " + fraction_latex(num, den);
  return f;
}

}  // namespace ctmc::solvers
