// The verdict rules (ctmc/commands/verdict.hpp) on claims planted so that the
// data decide them, refute them, or cannot decide them: a gap claim from
// paired counts (exact conditional intervals), an ordering from trial spreads
// (Welch), a published factor.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ctmc/commands/verdict.hpp"

using ctmc::commands::Verdict;
using ctmc::solvers::ConfidenceInterval;
using ctmc::solvers::Sides;

TEST_CASE("decide_below: a gap claim is decided by the interval's ends, Inconclusive where it straddles") {
  using ctmc::commands::decide_below;
  using ctmc::solvers::paired_difference_interval;
  const char* stat = "A_ANN - A_SNN (pp), 95% upper bound, exact paired";
  // 3 discordant images of 10000, 2 against 1: the gap's upper bound is far
  // below 1 pp.
  auto pp = [](ConfidenceInterval x) { return ConfidenceInterval{100 * x.lo, 100 * x.hi}; };
  const auto small = decide_below(pp(paired_difference_interval({2, 1, 10000}, 0.95, Sides::Upper)), 1, stat);
  CHECK(small.verdict == Verdict::Reproduced);
  CHECK(small.evidence().find("< 1") != std::string::npos);
  // 300 against 50 of 1000: a 25 pp gap, whose lower end is above 1 pp.
  const auto large = decide_below(pp(paired_difference_interval({300, 50, 1000}, 0.95)), 1, stat);
  CHECK(large.verdict == Verdict::NotReproduced);
  // 6 against 4 of 100 images (the toy scale): 2 pp, and the interval reaches
  // below 1 pp: the data cannot decide.
  const auto toy = decide_below(pp(paired_difference_interval({6, 4, 100}, 0.95)), 1, stat);
  CHECK(toy.verdict == Verdict::Inconclusive);
  CHECK(toy.evidence().find("reaches 1") != std::string::npos);
  // NaN cannot be decided on.
  CHECK(decide_below({std::nan(""), 1}, 1, stat).verdict == Verdict::NotComparable);
}

TEST_CASE("decide_less: an ordering holds only when the interval of the difference excludes 0") {
  using ctmc::commands::decide_less;
  using ctmc::solvers::welch_interval;
  // SynOps per image over trials: well separated, then overlapping.
  const std::vector<double> a{100, 102, 98, 101}, b{150, 149, 152, 151}, c{101, 99, 103, 100};
  CHECK(decide_less(welch_interval(a, b, 0.95), "SynOps").verdict == Verdict::Reproduced);
  CHECK(decide_less(welch_interval(b, a, 0.95), "SynOps").verdict == Verdict::NotReproduced);
  CHECK(decide_less(welch_interval(a, c, 0.95), "SynOps").verdict == Verdict::Inconclusive);
  // One trial each: no spread, no decision.
  const std::vector<double> one_a{100}, one_b{150};
  const auto d = decide_less(welch_interval(one_a, one_b, 0.95), "SynOps");
  CHECK(d.verdict == Verdict::Inconclusive);
  CHECK(d.evidence().find("(-inf, inf)") != std::string::npos);
}

TEST_CASE("decide_within_factor: a published cost matched within a factor, with the interval of ours") {
  using ctmc::commands::decide_within_factor;
  CHECK(decide_within_factor({9, 11}, 10, 1.25, "SynOps").verdict == Verdict::Reproduced);
  CHECK(decide_within_factor({20, 30}, 10, 1.25, "SynOps").verdict == Verdict::NotReproduced);
  CHECK(decide_within_factor({7, 11}, 10, 1.25, "SynOps").verdict == Verdict::Inconclusive);
  CHECK(decide_within_factor({9, 11}, std::nan(""), 1.25, "SynOps").verdict == Verdict::NotComparable);
  CHECK(decide_within_factor({9, 11}, 0, 1.25, "SynOps").verdict == Verdict::NotComparable);
  CHECK(std::string(ctmc::commands::verdict_name(Verdict::Inconclusive)) == "Inconclusive");
}
