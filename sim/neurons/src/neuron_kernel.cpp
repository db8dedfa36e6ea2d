#include "ctmc/sim/neurons/neuron_kernel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/gth.hpp"
#include "ctmc/solvers/number_text.hpp"
#include "ctmc/solvers/scalar.hpp"
#include "ctmc/solvers/sparse_gth.hpp"
#include "ctmc/solvers/stationary.hpp"

namespace ctmc::sim {

double alpha_fit_of(const solvers::Model& m, const std::string& source) {
  if (!m.meta.is_object() || !m.meta.contains("alpha_fit")) return 1.0;
  const auto& v = m.meta["alpha_fit"];
  double a = 0;
  if (v.is_number())
    a = v.get<double>();
  else if (v.is_string())
    a = solvers::to_double(solvers::parse_input_value(v.get<std::string>(), source + ": meta.alpha_fit"));
  else
    throw InputError(source + ": meta.alpha_fit: not a number");
  if (!(a > 0) || !std::isfinite(a)) throw InputError(source + ": meta.alpha_fit: must be a positive finite number");
  return a;
}

std::optional<std::pair<double, double>> fit_domain_of(const solvers::Model& m, const std::string& source) {
  if (!m.meta.is_object() || !m.meta.contains("domain")) return std::nullopt;
  const auto& d = m.meta["domain"];
  const std::string what = source + ": meta.domain";
  if (!d.is_array() || d.size() != 2) throw InputError(what + ": expected [lo, hi]");
  double ends[2];
  for (std::size_t k = 0; k < 2; ++k) {
    if (d[k].is_number())
      ends[k] = d[k].get<double>();
    else if (d[k].is_string())
      ends[k] = solvers::to_double(solvers::parse_input_value(d[k].get<std::string>(), what));
    else
      throw InputError(what + ": expected [lo, hi] as numbers or exact strings");
    if (!std::isfinite(ends[k])) throw InputError(what + ": the ends must be finite");
  }
  if (!(ends[0] < ends[1])) throw InputError(what + ": need lo < hi");
  return std::make_pair(ends[0], ends[1]);
}

NeuronKernel::NeuronKernel(const solvers::Model& model, double scale, std::string source)
    : model_(model), source_(std::move(source)), scale_(scale), n_(model.size()) {
  if (!(scale > 0) || !std::isfinite(scale))
    throw InputError(fmt::format("{}: rate scale {} must be positive and finite", source_, scale));
  std::vector<std::size_t> deg(n_, 0);
  for (const auto& t : model.transitions) ++deg[t.from];
  kmax_ = n_ == 0 ? 0 : *std::max_element(deg.begin(), deg.end());
  kmax_ = std::max<std::size_t>(kmax_, 1);
  off_.assign(n_ * kmax_, 0.0);
  slope_.assign(n_ * kmax_, 0.0);
  to_.assign(n_ * kmax_, 0);
  spike_.assign(n_ * kmax_, 0);
  for (std::size_t i = 0; i < n_; ++i)
    for (std::size_t k = 0; k < kmax_; ++k) to_[slot(i, k)] = static_cast<std::uint32_t>(i);
  std::vector<std::size_t> fill(n_, 0);
  for (const auto& t : model.transitions) {
    const std::size_t s = slot(t.from, fill[t.from]++);
    off_[s] = scale * solvers::to_double(t.offset.value);
    slope_[s] = scale * solvers::to_double(t.slope.value);
    to_[s] = static_cast<std::uint32_t>(t.to);
    spike_[s] = t.spike ? 1 : 0;
  }
}

EndStateRule::EndStateRule(const NeuronKernel& kernel) {
  const solvers::Model& model = kernel.model();
  const std::size_t n = model.size();
  solvers::Graph out(n);
  for (const auto& t : model.transitions)
    if (!t.spike && (t.offset.value != 0 || t.slope.value != 0)) out[t.from].push_back(t.to);

  // A component is numbered after every component it reaches.
  std::size_t ncomp = 0;
  const std::vector<std::size_t> comp = solvers::strongly_connected_components(out, ncomp);
  comp_.assign(comp.begin(), comp.end());
  components_ = ncomp;
  words_ = (components_ + 63) / 64;
  const double bytes = static_cast<double>(components_) * static_cast<double>(words_) * 8.0;
  if (bytes > static_cast<double>(kMaxBytes))
    throw InputError(fmt::format(
        "{}: the end-state sampler's reachability table for its {} states ({} components of non-spike transitions) "
        "would take {:.0f} MiB, beyond the limit of {} MiB; use the exact sampler",
        kernel.source(), n, components_, bytes / (1 << 20), kMaxBytes >> 20));

  // Members of each component; then the components in completion order, each
  // reaching itself and whatever its members' edges reach (all numbered
  // earlier, so their rows are complete).
  std::vector<std::uint32_t> start(components_ + 1, 0), members(n);
  for (std::size_t v = 0; v < n; ++v) ++start[comp_[v] + 1];
  for (std::size_t c = 0; c < components_; ++c) start[c + 1] += start[c];
  {
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (std::size_t v = 0; v < n; ++v) members[fill[comp_[v]]++] = static_cast<std::uint32_t>(v);
  }
  reach_.assign(components_ * words_, 0);
  for (std::size_t c = 0; c < components_; ++c) {
    std::uint64_t* row = &reach_[c * words_];
    row[c >> 6] |= std::uint64_t{1} << (c & 63);
    for (std::uint32_t k = start[c]; k < start[c + 1]; ++k)
      for (std::size_t w : out[members[k]]) {
        const std::size_t d = comp_[w];
        if (d == c || ((row[d >> 6] >> (d & 63)) & 1u)) continue;
        const std::uint64_t* other = &reach_[d * words_];
        for (std::size_t x = 0; x < words_; ++x) row[x] |= other[x];
      }
  }
}

double NeuronKernel::exit_rate(std::size_t i, double H) const {
  double q = 0;
  for (std::size_t k = 0; k < kmax_; ++k) q += slot_rate(slot(i, k), H);
  return q;
}

double NeuronKernel::max_exit_rate(double H) const {
  double m = 0;
  for (std::size_t i = 0; i < n_; ++i) m = std::max(m, exit_rate(i, H));
  return m;
}

std::vector<double> NeuronKernel::stationary(double H) const {
  if (!std::isfinite(H)) throw InputError(fmt::format("{}: input H = {} is not finite", source_, H));
  if (n_ == 0) return {};
  // The project's one stationary solver (solvers/gth.hpp, sparse_gth.hpp),
  // dense or sparse as solve_stationary picks for the size, on the rounded
  // and scaled rates; both throw InputError when a state has no exit left
  // (reducible at H).
  std::vector<double> pi;
  try {
    if (n_ <= solvers::kDenseGthLimit) {
      solvers::DenseMatrix<double> q(n_);
      for (std::size_t i = 0; i < n_; ++i)
        for (std::size_t k = 0; k < kmax_; ++k) {
          const std::size_t s = slot(i, k);
          if (to_[s] != i) q(i, to_[s]) += slot_rate(s, H);  // to == i: padding
        }
      pi = solvers::gth_dense(std::move(q));
    } else {
      solvers::SparseRates<double> q(n_);
      for (std::size_t i = 0; i < n_; ++i)
        for (std::size_t k = 0; k < kmax_; ++k) {
          const std::size_t s = slot(i, k);
          const double r = slot_rate(s, H);
          if (to_[s] != i && r > 0) q.add(i, to_[s], r);
        }
      pi = solvers::gth_sparse(std::move(q));
    }
  } catch (const InputError&) {
    pi.clear();
  }
  bool finite = !pi.empty();
  for (double p : pi) finite = finite && std::isfinite(p);
  if (finite) return pi;
  // Reducible at H, or out of double's range: the exact structure in the
  // rationals finds the closed class, and the solver names a range problem.
  return solvers::solve_stationary<double>(model_, solvers::Rational(H), solvers::Method::Auto, source_).pi;
}

double NeuronKernel::flux(double H) const {
  const std::vector<double> pi = stationary(H);
  double f = 0;
  for (std::size_t i = 0; i < n_; ++i)
    for (std::size_t k = 0; k < kmax_; ++k) {
      const std::size_t s = slot(i, k);
      if (spike_[s]) f += pi[i] * slot_rate(s, H);
    }
  return f;
}

double NeuronKernel::jump_rate(double H) const {
  const std::vector<double> pi = stationary(H);
  double r = 0;
  // pi_i == 0 skipped (an infinite exit rate of a state outside the closed
  // class must not make 0 * inf = NaN); anything else, NaN included, counts,
  // so a bad estimate refuses the work budget instead of passing it.
  for (std::size_t i = 0; i < n_; ++i)
    if (pi[i] != 0) r += pi[i] * exit_rate(i, H);
  return r;
}

}  // namespace ctmc::sim
