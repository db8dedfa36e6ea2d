// The claims ledgers' decisions (report conversion and report deep): each
// claim decided by a confidence interval, with the verdict type of
// commands/verdict.hpp, so that a row says what decided it and reads
// Inconclusive where the data cannot decide (README "Reports": how verdicts
// are decided).
//
// Every interval is at kLedgerConfidence. A sweep's least cost under its
// criterion is not a point but a range (sim::cheapest_with_confidence): from
// the cheapest point the data do not rule out to the cheapest point that
// meets the criterion with confidence.
// Internal header of reports (not installed); tests include it as "ledger.hpp".
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ctmc/commands/verdict.hpp"
#include "ctmc/sim/studies/sweep_statistics.hpp"

namespace ctmc::reports {

using commands::Decision;

inline constexpr double kLedgerConfidence = 0.95;

// The least cost of `doc`'s sampler under the document's criterion.
sim::CheapestWithConfidence least_cost(const sim::SweepDocument& doc, sim::SweepCost cost = sim::SweepCost::SynOps,
                                       sim::SamplerKind sampler = sim::SamplerKind::Exact);

// "Some point of the grid meets the criterion": Reproduced when one meets it
// with confidence, Not reproduced when no point can, else Inconclusive.
Decision meets_criterion(const sim::CheapestWithConfidence& c, double criterion);

// "The least cost is within `factor` of the published one": the least-cost
// range held against [paper / factor, paper x factor]. A published "never"
// (nullopt) is Reproduced when no point can meet the criterion, Not
// reproduced when one meets it with confidence.
Decision least_cost_within(const sim::CheapestWithConfidence& c, const std::optional<double>& paper, double factor,
                           const std::string& cost_name);

// "A's least cost is below B's": the interval of the difference of the two
// ranges, [a.lo - b.hi, a.hi - b.lo], held against 0. Not comparable when
// either can never meet the criterion.
Decision least_cost_less(const sim::CheapestWithConfidence& a, const sim::CheapestWithConfidence& b,
                         const std::string& cost_name);

// The candidates' `member` (e.g. spikes per neuron) against a published
// value: the range of the member over the points that may be the cheapest
// under the criterion (possible and confident), held against [paper /
// factor, paper x factor]. Not reproduced when no point can meet it.
Decision candidates_within(const sim::CheapestWithConfidence& c, double sim::SweepPoint::*member, double paper,
                           double factor, const std::string& name);

// "X is above `threshold`": Reproduced when the interval's lower end is
// above it, Not reproduced when its upper end is at or below it, else
// Inconclusive (commands::decide_below's mirror).
Decision decide_above(const solvers::ConfidenceInterval& x, double threshold, std::string statistic);

// A conjunction: Not reproduced when a part is not, else Not comparable when
// a part is, else Inconclusive when a part is, else Reproduced; its evidence
// is the parts' evidence joined.
Decision all_of(const std::vector<Decision>& parts);

// The ledger's tests, one sentence each, for a report's methods section.
std::string ledger_methods();

// A yes/no claim's own answer: "yes" (Reproduced), "no" (Not reproduced),
// "undecided" (Inconclusive), "—" (Not comparable).
std::string answer(const Decision& d);

// A range of values as text: "0.87" when its ends print alike, else
// "0.82–0.91" ({:.2f}); "none" when empty.
std::string range_text(const solvers::ConfidenceInterval& r);

// What decided a row: Decision::evidence(), or a conjunction's joined parts.
std::string decided_by(const Decision& d);

// The least cost in words: "13.2k–18.1k (meets it with confidence at τ 0.05,
// r 5, T 30; cheaper cells that might: τ 0.05, r 5, T 20; ...)", the first
// three cells that might by name.
// `number` prints a cost.
std::string least_cost_text(const sim::CheapestWithConfidence& c, std::string (*number)(double));

}  // namespace ctmc::reports
