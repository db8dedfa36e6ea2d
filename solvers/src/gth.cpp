// Explicit instantiations of the GTH solvers for the heavy scalar types, so
// that other translation units do not compile them again (DESIGN.md section 9).
#include <algorithm>
#include <iterator>

#include "ctmc/solvers/gth.hpp"
#include "ctmc/solvers/sparse_gth.hpp"

namespace ctmc::solvers {

template std::vector<double> gth_dense(DenseMatrix<double>);
template std::vector<Mpfr> gth_dense(DenseMatrix<Mpfr>);
template std::vector<Rational> gth_dense(DenseMatrix<Rational>);
template std::vector<Interval> gth_dense(DenseMatrix<Interval>);

template std::vector<double> gth_sparse(SparseRates<double>);
template std::vector<Mpfr> gth_sparse(SparseRates<Mpfr>);
template std::vector<Rational> gth_sparse(SparseRates<Rational>);
template std::vector<Interval> gth_sparse(SparseRates<Interval>);

std::vector<std::size_t> min_degree_order(const std::vector<std::vector<std::size_t>>& out) {
  const std::size_t n = out.size();
  // Undirected neighbour sets as sorted vectors: elimination of k connects
  // every in-neighbour of k to every out-neighbour, so fill is bounded by
  // joining k's neighbours. Sorted vectors (merged on update) instead of
  // std::set: the same result, far fewer allocations on long sparse chains.
  std::vector<std::vector<std::size_t>> nb(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j : out[i])
      if (i != j) {
        nb[i].push_back(j);
        nb[j].push_back(i);
      }
  for (auto& v : nb) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  using Item = std::pair<std::size_t, std::size_t>;  // (degree, state)
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
  for (std::size_t i = 0; i < n; ++i) heap.emplace(nb[i].size(), i);
  std::vector<char> gone(n, 0);
  std::vector<std::size_t> order;
  order.reserve(n);
  std::vector<std::size_t> merged;
  while (!heap.empty()) {
    auto [d, k] = heap.top();
    heap.pop();
    if (gone[k] || d != nb[k].size()) continue;  // stale entry
    gone[k] = 1;
    order.push_back(k);
    const std::vector<std::size_t> ns = std::move(nb[k]);
    nb[k].clear();
    for (std::size_t a : ns) {
      // nb[a] := (nb[a] u ns) \ {a, k}, both sorted.
      merged.clear();
      std::set_union(nb[a].begin(), nb[a].end(), ns.begin(), ns.end(), std::back_inserter(merged));
      // k by init-capture: clang 14 cannot capture a structured binding (C++20 P1381).
      merged.erase(std::remove_if(merged.begin(), merged.end(), [a, k = k](std::size_t x) { return x == a || x == k; }),
                   merged.end());
      nb[a].swap(merged);
      heap.emplace(nb[a].size(), a);
    }
  }
  return order;
}

}  // namespace ctmc::solvers
