// The fit certificates as the fits report's tables show them.
#include <fmt/format.h>

#include <cmath>

#include "ctmc/reports/fit_certificates.hpp"
#include "ctmc/reports/writer.hpp"

namespace ctmc::reports {

std::string sup_text(const SupCell& c) {
  if (!c.sup) return "undefined (see summary)";
  const auto& s = *c.sup;
  if (s.converged) return fmt_sci(s.upper);
  if (!std::isfinite(s.upper)) return fmt::format("not bounded (>= {})", fmt_sci(s.lower, 1));
  return fmt::format("<= {} (>= {})", fmt_sci(s.upper, 1), fmt_sci(s.lower, 1));
}

std::string optimality_text(const proofs_check::OptimalityResult& r, double rel_gap) {
  // A better point found by the search is stated (the row's MSE is then not the best known).
  const std::string improved =
      r.best_centre.empty() ? "" : fmt::format("; the search found MSE {}", fmt_sci(r.incumbent));
  if (r.certified) return fmt::format("<= {} (certified{})", fmt_pct(rel_gap, 1), improved);
  if (r.lower_bound <= 0) return fmt::format("no bound ({} boxes{})", fmt_int(r.boxes), improved);
  // A gap of 100% or more reads better as a factor: "MSE <= 68x the bound".
  const std::string gap =
      r.gap < 1 ? fmt_pct(r.gap, 1) : fmt::format("MSE {}x the bound", fmt_g(r.gap + 1, 3));
  return fmt::format("{} (bound {}{}{})", gap, fmt_sci(r.lower_bound),
                     r.exhausted ? fmt::format(", {} boxes", fmt_int(r.boxes)) : "", improved);
}

}  // namespace ctmc::reports
