#include "ctmc/solvers/stationary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <type_traits>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/gth.hpp"
#include "ctmc/solvers/sparse_gth.hpp"

namespace ctmc::solvers {

Graph rate_graph(const Model& m, const std::vector<Rational>& rates) {
  Graph g(m.size());
  for (std::size_t k = 0; k < m.transitions.size(); ++k)
    if (rates[k] > 0) g[m.transitions[k].from].push_back(m.transitions[k].to);
  return g;
}

std::vector<std::size_t> strongly_connected_components(const Graph& g, std::size_t& count) {
  const std::size_t n = g.size();
  const std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<std::size_t> index(n, kNone), low(n, 0), comp(n, kNone), stack;
  std::vector<char> on_stack(n, 0);
  std::size_t counter = 0, ncomp = 0;
  for (std::size_t s = 0; s < n; ++s) {
    if (index[s] != kNone) continue;
    std::vector<std::pair<std::size_t, std::size_t>> work{{s, 0}};
    index[s] = low[s] = counter++;
    stack.push_back(s);
    on_stack[s] = 1;
    while (!work.empty()) {
      auto& [v, it] = work.back();
      if (it < g[v].size()) {
        std::size_t w = g[v][it++];
        if (index[w] == kNone) {
          index[w] = low[w] = counter++;
          stack.push_back(w);
          on_stack[w] = 1;
          work.emplace_back(w, 0);
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
      } else {
        std::size_t v_done = v;
        work.pop_back();
        if (!work.empty()) low[work.back().first] = std::min(low[work.back().first], low[v_done]);
        if (low[v_done] == index[v_done]) {
          std::size_t w;
          do {
            w = stack.back();
            stack.pop_back();
            on_stack[w] = 0;
            comp[w] = ncomp;
          } while (w != v_done);
          ++ncomp;
        }
      }
    }
  }
  count = ncomp;
  return comp;
}

std::vector<std::vector<std::size_t>> closed_classes(const Graph& g) {
  const std::size_t n = g.size();
  std::size_t ncomp = 0;
  const std::vector<std::size_t> comp = strongly_connected_components(g, ncomp);
  std::vector<char> leaves(ncomp, 0);
  for (std::size_t v = 0; v < n; ++v)
    for (std::size_t w : g[v])
      if (comp[v] != comp[w]) leaves[comp[v]] = 1;
  std::vector<std::vector<std::size_t>> classes(ncomp);
  for (std::size_t v = 0; v < n; ++v)
    if (!leaves[comp[v]]) classes[comp[v]].push_back(v);
  std::vector<std::vector<std::size_t>> out;
  for (auto& c : classes)
    if (!c.empty()) out.push_back(std::move(c));
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// H for a message: as typed when short; an H that came from a double (a
// network's preactivation) is a long fraction p/2^k, shown as a decimal first.
std::string h_text(const Rational& H) {
  const std::string e = exact_text(H);
  if (e.size() <= 24) return e;
  return fmt::format("{} (exactly {})", to_double(H), e);  // shortest decimal that reads back as the double
}
}

template <class T>
Stationary<T> solve_stationary(const Model& m, const Rational& H, Method method, const std::string& source) {
  const auto rates = m.rates(H);
  const auto classes = closed_classes(rate_graph(m, rates));
  if (classes.size() != 1) {
    std::string names;
    for (const auto& c : classes) {
      names += names.empty() ? "{" : ", {";
      for (std::size_t i = 0; i < c.size(); ++i) names += (i ? "," : "") + m.states[c[i]];
      names += "}";
    }
    throw InputError(fmt::format("{}: at H = {} the chain has {} closed classes {}: no unique stationary distribution",
                                 source, h_text(H), classes.size(), names));
  }
  const auto& support = classes[0];
  std::vector<std::size_t> local(m.size(), static_cast<std::size_t>(-1));
  for (std::size_t i = 0; i < support.size(); ++i) local[support[i]] = i;

  std::vector<T> rate_t;
  rate_t.reserve(rates.size());
  for (std::size_t k = 0; k < rates.size(); ++k) rate_t.push_back(rates[k] > 0 ? from_rational<T>(rates[k]) : T(0));
  if constexpr (std::is_same_v<T, double>) {
    // The structure was decided exactly; a positive rate that rounds to 0
    // (below 4.9e-324) would make the double chain reducible, and one that
    // rounds to inf (above 1.8e308, possible as offset + slope H) poisons
    // every pi. Both are out of double's range, not errors of the model.
    for (std::size_t k = 0; k < rates.size(); ++k) {
      if (!(rates[k] > 0) || (rate_t[k] > 0 && std::isfinite(rate_t[k]))) continue;
      const auto& t = m.transitions[k];
      throw InputError(fmt::format("{}: at H = {} the rate of transitions[{}] ({} -> {}) is {}, {} the range of double; "
                                   "solve in MPFR or exactly",
                                   source, h_text(H), k, m.states[t.from], m.states[t.to],
                                   to_string(from_rational<Mpfr>(rates[k]), 6), rate_t[k] > 0 ? "above" : "below"));
    }
  }

  const bool dense = method == Method::Dense || (method == Method::Auto && support.size() <= kDenseGthLimit);
  std::vector<T> sub;
  if (dense) {
    DenseMatrix<T> q(support.size());
    for (std::size_t k = 0; k < rates.size(); ++k) {
      const auto& t = m.transitions[k];
      if (rates[k] > 0 && local[t.from] != static_cast<std::size_t>(-1) && local[t.to] != static_cast<std::size_t>(-1))
        q(local[t.from], local[t.to]) = rate_t[k];
    }
    sub = gth_dense(std::move(q));
  } else {
    SparseRates<T> q(support.size());
    for (std::size_t k = 0; k < rates.size(); ++k) {
      const auto& t = m.transitions[k];
      if (rates[k] > 0 && local[t.from] != static_cast<std::size_t>(-1) && local[t.to] != static_cast<std::size_t>(-1))
      {
        // Only spike rates are needed again (for the flux): move the others.
        if (t.spike)
          q.add(local[t.from], local[t.to], rate_t[k]);
        else
          q.add(local[t.from], local[t.to], std::move(rate_t[k]));
      }
    }
    sub = gth_sparse(std::move(q));
  }
  Stationary<T> r;
  r.pi.assign(m.size(), T(0));
  for (std::size_t i = 0; i < support.size(); ++i) r.pi[support[i]] = std::move(sub[i]);
  r.flux = T(0);
  for (std::size_t k = 0; k < rates.size(); ++k)
    if (m.transitions[k].spike && rates[k] > 0) add_product(r.flux, r.pi[m.transitions[k].from], rate_t[k]);
  r.support = support;
  if constexpr (std::is_same_v<T, double>) {
    // In-range rates can still overflow inside the elimination (a weight
    // q_ik / s_k beyond 1.8e308 when the rates span more than double's
    // range): say so rather than return NaN.
    bool finite = std::isfinite(r.flux);
    for (double p : r.pi) finite = finite && std::isfinite(p);
    if (!finite)
      throw InputError(fmt::format("{}: at H = {} the rates span more than the range of double and the elimination "
                                   "overflows; solve in MPFR or exactly",
                                   source, h_text(H)));
  }
  return r;
}

template Stationary<double> solve_stationary(const Model&, const Rational&, Method, const std::string&);
template Stationary<Mpfr> solve_stationary(const Model&, const Rational&, Method, const std::string&);
template Stationary<Rational> solve_stationary(const Model&, const Rational&, Method, const std::string&);
template Stationary<Interval> solve_stationary(const Model&, const Rational&, Method, const std::string&);

}  // namespace ctmc::solvers
