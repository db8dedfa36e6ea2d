// One verdict type for every claim the tool decides (the claims checker and
// the reports' ledgers), and the rules that decide a claim from a confidence
// interval (solvers/intervals.hpp), so that a verdict says how sure it is:
//
//   Reproduced      the interval lies where the claim says;
//   Not reproduced  the interval lies where the claim says it does not;
//   Inconclusive    the interval reaches both sides: the data cannot decide
//                   (more images or trials would; the row shows how wide);
//   Not comparable  no statistic to decide by (the quantity is missing on a
//                   side, or not of the claim's kind).
//
// A Decision carries what decided it: the statistic's name, its interval
// and the threshold it was held against, in the words a ledger prints.
#pragma once
#include <string>

#include "ctmc/solvers/intervals.hpp"

namespace ctmc::commands {

enum class Verdict { Reproduced, NotReproduced, Inconclusive, NotComparable };

// "Reproduced", "Not reproduced", "Inconclusive", "Not comparable".
const char* verdict_name(Verdict v);

struct Decision {
  Verdict verdict = Verdict::NotComparable;
  std::string statistic;                 // e.g. "A_ANN - A_SNN (pp), 95% upper bound, exact paired"
  solvers::ConfidenceInterval interval;  // the statistic's interval
  double threshold = 0;                  // what the interval was held against
  std::string relation;                  // where it lies: "< 1", "reaches 0", "within [8, 12.5]"
  // "statistic: [lo, hi] < threshold" and the like: a ledger's evidence.
  std::string evidence() const;
};

// "X is below `criterion`": Reproduced when the interval's upper end is below
// it, Not reproduced when its lower end is at or above it, else Inconclusive.
Decision decide_below(const solvers::ConfidenceInterval& x, double criterion, std::string statistic);

// "A needs less than B", from the interval of A - B: Reproduced when it lies
// below 0, Not reproduced when above 0, Inconclusive when it contains 0.
Decision decide_less(const solvers::ConfidenceInterval& a_minus_b, std::string statistic);

// "ours matches the published value within a factor f" (f > 1): Reproduced
// when the interval lies inside [paper / f, paper * f], Not reproduced when
// it misses that range, Inconclusive when it reaches both in and out. A
// paper value that is not a positive finite number: Not comparable.
Decision decide_within_factor(const solvers::ConfidenceInterval& ours, double paper, double factor, std::string statistic);

}  // namespace ctmc::commands
