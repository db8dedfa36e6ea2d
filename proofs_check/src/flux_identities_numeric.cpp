// Numeric checks of the flux identities: exact rational GTH, MPFR GTH at
// several precisions, MPFI enclosures, and double GTH beside Eigen's dense LU
// (see flux_identities.hpp for what each one claims).
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "ctmc/proofs_check/flux_identities.hpp"
#include "ctmc/solvers/dense_matrix.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/det_math.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/linear_solve.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/solvers/stationary.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ctmc::proofs_check {

using solvers::Interval;
using solvers::Mpfr;
using solvers::Stationary;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Digits a double can hold: log10(2^53).
const double kDoubleDigits = 53 * detmath::log10(2.0);

struct Point {
  std::vector<Rational> params;
  FamilyInstance inst;
  Rational exact;
  bool has_exact = false;  // false when the closed form's denominator vanishes
};

std::string describe(const FamilyCase& c, const std::vector<Rational>& p) {
  std::string s;
  for (std::size_t i = 0; i < p.size() && i < c.symbols.size(); ++i) {
    if (i == 8) {
      s += fmt::format(", ... ({} parameters)", p.size());
      break;
    }
    s += fmt::format("{}{}={}", i ? ", " : "", c.symbols[i], solvers::exact_text(p[i]));
  }
  return s;
}

Point make_point(const FamilyCase& c, std::vector<Rational> params, std::mt19937_64& rng) {
  Point pt;
  pt.inst = c.build(params, rng);
  const auto cf = c.closed_form(params);
  if (cf.den != 0) {
    pt.exact = cf.num / cf.den;
    pt.has_exact = true;
  }
  pt.params = std::move(params);
  return pt;
}

Point random_point(const FamilyCase& c, std::uint64_t seed, std::size_t i) {
  std::mt19937_64 rng(point_seed(seed, c.name + "/random", i));
  auto p = c.sample(rng, PointKind::Random);
  return make_point(c, std::move(p), rng);
}

// The stiff points: the family's deterministic grid, then random stiff points.
std::vector<Point> stiff_points(const FamilyCase& c, const FluxCheckOptions& o) {
  std::vector<Point> pts;
  std::mt19937_64 grid_rng(point_seed(o.seed, c.name + "/grid", 0));
  const auto grid = c.stiff_grid(grid_rng);
  for (std::size_t i = 0; i < grid.size(); ++i) {
    std::mt19937_64 rng(point_seed(o.seed, c.name + "/grid", i + 1));
    pts.push_back(make_point(c, grid[i], rng));
  }
  for (std::size_t i = 0; i < o.stiff_random_points; ++i) {
    std::mt19937_64 rng(point_seed(o.seed, c.name + "/stiff", i));
    auto p = c.sample(rng, PointKind::Stiff);
    pts.push_back(make_point(c, std::move(p), rng));
  }
  return pts;
}

// Running maximum of relative errors; NaN counts as infinitely wrong.
struct ErrorStats {
  double max_rel = 0, sum_digits = 0;
  std::size_t n = 0, failures = 0, worst = 0;
  void add(double rel, bool ok, std::size_t index, double digit_cap) {
    if (std::isnan(rel)) rel = kInf;
    if (n == 0 || rel > max_rel) {
      max_rel = rel;
      worst = index;
    }
    sum_digits += std::max(0.0, solvers::correct_digits(rel, digit_cap));
    if (!ok) ++failures;
    ++n;
  }
};

ScalarCheck finish(const FamilyCase& c, const std::vector<Point>& pts, const ErrorStats& e, std::string scalar,
                   std::string kind, double tol, double bit_cap, bool informational) {
  ScalarCheck s;
  s.scalar = std::move(scalar);
  s.points_kind = std::move(kind);
  s.points = e.n;
  s.failures = e.failures;
  s.max_rel_error = e.max_rel;
  s.tolerance = tol;
  s.informational = informational;
  // An error above 100% has no correct digit (not a negative number of them).
  s.min_correct_bits = std::max(0.0, solvers::correct_bits(e.max_rel, bit_cap));
  s.min_correct_digits = std::max(0.0, solvers::correct_digits(e.max_rel, bit_cap * detmath::log10(2.0)));
  s.mean_correct_digits = e.n ? e.sum_digits / static_cast<double>(e.n) : 0;
  if (!pts.empty() && e.n) s.worst = describe(c, pts[e.worst].params);
  return s;
}

// (2) exact rational GTH at random rational points, in parallel (each point
// has its own stream, so the result does not depend on the thread count).
ScalarCheck exact_check(const FamilyCase& c, const FluxCheckOptions& o) {
  const std::size_t n = o.rational_points;
  std::vector<char> ok(n, 0);
  std::vector<std::string> why(n);
#ifdef _OPENMP
  const int threads = o.threads > 0 ? o.threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
#endif
  for (std::size_t i = 0; i < n; ++i) {
    try {
      const Point pt = random_point(c, o.seed, i);
      const auto st = solvers::solve_stationary<Rational>(pt.inst.model, pt.inst.H, solvers::Method::Auto, c.name);
      ok[i] = pt.has_exact && st.flux == pt.exact;
      if (!ok[i])
        why[i] = pt.has_exact ? fmt::format("point {}: GTH {} != closed form {}", i, solvers::exact_text(st.flux),
                                            solvers::exact_text(pt.exact))
                              : fmt::format("point {}: closed-form denominator is 0", i);
    } catch (const std::exception& ex) {
      why[i] = fmt::format("point {}: {}", i, ex.what());
    }
  }
  ScalarCheck s;
  s.scalar = "rational";
  s.points_kind = "random";
  s.points = n;
  for (std::size_t i = 0; i < n; ++i)
    if (!ok[i]) {
      if (s.failures == 0) {
        s.worst = why[i];
        if (s.worst.size() > 300) s.worst = s.worst.substr(0, 300) + "...";
      }
      ++s.failures;
    }
  s.max_rel_error = s.failures ? kInf : 0;
  s.min_correct_bits = s.failures ? 0 : kInf;
  s.min_correct_digits = s.failures ? 0 : kInf;
  s.mean_correct_digits = s.min_correct_digits;
  return s;
}

// (3) MPFR GTH at `bits` against the exact closed form.
ScalarCheck mpfr_check(const FamilyCase& c, const std::vector<Point>& pts, unsigned bits, const std::string& kind) {
  const ctmc::PrecisionScope precision(bits);
  const double tol = std::ldexp(1.0, -static_cast<int>(bits - 8));
  ErrorStats e;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    double rel = kInf;
    if (pts[i].has_exact) {
      const auto st = solvers::solve_stationary<Mpfr>(pts[i].inst.model, pts[i].inst.H, solvers::Method::Auto, c.name);
      rel = solvers::relative_error(st.flux, pts[i].exact);
    }
    e.add(rel, rel <= tol, i, bits * detmath::log10(2.0));
  }
  return finish(c, pts, e, fmt::format("mpfr-{}", bits), kind, tol, bits, false);
}

// Interval GTH at `bits`: the enclosure must contain the exact value.
// max_rel_error holds the largest relative width.
ScalarCheck mpfi_check(const FamilyCase& c, const std::vector<Point>& pts, unsigned bits, const std::string& kind) {
  const ctmc::PrecisionScope precision(bits);
  ErrorStats e;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    bool ok = false;
    double width = kInf;
    if (pts[i].has_exact) {
      const auto st =
          solvers::solve_stationary<Interval>(pts[i].inst.model, pts[i].inst.H, solvers::Method::Auto, c.name);
      ok = solvers::contains(st.flux, pts[i].exact);
      width = pts[i].exact == 0 && ok ? 0.0 : solvers::relative_width(st.flux);
    }
    e.add(width, ok, i, bits * detmath::log10(2.0));
  }
  return finish(c, pts, e, fmt::format("mpfi-{}", bits), kind, 0, bits, false);
}

// Flux from Eigen's dense LU in double on the closed class GTH solved on.
double lu_flux(const Model& m, const Rational& H, const std::vector<std::size_t>& support) {
  const auto rates = m.rates(H);
  std::vector<std::size_t> local(m.size(), static_cast<std::size_t>(-1));
  for (std::size_t i = 0; i < support.size(); ++i) local[support[i]] = i;
  solvers::DenseMatrix<double> q(support.size());
  for (std::size_t k = 0; k < rates.size(); ++k) {
    const auto& t = m.transitions[k];
    if (rates[k] > 0 && local[t.from] != static_cast<std::size_t>(-1) && local[t.to] != static_cast<std::size_t>(-1))
      q(local[t.from], local[t.to]) = solvers::from_rational<double>(rates[k]);
  }
  const auto pi = solvers::lu_stationary_double(q);
  double flux = 0;
  for (std::size_t k = 0; k < rates.size(); ++k) {
    const auto& t = m.transitions[k];
    if (t.spike && rates[k] > 0 && local[t.from] != static_cast<std::size_t>(-1))
      flux += pi[local[t.from]] * solvers::from_rational<double>(rates[k]);
  }
  return flux;
}

// (4) double GTH and double LU on the stiff points: correct digits of each.
std::pair<ScalarCheck, ScalarCheck> double_checks(const FamilyCase& c, const std::vector<Point>& pts) {
  ErrorStats gth, lu;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    if (!pts[i].has_exact) {
      gth.add(kInf, false, i, kDoubleDigits);
      lu.add(kInf, false, i, kDoubleDigits);
      continue;
    }
    const auto st = solvers::solve_stationary<double>(pts[i].inst.model, pts[i].inst.H, solvers::Method::Auto, c.name);
    const double rg = std::isfinite(st.flux) ? solvers::relative_error(st.flux, pts[i].exact) : kInf;
    gth.add(rg, true, i, kDoubleDigits);
    double rl = kInf;
    try {
      const double f = lu_flux(pts[i].inst.model, pts[i].inst.H, st.support);
      if (std::isfinite(f)) rl = solvers::relative_error(f, pts[i].exact);
    } catch (const InputError&) {
      // A numerically singular LU counts as no correct digit.
    }
    lu.add(rl, true, i, kDoubleDigits);
  }
  return {finish(c, pts, gth, "double-gth", "stiff", 0, 53, true),
          finish(c, pts, lu, "double-lu", "stiff", 0, 53, true)};
}

}  // namespace

FluxCheckResult check_family(const FamilyCase& c, const FluxCheckOptions& o) {
  if (o.precisions.empty()) throw InputError("flux check: precisions: need at least one MPFR precision");
  for (unsigned p : o.precisions)
    if (p < 16) throw InputError(fmt::format("flux check: precision {}: need at least 16 bits", p));
  FluxCheckResult r;
  r.name = c.name;
  r.states = c.states;
  r.symbolic = check_symbolic(c);
  r.scalars.push_back(exact_check(c, o));

  const auto stiff = stiff_points(c, o);
  std::vector<Point> mixed = stiff;
  for (std::size_t i = 0; i < o.mpfr_random_points; ++i) mixed.push_back(random_point(c, o.seed, i));
  for (unsigned p : o.precisions) r.scalars.push_back(mpfr_check(c, mixed, p, "stiff+random"));
  r.scalars.push_back(mpfi_check(c, mixed, o.precisions.front(), "stiff+random"));
  auto [gth, lu] = double_checks(c, stiff);
  r.scalars.push_back(std::move(gth));
  r.scalars.push_back(std::move(lu));
  return r;
}

}  // namespace ctmc::proofs_check
