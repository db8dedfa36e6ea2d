#include "ctmc/solvers/intervals.hpp"

#include <mpfr.h>

#include <boost/multiprecision/mpfr.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "ctmc/solvers/quantiles.hpp"

namespace ctmc::solvers {
namespace {

namespace bmp = boost::multiprecision;
using Mp = bmp::number<bmp::mpfr_float_backend<100>, bmp::et_off>;

// Bisection of [0, 1] stops when the bracket is narrower than 2^-70 of its
// lower end (far below a double's resolution of the limit; the limit is
// then rounded outwards from the bracket's outer end), or after 1200 halvings
// (a limit below 2^-1100: rounds to the smallest doubles anyway).
constexpr int kMaxBisections = 1200;
constexpr double kInf = std::numeric_limits<double>::infinity();

double round_down(const Mp& x) { return mpfr_get_d(x.backend().data(), MPFR_RNDD); }
double round_up(const Mp& x) { return mpfr_get_d(x.backend().data(), MPFR_RNDU); }

void check_confidence(double confidence, const char* what) {
  if (!(confidence > 0 && confidence < 1))
    throw std::domain_error(std::string(what) + ": confidence " + std::to_string(confidence) + " is not in (0, 1)");
}

// The tail probability each bound of an interval leaves out: (1 - c) / 2 on
// both sides, 1 - c on the one side asked for, 0 (no bound) on the other.
struct Tails {
  double lower = 0, upper = 0;
};
Tails tails(double confidence, Sides sides) {
  switch (sides) {
    case Sides::Two: return {(1 - confidence) / 2, (1 - confidence) / 2};
    case Sides::Upper: return {0, 1 - confidence};
    case Sides::Lower: return {1 - confidence, 0};
  }
  return {};
}

// P(X <= j) for X ~ Binomial(n, p), 0 < p < 1: t_0 = q^n, t_{i+1} = t_i
// (n - i) / (i + 1) p / q, summed up to j.
Mp binomial_cdf(std::uint64_t j, std::uint64_t n, const Mp& p) {
  const Mp q = 1 - p, ratio = p / q;
  Mp term = bmp::pow(q, Mp(n)), sum = term;
  for (std::uint64_t i = 0; i < j; ++i) {
    term *= ratio * Mp(n - i) / Mp(i + 1);
    sum += term;
  }
  return sum;
}

// P(X >= k) from the shorter of the two sums (X >= k is n - X <= n - k, and
// n - X ~ Binomial(n, 1 - p)); the 100 digits absorb the cancellation of
// 1 - P(X <= k - 1) for tails down to 1e-50.
Mp binomial_upper_tail(std::uint64_t k, std::uint64_t n, const Mp& p) {
  if (k == 0) return 1;
  if (k - 1 < n - k) return 1 - binomial_cdf(k - 1, n, p);
  return binomial_cdf(n - k, n, 1 - p);
}

// The p in [0, 1] where an increasing tail(p) crosses `target`, as a
// bracket [lo, hi] that contains it.
template <class Tail>
std::pair<Mp, Mp> solve_increasing(const Tail& tail, const Mp& target) {
  Mp lo = 0, hi = 1;
  const Mp rel = bmp::ldexp(Mp(1), -70);
  for (int i = 0; i < kMaxBisections && hi - lo > lo * rel; ++i) {
    const Mp mid = (lo + hi) / 2;
    (tail(mid) < target ? lo : hi) = mid;
  }
  return {lo, hi};
}

// Clopper-Pearson in MPFR: the lower limit solves P(X >= k | p) = a_lo, the
// upper P(X <= k | p) = a_hi, i.e. P(X >= k + 1 | p) = 1 - a_hi (both tails
// increasing in p). Each limit is the outer end of its bracket.
std::pair<Mp, Mp> clopper_pearson(std::uint64_t k, std::uint64_t n, const Tails& a) {
  Mp lo = 0, hi = 1;
  if (a.lower > 0 && k > 0)
    lo = solve_increasing([&](const Mp& p) { return binomial_upper_tail(k, n, p); }, Mp(a.lower)).first;
  if (a.upper > 0 && k < n)
    hi = solve_increasing([&](const Mp& p) { return binomial_upper_tail(k + 1, n, p); }, Mp(1) - Mp(a.upper)).second;
  return {lo, hi};
}

struct Moments {
  Mp mean, var;  // the sample variance (n - 1 in the denominator)
};
Moments moments(std::span<const double> v) {
  Mp sum = 0;
  for (double x : v) sum += Mp(x);
  const Mp mean = sum / Mp(v.size());
  Mp ss = 0;
  for (double x : v) ss += (Mp(x) - mean) * (Mp(x) - mean);
  return {mean, v.size() > 1 ? Mp(ss / Mp(v.size() - 1)) : Mp(0)};
}

void check_finite(std::span<const double> v, const char* what) {
  for (double x : v)
    if (!std::isfinite(x)) throw std::domain_error(std::string(what) + ": a value is not finite");
}

// The critical value t with P(T > t) = tail, one ulp up: the quantile is
// correctly rounded, so this one is at least the exact value.
double critical_t(double dof, double tail) {
  return std::nextafter(students_t_upper_quantile(dof, tail), kInf);
}

// centre -/+ t_lower se, t_upper se, rounded outwards; a tail of 0 leaves
// that side unbounded.
ConfidenceInterval t_interval(const Mp& centre, const Mp& se, double dof, const Tails& a) {
  ConfidenceInterval r{-kInf, kInf};
  if (a.lower > 0) r.lo = round_down(centre - Mp(critical_t(dof, a.lower)) * se);
  if (a.upper > 0) r.hi = round_up(centre + Mp(critical_t(dof, a.upper)) * se);
  return r;
}

}  // namespace

ConfidenceInterval binomial_interval(std::uint64_t k, std::uint64_t n, double confidence, Sides sides) {
  check_confidence(confidence, "binomial_interval");
  if (n == 0 || k > n)
    throw std::domain_error("binomial_interval: " + std::to_string(k) + " successes in " + std::to_string(n) +
                            " trials");
  const auto [lo, hi] = clopper_pearson(k, n, tails(confidence, sides));
  return {round_down(lo), round_up(hi)};
}

ConfidenceInterval paired_difference_interval(const PairedCounts& c, double confidence, Sides sides) {
  check_confidence(confidence, "paired_difference_interval");
  const std::uint64_t m = c.n10 + c.n01;
  if (c.n == 0 || m > c.n || m < c.n10)
    throw std::domain_error("paired_difference_interval: " + std::to_string(c.n10) + " and " +
                            std::to_string(c.n01) + " discordant items of " + std::to_string(c.n));
  if (m == 0) return {0, 0};
  const auto [lo, hi] = clopper_pearson(c.n10, m, tails(confidence, sides));
  // difference = m (2 pi - 1) / n, increasing in pi.
  const Mp scale = Mp(m) / Mp(c.n);
  return {round_down(scale * (2 * lo - 1)), round_up(scale * (2 * hi - 1))};
}

ConfidenceInterval mean_interval(std::span<const double> values, double confidence, Sides sides) {
  check_confidence(confidence, "mean_interval");
  check_finite(values, "mean_interval");
  if (values.empty()) throw std::domain_error("mean_interval: no values");
  if (values.size() < 2) return {-kInf, kInf};
  const Moments m = moments(values);
  const Mp se = bmp::sqrt(m.var / Mp(values.size()));
  return t_interval(m.mean, se, double(values.size() - 1), tails(confidence, sides));
}

ConfidenceInterval standard_error_interval(double estimate, double standard_error, double dof, double confidence,
                                           Sides sides) {
  check_confidence(confidence, "standard_error_interval");
  if (!(dof >= 1)) throw std::domain_error("standard_error_interval: degrees of freedom " + std::to_string(dof) + " < 1");
  if (!std::isfinite(estimate) || !std::isfinite(standard_error)) return {-kInf, kInf};
  if (standard_error < 0) throw std::domain_error("standard_error_interval: negative standard error");
  if (standard_error == 0) return {estimate, estimate};
  return t_interval(Mp(estimate), Mp(standard_error), std::floor(std::min(dof, 1e6)), tails(confidence, sides));
}

ConfidenceInterval welch_interval(std::span<const double> a, std::span<const double> b, double confidence, Sides sides) {
  check_confidence(confidence, "welch_interval");
  check_finite(a, "welch_interval");
  check_finite(b, "welch_interval");
  if (a.empty() || b.empty()) throw std::domain_error("welch_interval: no values");
  if (a.size() < 2 || b.size() < 2) return {-kInf, kInf};
  const Moments ma = moments(a), mb = moments(b);
  const Mp va = ma.var / Mp(a.size()), vb = mb.var / Mp(b.size());
  const Mp diff = ma.mean - mb.mean;
  if (va + vb == 0) return {round_down(diff), round_up(diff)};
  // Welch-Satterthwaite, rounded down to a whole number within the
  // quantile's range [1, 10^6].
  const Mp nu = (va + vb) * (va + vb) / (va * va / Mp(a.size() - 1) + vb * vb / Mp(b.size() - 1));
  const double dof = std::min(1e6, std::max(1.0, std::floor(round_down(nu))));
  return t_interval(diff, bmp::sqrt(va + vb), dof, tails(confidence, sides));
}

}  // namespace ctmc::solvers
