// Sparse GTH state reduction with a fill-reducing (greedy minimum-degree)
// elimination order, DESIGN.md section 5.
//
// Same arithmetic as gth_dense (subtraction-free, exact in rationals), but
// states are eliminated in the order chosen by minimum degree and only
// existing (or filled-in) edges are touched. On a path with leaves (the
// Bernstein chain) leaves go first, then the path from its ends: O(n) work and
// fill. The last state eliminated is the root of the back-substitution.
#pragma once
#include <algorithm>
#include <cmath>
#include <queue>
#include <utility>
#include <vector>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/gth.hpp"
#include "ctmc/solvers/scalar.hpp"

namespace ctmc::solvers {

// Off-diagonal rates as adjacency lists: out[i] = {(j, q_ij)}, q_ij > 0.
template <class T>
struct SparseRates {
  std::size_t n = 0;
  std::vector<std::vector<std::pair<std::size_t, T>>> out;
  explicit SparseRates(std::size_t size = 0) : n(size), out(size) {}
  void add(std::size_t i, std::size_t j, const T& r) { out[i].emplace_back(j, r); }
  void add(std::size_t i, std::size_t j, T&& r) { out[i].emplace_back(j, std::move(r)); }
};

// Greedy minimum-degree elimination order (degree = number of distinct
// neighbours, in or out, among states not yet eliminated), simulating fill.
// Ties go to the smaller state index, so the order is deterministic.
std::vector<std::size_t> min_degree_order(const std::vector<std::vector<std::size_t>>& out);

namespace detail {
// (too_large: gth.hpp.)
// x = 0 without allocating (MPFR values own heap limbs).
template <class T> inline void assign_zero(T& x) { x = T(0); }
inline void assign_zero(Mpfr& x) { mpfr_set_zero(x.backend().data(), 1); }
}  // namespace detail

// Performance notes (a Bernstein chain of 200002 states at 256 bits solves in
// well under a second, see bench/bench_gth.cpp): the weight q_ik / s_k is
// computed in place in the edge's own storage and moved into the record, the
// records live in one flat array, the row sum is a reused scratch value, and
// the normalization multiplies by one reciprocal. Only fill-in allocates.
template <class T>
std::vector<T> gth_sparse(SparseRates<T> q) {
  const std::size_t n = q.n;
  std::vector<T> pi(n, T(0));
  if (n == 0) return pi;
  std::size_t edges = 0;
  std::vector<std::vector<std::size_t>> pattern(n);
  for (std::size_t i = 0; i < n; ++i) {
    pattern[i].reserve(q.out[i].size());
    for (auto& e : q.out[i]) pattern[i].push_back(e.first);
    edges += q.out[i].size();
  }
  const auto order = min_degree_order(pattern);
  pattern.clear();
  pattern.shrink_to_fit();

  std::vector<std::vector<std::size_t>> in(n);  // in-neighbours (may hold stale entries)
  for (std::size_t i = 0; i < n; ++i)
    for (auto& e : q.out[i]) in[e.first].push_back(i);
  std::vector<char> gone(n, 0);
  // Records of the reduction, in elimination order: step t eliminated order[t]
  // and recorded (i, q_ik / s_k) for its live in-neighbours i in
  // rec[rec_start[t] .. rec_start[t+1]).
  std::vector<std::pair<std::size_t, T>> rec;
  rec.reserve(edges);
  std::vector<std::size_t> rec_start(n, 0);

  auto find_edge = [&](std::size_t i, std::size_t j) -> T* {
    for (auto& e : q.out[i])
      if (e.first == j) return &e.second;
    return nullptr;
  };

  T s(0);
  for (std::size_t step = 0; step + 1 < n; ++step) {
    const std::size_t k = order[step];
    rec_start[step] = rec.size();
    // Drop edges into eliminated states from k's out-list.
    auto& ok = q.out[k];
    ok.erase(std::remove_if(ok.begin(), ok.end(), [&](auto& e) { return gone[e.first] != 0; }), ok.end());
    detail::assign_zero(s);
    for (auto& e : ok) s += e.second;
    if (is_exact_zero(s))
      throw InputError("GTH: state " + std::to_string(k) + " has no path back: the chain is reducible");
    // Distinct live in-neighbours.
    auto& ik = in[k];
    std::sort(ik.begin(), ik.end());
    ik.erase(std::unique(ik.begin(), ik.end()), ik.end());
    for (std::size_t i : ik) {
      if (gone[i]) continue;
      auto& oi = q.out[i];
      std::size_t p = 0;
      while (p < oi.size() && oi[p].first != k) ++p;
      if (p == oi.size()) continue;
      // Take the edge i -> k out of i's list; its value becomes w = q_ik / s_k.
      T w = std::move(oi[p].second);
      oi.erase(oi.begin() + static_cast<std::ptrdiff_t>(p));
      w /= s;
      for (auto& [j, qkj] : ok) {
        if (j == i) continue;
        if (T* qij = find_edge(i, j)) {
          add_product(*qij, w, qkj);
        } else {
          oi.emplace_back(j, w * qkj);
          in[j].push_back(i);
        }
      }
      rec.emplace_back(i, std::move(w));
    }
    gone[k] = 1;
    ok.clear();
    ok.shrink_to_fit();
    ik.clear();
    ik.shrink_to_fit();
  }
  rec_start[n - 1] = rec.size();

  const std::size_t root = order[n - 1];
  pi[root] = T(1);
  std::vector<std::size_t> done;  // for rescaling
  done.reserve(n);
  done.push_back(root);
  for (std::size_t step = n - 1; step-- > 0;) {
    const std::size_t k = order[step];
    T& acc = pi[k];
    for (std::size_t r = rec_start[step]; r < rec_start[step + 1]; ++r) add_product(acc, pi[rec[r].first], rec[r].second);
    done.push_back(k);
    if (detail::too_large(pi[k]))
      for (std::size_t d : done) pi[d] *= T(1e-250);
  }
  T total(0);
  for (auto& p : pi) total += p;
  const T inv = T(1) / total;
  for (auto& p : pi) p *= inv;
  return pi;
}

extern template std::vector<double> gth_sparse(SparseRates<double>);
extern template std::vector<Mpfr> gth_sparse(SparseRates<Mpfr>);
extern template std::vector<Rational> gth_sparse(SparseRates<Rational>);
extern template std::vector<Interval> gth_sparse(SparseRates<Interval>);

}  // namespace ctmc::solvers
