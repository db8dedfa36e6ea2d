// Explicit instantiations of the GTH solvers for the heavy scalar types, so
// that other translation units do not compile them again (DESIGN.md section 9).
#include <set>

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
  // Undirected neighbour sets: elimination of k connects every in-neighbour of
  // k to every out-neighbour, so fill is bounded by joining k's neighbours.
  std::vector<std::set<std::size_t>> nb(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j : out[i])
      if (i != j) {
        nb[i].insert(j);
        nb[j].insert(i);
      }
  using Item = std::pair<std::size_t, std::size_t>;  // (degree, state)
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
  for (std::size_t i = 0; i < n; ++i) heap.emplace(nb[i].size(), i);
  std::vector<char> gone(n, 0);
  std::vector<std::size_t> order;
  order.reserve(n);
  while (!heap.empty()) {
    auto [d, k] = heap.top();
    heap.pop();
    if (gone[k] || d != nb[k].size()) continue;  // stale entry
    gone[k] = 1;
    order.push_back(k);
    std::vector<std::size_t> ns(nb[k].begin(), nb[k].end());
    for (std::size_t a : ns) nb[a].erase(k);
    for (std::size_t x = 0; x < ns.size(); ++x)
      for (std::size_t y = x + 1; y < ns.size(); ++y) {
        nb[ns[x]].insert(ns[y]);
        nb[ns[y]].insert(ns[x]);
      }
    for (std::size_t a : ns) heap.emplace(nb[a].size(), a);
  }
  return order;
}

}  // namespace ctmc::solvers
