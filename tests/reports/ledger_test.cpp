// The claims ledgers' decisions (reports/src/ledger.hpp) on planted sweeps:
// a claim the data cannot decide reads Inconclusive, one they can decide is
// decided, each with the statistic that decided it.
#include <doctest/doctest.h>

#include <string>

#include "../planted_sweep.hpp"
#include "ledger.hpp"

using ctmc::commands::Verdict;
using ctmc::testing::planted_document;
namespace reports = ctmc::reports;

namespace {

std::string k(double v) { return std::to_string(static_cast<long long>(v)); }

// On 1000 images: r 1 meets 1 pp with confidence at SynOps 100 (0.3 pp),
// r 2 might at 96 (0.8 pp), r 3 is ruled out at 10 (3 pp).
const auto decided = [] {
  return planted_document({{{4, 1, 100, 5}}, {{10, 2, 96, 5}}, {{35, 5, 10, 5}}}, 1000);
};
// The same gaps on 100 images: no point meets 1 pp with confidence.
const auto undecided = [] { return planted_document({{{1, 0, 100, 5}}, {{2, 1, 50, 5}}, {{30, 0, 10, 5}}}, 100); };

}  // namespace

TEST_CASE("ledger: a least cost the data pin down is decided against the paper's; one they cannot, Inconclusive") {
  const auto d = decided();
  const auto c = reports::least_cost(d);
  // The range [~95.7, ~100.3] lies inside [80, 125] (paper 100, factor 1.25)...
  const auto match = reports::least_cost_within(c, 100.0, 1.25, "SynOps");
  CHECK(match.verdict == Verdict::Reproduced);
  CHECK(reports::decided_by(match).find("within [80, 125]") != std::string::npos);
  // ... and misses [400, 625] entirely.
  CHECK(reports::least_cost_within(c, 500.0, 1.25, "SynOps").verdict == Verdict::NotReproduced);
  // A paper value the range straddles: [~95.7, ~100.3] reaches outside [64, 100].
  CHECK(reports::least_cost_within(c, 80.0, 1.25, "SynOps").verdict == Verdict::Inconclusive);

  // On 100 images no point meets the criterion with confidence: the range
  // is unbounded above, and the same paper value cannot be decided.
  const auto u = reports::least_cost(undecided());
  const auto open = reports::least_cost_within(u, 100.0, 1.25, "SynOps");
  CHECK(open.verdict == Verdict::Inconclusive);
  CHECK(reports::decided_by(open).find("inf)") != std::string::npos);
  CHECK(reports::meets_criterion(u, 1).verdict == Verdict::Inconclusive);
  CHECK(reports::meets_criterion(c, 1).verdict == Verdict::Reproduced);
  CHECK(reports::least_cost_text(u, k).find("none meets it with confidence") != std::string::npos);
}

TEST_CASE("ledger: a published 'never' against a grid that meets the criterion, and one that cannot") {
  CHECK(reports::least_cost_within(reports::least_cost(decided()), std::nullopt, 1.25, "SynOps").verdict ==
        Verdict::NotReproduced);
  const auto never = planted_document({{{60, 0, 100, 5}}, {{80, 2, 50, 5}}}, 1000);
  const auto n = reports::least_cost(never);
  CHECK(reports::least_cost_within(n, std::nullopt, 1.25, "SynOps").verdict == Verdict::Reproduced);
  CHECK(reports::meets_criterion(n, 1).verdict == Verdict::NotReproduced);
  CHECK(reports::least_cost_less(n, reports::least_cost(decided()), "SynOps").verdict == Verdict::NotComparable);
  CHECK(reports::least_cost_within(reports::least_cost(undecided()), std::nullopt, 1.25, "SynOps").verdict ==
        Verdict::Inconclusive);
}

TEST_CASE("ledger: an ordering is decided only when the least-cost ranges separate") {
  const auto cheap = reports::least_cost(planted_document({{{4, 1, 40, 5}}, {{35, 5, 10, 5}}}, 1000));
  const auto dear = reports::least_cost(decided());
  CHECK(reports::least_cost_less(cheap, dear, "SynOps").verdict == Verdict::Reproduced);
  CHECK(reports::least_cost_less(dear, cheap, "SynOps").verdict == Verdict::NotReproduced);
  // The undecided grid's range reaches from ~49 to infinity: it overlaps the
  // dear range, and lies wholly above the cheap one.
  const auto open = reports::least_cost(undecided());
  CHECK(reports::least_cost_less(open, dear, "SynOps").verdict == Verdict::Inconclusive);
  CHECK(reports::least_cost_less(dear, open, "SynOps").verdict == Verdict::Inconclusive);
  CHECK(reports::least_cost_less(cheap, open, "SynOps").verdict == Verdict::Reproduced);
}

TEST_CASE("ledger: spikes per neuron over the candidate points; conjunctions; decide_above") {
  const auto c = reports::least_cost(decided());  // candidates r 1 (0.50) and r 2 (0.51)
  CHECK(reports::candidates_within(c, &ctmc::sim::SweepPoint::spikes_per_neuron_mean, 0.5, 1.25, "spikes per neuron")
            .verdict == Verdict::Reproduced);
  CHECK(reports::candidates_within(c, &ctmc::sim::SweepPoint::spikes_per_neuron_mean, 2, 1.25, "spikes per neuron")
            .verdict == Verdict::NotReproduced);
  const auto yes = reports::decide_above({0.2, 0.9}, 0, "x");
  const auto maybe = reports::decide_above({-0.2, 0.9}, 0, "y");
  const auto no = reports::decide_above({-0.9, -0.2}, 0, "z");
  CHECK(yes.verdict == Verdict::Reproduced);
  CHECK(maybe.verdict == Verdict::Inconclusive);
  CHECK(no.verdict == Verdict::NotReproduced);
  CHECK(reports::decided_by(yes) == "x: [0.2, 0.9] > 0");
  CHECK(reports::all_of({yes, yes}).verdict == Verdict::Reproduced);
  CHECK(reports::all_of({yes, maybe}).verdict == Verdict::Inconclusive);
  CHECK(reports::all_of({maybe, no, yes}).verdict == Verdict::NotReproduced);
  CHECK(reports::decided_by(reports::all_of({yes, no})) == "x: [0.2, 0.9] > 0; z: [-0.9, -0.2] <= 0");
}
