// Confidence intervals for the verdicts of the reports' claims ledgers: a
// claim is decided only where the data decide it (README "Reports": how
// verdicts are decided).
//
// Every interval is computed in 100-digit MPFR (the tails by exact sums or
// through quantiles.hpp's critical values) and rounded outwards to double, so
// it contains the exact interval of its method and has the same bits on every
// machine.
//
// Methods:
//   binomial_interval   Clopper & Pearson (1934), "The use of confidence or
//                       fiducial limits illustrated in the case of the
//                       binomial", Biometrika 26: the exact interval of a
//                       proportion, from the binomial tails;
//   paired_difference   the accuracy difference of two classifiers scored on
//                       the same n items, conditional on the m = n10 + n01
//                       discordant items (the McNemar (1947) setting: given m,
//                       n10 ~ Binomial(m, pi) and the difference is
//                       m (2 pi - 1) / n), with Clopper-Pearson for pi;
//   mean_interval       Student's t interval of a mean from n >= 2 values;
//   standard_error_interval  the same from an estimate and a standard error;
//   welch_interval      the difference of two means with unequal variances,
//                       Welch (1947), with the Welch-Satterthwaite degrees of
//                       freedom rounded down to a whole number (fewer degrees
//                       of freedom widen the interval: conservative).
// `confidence` is the coverage in (0, 1); Sides::Two puts (1 - confidence) / 2
// in each tail, Sides::Upper and Sides::Lower all of it in the one tail that
// bounds the claim (an upper bound for "below a criterion"); the other end is
// then the quantity's own limit: 0 or 1 for a proportion, -m/n or m/n for a
// paired difference, -infinity or infinity for a mean.
#pragma once
#include <cstdint>
#include <span>

namespace ctmc::solvers {

enum class Sides { Two, Upper, Lower };

struct ConfidenceInterval {
  double lo = 0, hi = 0;
  double width() const { return hi - lo; }
  bool contains(double x) const { return lo <= x && x <= hi; }
};

// The exact interval of a proportion from k successes in n trials
// (0 <= k <= n, n >= 1): [0, ...] for k = 0 and [..., 1] for k = n.
// std::domain_error for other arguments or a confidence outside (0, 1).
ConfidenceInterval binomial_interval(std::uint64_t k, std::uint64_t n, double confidence, Sides sides = Sides::Two);

// A paired comparison on the same n items: n10 items only A got right, n01
// only B, the rest both or neither. The interval of A's accuracy minus B's
// (fractions, in [-1, 1]) conditional on the discordant count; [0, 0] when
// there is none (the two agree on every item).
struct PairedCounts {
  std::uint64_t n10 = 0, n01 = 0, n = 0;
  double difference() const { return n ? (double(n10) - double(n01)) / double(n) : 0.0; }
};
ConfidenceInterval paired_difference_interval(const PairedCounts& c, double confidence, Sides sides = Sides::Two);

// Student's t interval of the mean of `values` (n >= 2; one value gives the
// whole line, (-inf, inf): a single trial cannot bound a mean).
ConfidenceInterval mean_interval(std::span<const double> values, double confidence, Sides sides = Sides::Two);

// Student's t interval of an estimate from its standard error and degrees of
// freedom (dof >= 1, rounded down to a whole number): estimate -/+ t(dof) se, for estimates whose standard
// error is bounded rather than computed from one sample (the reports' means
// over runs that share their test images). se = 0 gives the point; a
// standard error or estimate that is not finite, the whole line.
ConfidenceInterval standard_error_interval(double estimate, double standard_error, double dof, double confidence,
                                           Sides sides = Sides::Two);

// The interval of mean(a) - mean(b) (Welch); each needs n >= 2, else the
// whole line. Two samples without spread give the point difference.
ConfidenceInterval welch_interval(std::span<const double> a, std::span<const double> b, double confidence,
                        Sides sides = Sides::Two);

}  // namespace ctmc::solvers
