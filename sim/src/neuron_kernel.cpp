#include "ctmc/sim/neuron_kernel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ctmc/solvers/errors.hpp"
#include "ctmc/solvers/scalar.hpp"
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
  // Reachability over non-spike transitions that are not identically zero
  // (offset != 0 or slope != 0), by a depth-first search from every state.
  implies_spike_.assign(n_ * n_, 0);
  for (std::size_t i = 0; i < n_; ++i) {
    std::vector<char> seen(n_, 0);
    std::vector<std::size_t> stack{i};
    seen[i] = 1;
    while (!stack.empty()) {
      const std::size_t u = stack.back();
      stack.pop_back();
      for (const auto& t : model.transitions)
        if (t.from == u && !t.spike && (t.offset.value != 0 || t.slope.value != 0) && !seen[t.to]) {
          seen[t.to] = 1;
          stack.push_back(t.to);
        }
    }
    for (std::size_t j = 0; j < n_; ++j) implies_spike_[i * n_ + j] = (j != i && !seen[j]) ? 1 : 0;
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

Eigen::MatrixXd NeuronKernel::generator(double H) const {
  Eigen::MatrixXd q = Eigen::MatrixXd::Zero(n_, n_);
  for (std::size_t i = 0; i < n_; ++i)
    for (std::size_t k = 0; k < kmax_; ++k) {
      const std::size_t s = slot(i, k);
      if (to_[s] == i) continue;  // padding
      const double r = slot_rate(s, H);
      q(i, to_[s]) += r;
      q(i, i) -= r;
    }
  return q;
}

Eigen::MatrixXd NeuronKernel::spike_generator(double H) const {
  Eigen::MatrixXd d = Eigen::MatrixXd::Zero(n_, n_);
  for (std::size_t i = 0; i < n_; ++i)
    for (std::size_t k = 0; k < kmax_; ++k) {
      const std::size_t s = slot(i, k);
      if (spike_[s]) d(i, to_[s]) += slot_rate(s, H);
    }
  return d;
}

std::vector<double> NeuronKernel::stationary(double H) const {
  if (!std::isfinite(H)) throw InputError(fmt::format("{}: input H = {} is not finite", source_, H));
  // Dense GTH (DESIGN section 5): subtraction-free, so accurate in double.
  Eigen::MatrixXd q = generator(H);
  std::vector<double> pi(n_, 0.0);
  if (n_ == 0) return pi;
  bool reducible = false;
  for (std::size_t k = n_ - 1; k >= 1 && !reducible; --k) {
    double s = 0;
    for (std::size_t j = 0; j < k; ++j) s += q(k, j);
    if (!(s > 0)) {
      reducible = true;
      break;
    }
    for (std::size_t i = 0; i < k; ++i) q(i, k) /= s;
    for (std::size_t i = 0; i < k; ++i) {
      const double qik = q(i, k);
      if (qik == 0) continue;
      for (std::size_t j = 0; j < k; ++j)
        if (j != i) q(i, j) += qik * q(k, j);
    }
  }
  if (reducible) {
    // Exact structure in the rationals: the solver finds the closed class.
    const auto st = solvers::solve_stationary<double>(model_, solvers::Rational(H), solvers::Method::Auto, source_);
    return st.pi;
  }
  pi[0] = 1;
  double total = 1;
  for (std::size_t k = 1; k < n_; ++k) {
    double v = 0;
    for (std::size_t i = 0; i < k; ++i) v += pi[i] * q(i, k);
    pi[k] = v;
    total += v;
  }
  for (auto& p : pi) p /= total;
  return pi;
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
  for (std::size_t i = 0; i < n_; ++i)
    if (pi[i] > 0) r += pi[i] * exit_rate(i, H);
  return r;
}

}  // namespace ctmc::sim
