// The intervals of a sweep point's gaps and costs, and the cheapest point
// under the criterion with confidence (sweep_statistics.hpp), on documents
// built from planted run records: the exact paired interval for one run, the
// bounded standard error for several, and which points are ruled in or out.
#include <doctest/doctest.h>

#include <cmath>

#include "../planted_sweep.hpp"
#include "ctmc/sim/studies/sweep_statistics.hpp"
#include "ctmc/solvers/intervals.hpp"

using namespace ctmc::sim;
using ctmc::solvers::PairedCounts;
using ctmc::solvers::Sides;

namespace {

using ctmc::testing::Planted;
const auto document = ctmc::testing::planted_document;

const SweepPoint& point_at(const SweepDocument& d, double rate) {
  const SweepPoint* p = d.find_point(SamplerKind::Exact, 0.1, rate, 1);
  REQUIRE(p);
  return *p;
}

}  // namespace

TEST_CASE("one run: the gap's interval is the exact paired interval, in percentage points") {
  const SweepDocument d = document({{{12, 3, 100, 10}}}, 1000);
  const auto x = gap_interval(d, point_at(d, 1), GapKind::AnnSnn, 0.95);
  const auto ref = ctmc::solvers::paired_difference_interval({12, 3, 1000}, 0.95);
  CHECK(x.lo == doctest::Approx(100 * ref.lo).epsilon(1e-15));
  CHECK(x.hi == doctest::Approx(100 * ref.hi).epsilon(1e-15));
  CHECK(x.contains(0.9));  // the point gap, 9 images of 1000
  // The mean field agrees with the ANN on every image: no mismatch to bound.
  const auto fit = gap_interval(d, point_at(d, 1), GapKind::AnnMf, 0.95);
  CHECK(fit.lo == 0);
  CHECK(fit.hi == 0);
}

TEST_CASE("several trials: the mean gap, and a standard error no smaller than the runs' mean") {
  // Two trials on 400 images: gaps 2 pp and 1 pp. Each run's paired
  // standard error is sqrt((m - n d^2) / (n (n - 1))).
  const SweepDocument d = document({{{10, 2, 100, 10}, {6, 2, 110, 12}}}, 400);
  const GapEstimate g = gap_estimate(d, point_at(d, 1), GapKind::AnnSnn);
  const auto se = [](double m, double dd, double n) { return std::sqrt((m - n * dd * dd) / (n * (n - 1))); };
  CHECK(g.estimate == doctest::Approx(1.5));
  CHECK(g.standard_error == doctest::Approx(100 * (se(12, 0.02, 400) + se(8, 0.01, 400)) / 2));
  CHECK(g.images == 400);
  const auto x = gap_interval(d, point_at(d, 1), GapKind::AnnSnn, 0.95);
  const auto ref = ctmc::solvers::standard_error_interval(1.5, g.standard_error, 399, 0.95);
  CHECK(x.lo == doctest::Approx(ref.lo));
  CHECK(x.hi == doctest::Approx(ref.hi));
  // The cost: the mean over the trials, each run's sd / sqrt(n) averaged.
  const auto c = cost_interval(d, point_at(d, 1), SweepCost::SynOps, 0.95);
  const auto cref = ctmc::solvers::standard_error_interval(105, (10 + 12) / 2.0 / 20, 399, 0.95);
  CHECK(c.lo == doctest::Approx(cref.lo));
  CHECK(c.hi == doctest::Approx(cref.hi));
}

TEST_CASE("the cheapest point under the criterion: ruled in, might be, ruled out") {
  // On 1000 images: r 1 costs 100 at a gap of 0.3 pp (meets 1 pp with
  // confidence); r 2 costs 50 at 0.8 pp (its upper bound reaches 1 pp: it
  // might); r 3 costs 10 at 3 pp (its lower bound is above 1 pp: ruled out).
  const SweepDocument d = document({{{4, 1, 100, 5}}, {{10, 2, 50, 5}}, {{35, 5, 10, 5}}}, 1000);
  const CheapestWithConfidence c = cheapest_with_confidence(d, SamplerKind::Exact, SweepCost::SynOps, 1, 0.95);
  REQUIRE(c.confident);
  CHECK(c.confident->rate == 1);
  REQUIRE(c.possible.size() == 1);
  CHECK(c.possible[0]->rate == 2);
  // The least cost lies between the candidates' lower bound and the
  // confident point's upper bound.
  CHECK(c.cost.lo < 50);
  CHECK(c.cost.lo > 49);
  CHECK(c.cost.hi > 100);
  CHECK(c.cost.hi < 101);
  CHECK_FALSE(c.none_can_meet());
  // The least gap's bounds: r 1's upper bound is the lowest below 1 pp.
  CHECK(c.least_gap.hi < 1);
  CHECK(c.least_gap.hi == gap_interval(d, point_at(d, 1), GapKind::AnnSnn, 0.95, Sides::Upper).hi);
  CHECK(c.least_gap.lo == gap_interval(d, point_at(d, 1), GapKind::AnnSnn, 0.95, Sides::Lower).lo);

  // The same points on 100 images: nothing is sure any more. The 0.3 pp
  // point's upper bound reaches 1 pp, so no point meets it with confidence,
  // and the least cost is unbounded above.
  const SweepDocument small = document({{{1, 0, 100, 5}}, {{2, 1, 50, 5}}, {{30, 0, 10, 5}}}, 100);
  const CheapestWithConfidence s = cheapest_with_confidence(small, SamplerKind::Exact, SweepCost::SynOps, 1, 0.95);
  CHECK_FALSE(s.confident);
  CHECK(s.possible.size() == 2);
  CHECK(std::isinf(s.cost.hi));

  // Every point's lower bound above the criterion: none can meet it.
  const SweepDocument bad = document({{{60, 0, 100, 5}}, {{80, 2, 50, 5}}}, 1000);
  const CheapestWithConfidence b = cheapest_with_confidence(bad, SamplerKind::Exact, SweepCost::SynOps, 1, 0.95);
  CHECK(b.none_can_meet());
  CHECK(b.least_gap.lo >= 1);
  CHECK(b.cost.lo > b.cost.hi);
}
