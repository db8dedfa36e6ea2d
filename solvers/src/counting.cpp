#include "ctmc/solvers/counting.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/det_math.hpp"
#include "ctmc/solvers/exact.hpp"
#include "expm.hpp"
#include "ctmc/solvers/gth.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/solvers/stationary.hpp"

namespace ctmc::solvers {

template <class T>
SpikeGenerator<T> spike_generator(const Model& m, const Rational& H) {
  const std::size_t n = m.size();
  const auto rates = m.rates(H);
  std::vector<Rational> exit(n, Rational(0));
  SpikeGenerator<T> g{DenseMatrix<T>(n), DenseMatrix<T>(n)};
  for (std::size_t k = 0; k < rates.size(); ++k) {
    if (rates[k] == 0) continue;
    const auto& tr = m.transitions[k];
    const T r = from_rational<T>(rates[k]);
    g.q(tr.from, tr.to) = r;
    if (tr.spike) g.d1(tr.from, tr.to) = r;
    exit[tr.from] += rates[k];
  }
  for (std::size_t i = 0; i < n; ++i) g.q(i, i) = from_rational<T>(-exit[i]);
  return g;
}

namespace {

// Scaling and squaring can double the rounding error with each of its s
// squarings (s ~ log2 ||A t||, e.g. 270 at lambda t = 1e80); in MPFR we work
// with kGuardBits + s guard bits and round the results back to the caller's
// precision, so the answer has (nearly) full precision at any t. Double has
// no such reserve: its relative error grows like 2^s eps (measured on the
// two-state chain: 4e-11 at s = 20, 4e-9 at s = 25, 1e-7 at s = 28, the
// variance wrong by 7x at s = 48), so it refuses plans with more than
// kMaxDoubleSquarings squarings instead of returning wrong digits.
constexpr unsigned kGuardBits = 64;
constexpr int kMaxDoubleSquarings = 25;
// The finite-T moments work on dense n x n blocks (three per product, a
// dozen alive at once, n^3 per squaring): a 3000-state ring needs more than
// 7.7 GB in MPFR (GMP aborts) and minutes in double. Beyond
// these sizes a chain is refused up front (the asymptotic figures, one
// O(n^3) solve, are not limited).
constexpr std::size_t kMaxCountingStatesDouble = 1000, kMaxCountingStatesMpfr = 300;

// The largest total rate out of a state at H (exact).
Rational max_exit_rate(const Model& m, const Rational& H) {
  const auto rates = m.rates(H);
  std::vector<Rational> exit(m.size(), Rational(0));
  for (std::size_t k = 0; k < rates.size(); ++k) exit[m.transitions[k].from] += rates[k];
  Rational max_exit(0);
  for (const auto& e : exit) max_exit = std::max(max_exit, e);
  return max_exit;
}

// Solves the Poisson equation Q y = -f of a chain with y_r = 0, where q
// holds the off-diagonal rates (diagonal ignored) and every state reaches r.
// Row i != r reads exit_i y_i - sum_j q_ij y_j = f_i. Eliminating state k
// (GTH order, r skipped) substitutes y_k = (f_k + sum_j q_kj y_j) / s_k into
// the rows still present: q_ij += q_ik q_kj / s_k, f_i += q_ik f_k / s_k, and
// the pivot s_k is the sum of k's rates to the states still present (r
// included), as in GTH (gth.hpp), so no pivot is formed by a subtraction and
// rates of any spread keep their relative accuracy. Measured against exact
// rationals on 300 random chains of 2-7 states with rates 1e-12..1e12: worst
// relative error of the variance rate 8.4e-16 in double, where the alpha
// shift lost up to all digits. O(n^3).
template <class T>
std::vector<T> poisson_pinned(DenseMatrix<T> q, std::vector<T> f, std::size_t r, const std::string& what) {
  const std::size_t n = q.n;
  std::vector<T> pivot(n, T(0));
  std::vector<bool> present(n, true);
  std::vector<std::size_t> eliminated;
  for (std::size_t k = n; k-- > 0;) {
    if (k == r) continue;
    present[k] = false;
    T s(0);
    for (std::size_t j = 0; j < n; ++j)
      if (present[j]) s += q(k, j);
    if (is_exact_zero(s))
      throw InputError(fmt::format("{}: state {} cannot reach state {}", what, k, r));
    pivot[k] = s;
    for (std::size_t i = 0; i < n; ++i) {
      if (!present[i] || i == r || is_exact_zero(q(i, k))) continue;
      const T m = q(i, k) / s;
      for (std::size_t j = 0; j < n; ++j)
        if (present[j] && j != i) add_product(q(i, j), m, q(k, j));
      add_product(f[i], m, f[k]);
    }
    eliminated.push_back(k);
  }
  // Back substitution, last eliminated first: the states present when k was
  // eliminated are r (y_r = 0) and those eliminated after it.
  std::vector<T> y(n, T(0));
  for (auto it = eliminated.rbegin(); it != eliminated.rend(); ++it) {
    const std::size_t k = *it;
    T acc = f[k];
    for (auto jt = eliminated.rbegin(); jt != it; ++jt) add_product(acc, q(k, *jt), y[*jt]);
    y[k] = acc / pivot[k];
  }
  return y;
}

// log2 of a bound on ||A t||_inf for the Van Loan matrix A of the counting
// moments: rows of Q sum to 2 exit_i in absolute value, rows of D1 - c I to
// at most 2 max exit, so ||A|| <= 4 max exit. -inf when no rate is positive.
double log2_van_loan_norm(const Model& m, const Rational& H, double log2_t) {
  const Rational max_exit = max_exit_rate(m, H);
  if (max_exit == 0) return -std::numeric_limits<double>::infinity();
  return 2.0 + log2_rational(max_exit) + log2_t;
}
int squarings_needed(double log2_norm) {
  return log2_norm > 0 ? static_cast<int>(std::ceil(log2_norm)) + 1 : 0;
}

// A copy of x at the current default precision (Boost copies keep the source's precision).
Mpfr at_default_precision(const Mpfr& x) {
  Mpfr r;
  mpfr_set(r.backend().data(), x.backend().data(), MPFR_RNDN);
  return r;
}

template <class T>
CountingMoments<T> counting_moments_impl(const Model& m, const Rational& H, const std::vector<T>& pi0, const T& t,
                                         const std::string& source);

}  // namespace

template <>
CountingMoments<double> counting_moments(const Model& m, const Rational& H, const std::vector<double>& pi0,
                                         const double& t, const std::string& source) {
  if (!std::isfinite(t)) throw InputError(fmt::format("{}: time horizon {} is not finite in double", source, t));
  if (t > 0) {
    const int s = squarings_needed(log2_van_loan_norm(m, H, detmath::log2(t)));
    if (s > kMaxDoubleSquarings)
      throw InputError(fmt::format("{}: at T = {:g} the matrix exponential needs {} squarings, which can cost double up "
                                   "to {} of its 53 bits; use MPFR",
                                   source, t, s, s));
  }
  auto r = counting_moments_impl<double>(m, H, pi0, t, source);
  if (!std::isfinite(r.mean) || !std::isfinite(r.variance) || !std::isfinite(r.factorial_moment2))
    throw InputError(fmt::format("{}: the counting moments at T = {:g} leave the range of double; use MPFR",
                                 source, t));
  return r;
}

template <>
CountingMoments<Mpfr> counting_moments(const Model& m, const Rational& H, const std::vector<Mpfr>& pi0, const Mpfr& t,
                                       const std::string& source) {
  CountingMoments<Mpfr> wide;
  {
    const double log2_norm = t > 0 ? log2_van_loan_norm(m, H, to_double(Mpfr(log2(t)))) : 0.0;
    // expm plans its scaling from the norm in double (the bound is within 4x of it).
    if (log2_norm >= 1023)
      throw InputError(fmt::format("{}: at T = {} the rates x T reach 2^{:.0f}, beyond the range of double in which "
                                   "the matrix exponential is planned",
                                   source, to_string(t, 6), log2_norm));
    const PrecisionScope guard(precision_bits() + kGuardBits + static_cast<unsigned>(squarings_needed(log2_norm)));
    std::vector<Mpfr> p;
    p.reserve(pi0.size());
    for (const auto& x : pi0) p.push_back(at_default_precision(x));
    wide = counting_moments_impl<Mpfr>(m, H, p, at_default_precision(t), source);
  }
  return {at_default_precision(wide.mean), at_default_precision(wide.variance),
          at_default_precision(wide.factorial_moment2)};
}

namespace {

template <class T>
CountingMoments<T> counting_moments_impl(const Model& m, const Rational& H, const std::vector<T>& pi0, const T& t,
                                         const std::string& source) {
  const std::size_t n = m.size();
  const std::size_t max_states = std::is_same_v<T, double> ? kMaxCountingStatesDouble : kMaxCountingStatesMpfr;
  if (n > max_states)
    throw InputError(fmt::format("{}: {} states; the finite-T counting moments (dense Van Loan exponential, O(n^3) "
                                 "per squaring) take at most {} states in {}",
                                 source, n, max_states, std::is_same_v<T, double> ? "double" : "MPFR"));
  if (pi0.size() != n)
    throw InputError(fmt::format("{}: initial distribution has {} entries for {} states", source, pi0.size(), n));
  for (std::size_t i = 0; i < n; ++i)
    if (pi0[i] < 0) throw InputError(fmt::format("{}: initial distribution: negative entry for state '{}'", source, m.states[i]));
  if (t < 0) throw InputError(source + ": time horizon must be >= 0");
  const auto g = spike_generator<T>(m, H);
  // Centering: with c = lambda (the stationary spike rate; 0 when the chain
  // has several closed classes) the count N(t) - c t has O(1) mean and a
  // variance of the size of Var N(t), so nothing of size (lambda t)^2 is
  // subtracted. E exp(s (N(t) - c t)) = pi0 exp(t K(s)) 1 with
  // K(s) = D0 + e^s D1 - s c I, K'(0) = D1 - c I =: Dc, K''(0) = D1, so
  //   E[N(t) - c t]     = pi0 F1c 1,
  //   E[(N(t) - c t)^2] = 2 pi0 F2c 1 + E N(t),
  // where F1c, F2c are the Van Loan blocks of [[Q, Dc, 0], [0, Q, Dc], [0, 0, Q]] t.
  T c(0);
  try {
    c = solve_stationary<T>(m, H, Method::Auto, source).flux;
  } catch (const InputError&) {
    // several closed classes: no single long-run rate; the uncentered formulas (c = 0) still hold
  }
  // Centering pays only when c t is large: for c t <= 1, E N(t)^2 <= E N(t)
  // roughly and the uncentered sum cancels nothing, whereas the centered mean
  // E[N(t) - c t] + c t cancels to the last digit when E N(t) << c t (a start
  // far from the spiking states: E N(1) of 3e-24 came out as 0 with rates
  // ~1e-12). Uncentered, D1 >= 0 and nothing in the blocks cancels.
  if (!(c * t > T(1))) c = T(0);
  DenseMatrix<T> qt(n), dt(n);
  for (std::size_t i = 0; i < n * n; ++i) {
    qt.a[i] = g.q.a[i] * t;
    dt.a[i] = g.d1.a[i] * t;
  }
  const T ct = c * t;
  for (std::size_t i = 0; i < n; ++i) dt(i, i) -= ct;
  const auto blocks = expm_van_loan(qt, dt);
  const DenseMatrix<T>& f1 = blocks[1];
  const DenseMatrix<T>& f2 = blocks[2];
  T centered_mean(0), f2_sum(0);
  for (std::size_t i = 0; i < n; ++i) {
    if (pi0[i] == 0) continue;
    T row1(0), row2(0);
    for (std::size_t j = 0; j < n; ++j) {
      row1 += f1(i, j);
      row2 += f2(i, j);
    }
    add_product(centered_mean, pi0[i], row1);
    add_product(f2_sum, pi0[i], row2);
  }
  CountingMoments<T> r;
  r.mean = centered_mean + ct;
  r.variance = T(2) * f2_sum + r.mean - centered_mean * centered_mean;
  // E[N(N-1)] = 2 pi0 F2 1 when uncentered; derived as Var + mean^2 - mean
  // only when centered. (Derived at small t it cancels: E[N(N-1)] ~ t^2
  // against E N ~ t, every digit lost at t = 1e-400 in 256 bits.)
  r.factorial_moment2 = c == T(0) ? T(2) * f2_sum : r.variance + r.mean * r.mean - r.mean;
  return r;
}

}  // namespace

template <class T>
AsymptoticCounting<T> asymptotic_counting(const Model& m, const Rational& H, const std::string& source) {
  const std::size_t n = m.size();
  auto st = solve_stationary<T>(m, H, Method::Auto, source);
  const auto g = spike_generator<T>(m, H);
  // v = D1 1 (spike rate out of each state).
  std::vector<T> v(n, T(0));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) v[i] += g.d1(i, j);
  // The variance rate is lambda + 2 theta D1 D v with D the deviation
  // matrix (theta D = 0, D 1 = 0, Q D = 1 theta - I), so D v solves the
  // Poisson equation Q y = lambda 1 - v with theta y = 0. It is solved with
  // one state pinned (poisson_pinned: GTH-style, no subtraction in any pivot)
  // and shifted to theta y = 0. The textbook route, (alpha 1 theta - Q) y = v
  // with alpha the largest exit rate, adds alpha theta_j to every rate, and
  // the small rates are lost beside alpha (three-state sigmoid at H = 1e10: 7
  // digits in double; at H = 1e300 a 256-bit variance rate of 1.525 for an
  // exact 1.131). Using D v rather than Z v = 1 theta v + D v also keeps
  // lambda^2 out of the sum, which would cancel against it.
  T lambda(0);
  for (std::size_t i = 0; i < n; ++i) add_product(lambda, st.pi[i], v[i]);
  std::vector<T> f(n);
  for (std::size_t i = 0; i < n; ++i) f[i] = v[i] - lambda;
  const auto r_state = static_cast<std::size_t>(std::max_element(st.pi.begin(), st.pi.end()) - st.pi.begin());
  auto dv = poisson_pinned(g.q, std::move(f), r_state, source + ": deviation matrix");
  T theta_y(0);
  for (std::size_t i = 0; i < n; ++i) add_product(theta_y, st.pi[i], dv[i]);
  for (auto& x : dv) x -= theta_y;
  T w(0);  // theta D1 D v
  for (std::size_t i = 0; i < n; ++i) {
    if (st.pi[i] == 0) continue;
    T row(0);
    for (std::size_t j = 0; j < n; ++j) add_product(row, g.d1(i, j), dv[j]);
    add_product(w, st.pi[i], row);
  }
  AsymptoticCounting<T> r;
  r.rate = st.flux;
  r.variance_rate = r.rate + T(2) * w;
  r.theta = std::move(st.pi);
  return r;
}

template SpikeGenerator<double> spike_generator(const Model&, const Rational&);
template SpikeGenerator<Mpfr> spike_generator(const Model&, const Rational&);
template SpikeGenerator<Rational> spike_generator(const Model&, const Rational&);
template AsymptoticCounting<double> asymptotic_counting(const Model&, const Rational&, const std::string&);
template AsymptoticCounting<Mpfr> asymptotic_counting(const Model&, const Rational&, const std::string&);
template AsymptoticCounting<Rational> asymptotic_counting(const Model&, const Rational&, const std::string&);

}  // namespace ctmc::solvers
