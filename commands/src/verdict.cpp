#include "ctmc/commands/verdict.hpp"

#include <fmt/format.h>

#include <cmath>
#include <utility>

namespace ctmc::commands {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Reproduced: return "Reproduced";
    case Verdict::NotReproduced: return "Not reproduced";
    case Verdict::Inconclusive: return "Inconclusive";
    case Verdict::NotComparable: return "Not comparable";
  }
  return "?";
}

namespace {

std::string end_text(double x) {
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  return fmt::format("{:.4g}", x);
}

Decision make(Verdict v, const solvers::ConfidenceInterval& x, double threshold, std::string statistic, std::string relation) {
  return {v, std::move(statistic), x, threshold, std::move(relation)};
}

bool has_nan(const solvers::ConfidenceInterval& x) { return std::isnan(x.lo) || std::isnan(x.hi); }

}  // namespace

std::string Decision::evidence() const {
  // An open end prints as a parenthesis.
  const std::string text = fmt::format("{}{}, {}{}", std::isinf(interval.lo) ? "(" : "[", end_text(interval.lo),
                                       end_text(interval.hi), std::isinf(interval.hi) ? ")" : "]");
  return fmt::format("{}: {} {}", statistic, text, relation);
}

Decision decide_below(const solvers::ConfidenceInterval& x, double criterion, std::string statistic) {
  if (has_nan(x) || std::isnan(criterion))
    return make(Verdict::NotComparable, x, criterion, std::move(statistic), "not a number");
  const std::string c = end_text(criterion);
  if (x.hi < criterion) return make(Verdict::Reproduced, x, criterion, std::move(statistic), "< " + c);
  if (x.lo >= criterion) return make(Verdict::NotReproduced, x, criterion, std::move(statistic), ">= " + c);
  return make(Verdict::Inconclusive, x, criterion, std::move(statistic), "reaches " + c);
}

Decision decide_less(const solvers::ConfidenceInterval& a_minus_b, std::string statistic) {
  return decide_below(a_minus_b, 0, std::move(statistic));
}

Decision decide_within_factor(const solvers::ConfidenceInterval& ours, double paper, double factor, std::string statistic) {
  if (!(paper > 0) || !std::isfinite(paper) || !(factor > 1) || has_nan(ours))
    return make(Verdict::NotComparable, ours, paper, std::move(statistic), "no published value to hold it against");
  const double lo = paper / factor, hi = paper * factor;
  const std::string range = fmt::format("[{}, {}]", end_text(lo), end_text(hi));
  if (ours.lo >= lo && ours.hi <= hi)
    return make(Verdict::Reproduced, ours, paper, std::move(statistic), "within " + range);
  if (ours.hi < lo || ours.lo > hi)
    return make(Verdict::NotReproduced, ours, paper, std::move(statistic), "outside " + range);
  return make(Verdict::Inconclusive, ours, paper, std::move(statistic), "reaches outside " + range);
}

}  // namespace ctmc::commands
