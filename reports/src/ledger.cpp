#include "ledger.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "report_sweeps.hpp"

namespace ctmc::reports {

using commands::Verdict;

sim::CheapestWithConfidence least_cost(const sim::SweepDocument& doc, sim::SweepCost cost, sim::SamplerKind sampler) {
  return sim::cheapest_with_confidence(doc, sampler, cost, doc.spec.criterion, kLedgerConfidence);
}

namespace {

// "No cell can meet the criterion" (a claim about a cost there is then Not
// reproduced), with the least gap's bounds as the evidence.
Decision cannot_meet(const sim::CheapestWithConfidence& c) {
  Decision d = meets_criterion(c, c.criterion);
  d.statistic = "no cell can meet the criterion: " + d.statistic;
  return d;
}

}  // namespace

Decision meets_criterion(const sim::CheapestWithConfidence& c, double criterion) {
  return commands::decide_below(
      c.least_gap, criterion,
      fmt::format("least A_ANN - A_SNN over the grid (pp), {:g}% one-sided bounds per point", 100 * kLedgerConfidence));
}

Decision least_cost_within(const sim::CheapestWithConfidence& c, const std::optional<double>& paper, double factor,
                           const std::string& cost_name) {
  const std::string statistic =
      fmt::format("least {} under the criterion, {:g}% range", cost_name, 100 * kLedgerConfidence);
  if (!paper) {
    // The published claim is that no point meets the criterion: the
    // decision of meets_criterion, turned over.
    Decision d = meets_criterion(c, c.criterion);
    if (d.verdict == Verdict::Reproduced)
      d.verdict = Verdict::NotReproduced;
    else if (d.verdict == Verdict::NotReproduced)
      d.verdict = Verdict::Reproduced;
    d.statistic += "; the paper: never";
    return d;
  }
  if (c.none_can_meet()) return cannot_meet(c);
  return commands::decide_within_factor(c.cost, *paper, factor, statistic);
}

Decision least_cost_less(const sim::CheapestWithConfidence& a, const sim::CheapestWithConfidence& b,
                         const std::string& cost_name) {
  const std::string statistic = fmt::format("difference of the least {} ranges", cost_name);
  if (a.none_can_meet() || b.none_can_meet())
    return {Verdict::NotComparable, statistic, {}, 0, "one side can never meet the criterion"};
  return commands::decide_less({a.cost.lo - b.cost.hi, a.cost.hi - b.cost.lo}, statistic);
}

Decision candidates_within(const sim::CheapestWithConfidence& c, double sim::SweepPoint::*member, double paper,
                           double factor, const std::string& name) {
  const std::string statistic = fmt::format("{} over the candidate points", name);
  if (c.none_can_meet()) return cannot_meet(c);
  solvers::ConfidenceInterval range{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  const auto widen = [&](const sim::SweepPoint* p) {
    range.lo = std::min(range.lo, p->*member);
    range.hi = std::max(range.hi, p->*member);
  };
  for (const sim::SweepPoint* p : c.possible) widen(p);
  if (c.confident) widen(c.confident);
  return commands::decide_within_factor(range, paper, factor, statistic);
}

Decision decide_above(const solvers::ConfidenceInterval& x, double threshold, std::string statistic) {
  Decision d = commands::decide_below({-x.hi, -x.lo}, -threshold, std::move(statistic));
  d.interval = x;
  d.threshold = threshold;
  const std::string t = fmt::format("{:.4g}", threshold);
  switch (d.verdict) {
    case Verdict::Reproduced: d.relation = "> " + t; break;
    case Verdict::NotReproduced: d.relation = "<= " + t; break;
    case Verdict::Inconclusive: d.relation = "reaches " + t; break;
    case Verdict::NotComparable: break;
  }
  return d;
}

Decision all_of(const std::vector<Decision>& parts) {
  Decision d;
  d.verdict = Verdict::Reproduced;
  const auto rank = [](Verdict v) {
    switch (v) {
      case Verdict::NotReproduced: return 3;
      case Verdict::NotComparable: return 2;
      case Verdict::Inconclusive: return 1;
      case Verdict::Reproduced: return 0;
    }
    return 0;
  };
  for (const Decision& p : parts) {
    if (rank(p.verdict) > rank(d.verdict)) d.verdict = p.verdict;
    d.statistic += (d.statistic.empty() ? "" : "; ") + decided_by(p);
  }
  return d;
}

std::string ledger_methods() {
  return fmt::format(
      "Claims ledger, each test in one sentence (all intervals {0:g}%, README \"How verdicts are decided\"). An "
      "accuracy gap is a paired comparison on the same test images: one run gives the exact interval conditional "
      "on the discordant images (McNemar, Clopper-Pearson), several runs the mean gap with a t interval whose "
      "standard error is the mean of the runs' paired standard errors. A cost per image is the mean over the runs "
      "with the runs' standard errors sd/√n bounded the same way. A cell meets the criterion with confidence when "
      "its gap's one-sided upper bound is below it, and might when its one-sided lower bound is. The least cost "
      "under the criterion is the range from the lowest cost bound of the cells that might to the upper cost "
      "bound of the cheapest cell that meets it. A published cost is reproduced when that range lies within a "
      "factor 1.25 of it. An ordering is reproduced when the two ranges separate, and Inconclusive when they "
      "overlap.",
      100 * kLedgerConfidence);
}

std::string answer(const Decision& d) {
  switch (d.verdict) {
    case Verdict::Reproduced: return "yes";
    case Verdict::NotReproduced: return "no";
    case Verdict::Inconclusive: return "undecided";
    case Verdict::NotComparable: return "—";
  }
  return "—";
}

std::string range_text(const solvers::ConfidenceInterval& r) {
  if (!(r.lo <= r.hi)) return "none";
  const std::string lo = fmt::format("{:.2f}", r.lo), hi = fmt::format("{:.2f}", r.hi);
  return lo == hi ? lo : lo + "–" + hi;
}

std::string decided_by(const Decision& d) { return d.relation.empty() ? d.statistic : d.evidence(); }

std::string least_cost_text(const sim::CheapestWithConfidence& c, std::string (*number)(double)) {
  if (c.none_can_meet()) return "none can meet it";
  const std::string range =
      std::isinf(c.cost.hi) ? fmt::format("≥ {}", number(c.cost.lo))
                            : fmt::format("{}–{}", number(c.cost.lo), number(c.cost.hi));
  std::string where = c.confident ? fmt::format("meets it with confidence at {}", cell_text(*c.confident))
                                  : std::string("none meets it with confidence");
  // The cells that might be cheaper, cheapest first, the first few by name.
  constexpr std::size_t kNamed = 3;
  if (!c.possible.empty()) {
    std::string named;
    for (std::size_t i = 0; i < std::min(kNamed, c.possible.size()); ++i)
      named += fmt::format("{}{}", i ? "; " : "", cell_text(*c.possible[i]));
    if (c.possible.size() > kNamed) named += fmt::format("; {} more", c.possible.size() - kNamed);
    where += fmt::format("; {} might: {}", c.confident ? "cheaper cells that" : "cells that", named);
  }
  return fmt::format("{} ({})", range, where);
}

}  // namespace ctmc::reports
