// Fit inputs (grids, sample and weight files), family descriptions, the exact
// fitted model and its MPFR re-evaluation (fit.hpp, fit_internal.hpp). No
// Ceres here: the optimizer lives in solve.cpp.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "ctmc/analysis/fit.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/core/quote.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/input_file.hpp"
#include "ctmc/solvers/number_text.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/solvers/stationary.hpp"
#include "fit/fit_internal.hpp"

namespace ctmc::analysis {

using solvers::Mpfr;
using solvers::Rational;

FamilySpec parse_family(const std::string& name, std::size_t states) {
  if (name == "two-state") return {FitFamily::TwoState, 2};
  if (name == "three-state") return {FitFamily::ThreeState, 3};
  if (name == "full-three-state") return {FitFamily::FullThreeState, 3};
  if (name == "general") {
    if (states < 2 || states > kMaxGeneralStates)
      throw InputError("states", fmt::format("the general family needs 2..{} states, got {}", kMaxGeneralStates, states));
    return {FitFamily::General, states};
  }
  throw InputError("family", fmt::format("unknown family '{}' (expected two-state, three-state, full-three-state or "
                                         "general)",
                                         name));
}

std::string family_name(const FamilySpec& f) {
  switch (f.family) {
    case FitFamily::TwoState: return "two-state";
    case FitFamily::ThreeState: return "three-state";
    case FitFamily::FullThreeState: return "full-three-state";
    case FitFamily::General: return fmt::format("general-{}", f.states);
  }
  return "?";
}

std::size_t state_count(const FamilySpec& f) {
  switch (f.family) {
    case FitFamily::TwoState: return 2;
    case FitFamily::ThreeState:
    case FitFamily::FullThreeState: return 3;
    case FitFamily::General: return f.states;
  }
  return 0;
}

namespace {
void add_affine(std::vector<ParamInfo>& v, const std::string& rate) {
  v.push_back({rate + ".p", ParamKind::Offset});
  v.push_back({rate + ".s", ParamKind::Slope});
}
}  // namespace

std::vector<ParamInfo> family_parameters(const FamilySpec& f) {
  std::vector<ParamInfo> v;
  switch (f.family) {
    case FitFamily::TwoState:
      add_affine(v, "a");
      v.push_back({"d", ParamKind::ConstRate});
      break;
    case FitFamily::ThreeState:
      add_affine(v, "a");
      v.push_back({"b", ParamKind::ConstRate});
      add_affine(v, "c");
      v.push_back({"d", ParamKind::ConstRate});
      break;
    case FitFamily::FullThreeState:
      for (const char* r : {"BG", "BR", "GB", "GR", "RB", "RG"}) add_affine(v, r);
      break;
    case FitFamily::General:
      for (std::size_t i = 0; i < f.states; ++i)
        for (std::size_t j = 0; j < f.states; ++j)
          if (i != j) add_affine(v, fmt::format("{}->{}", i, j));
      break;
  }
  return v;
}

double FitBounds::lower(ParamKind k) const {
  return k == ParamKind::ConstRate ? min_const_rate / widen : -rate_bound * widen;
}
double FitBounds::upper(ParamKind) const { return rate_bound * widen; }

std::pair<Rational, Rational> parse_domain(const std::string& text, const std::string& what) {
  const auto [lo, hi] = solvers::parse_interval(text, what);
  // The fit works in doubles: each end must be a finite double and the two ends
  // must stay distinct once rounded (1e400 overflows, +-1e-400 both round to 0).
  const double dlo = solvers::to_double(lo), dhi = solvers::to_double(hi);
  const std::string quoted = quote_excerpt(text);
  if (!std::isfinite(dlo) || !std::isfinite(dhi))
    throw InputError(what, fmt::format("{} is outside the range of a double", quoted));
  if (!(dhi > dlo))
    throw InputError(what, fmt::format("the ends of {} are equal as doubles (domain too narrow)", quoted));
  // The fit scales slopes and perturbations by the width hi - lo (a double).
  if (!std::isfinite(dhi - dlo))
    throw InputError(what, fmt::format("the width of {} overflows a double (domain too wide)", quoted));
  return {lo, hi};
}

namespace {
// A grid beyond this takes hours to fit and gigabytes to hold: bad input.
constexpr std::size_t kMaxGridPoints = 10'000'000;
}  // namespace

FitData make_grid(const Rational& lo, const Rational& hi, std::size_t points) {
  if (!(hi > lo))
    throw InputError("domain", fmt::format("empty domain [{}, {}] (need LO < HI)", solvers::exact_text(lo),
                                 solvers::exact_text(hi)));
  if (points < 2) throw InputError("points", fmt::format("need at least 2 grid points, got {}", points));
  if (points > kMaxGridPoints)
    throw InputError("points", fmt::format("at most {} grid points, got {}", kMaxGridPoints, points));
  const double dlo = solvers::to_double(lo), dhi = solvers::to_double(hi);
  if (!std::isfinite(dlo) || !std::isfinite(dhi))
    throw InputError("domain", fmt::format("[{}, {}] is outside the range of a double", solvers::exact_text(lo),
                                 solvers::exact_text(hi)));
  if (!std::isfinite(dhi - dlo))
    throw InputError("domain", fmt::format("the width of [{}, {}] overflows a double (domain too wide)",
                                 solvers::exact_text(lo), solvers::exact_text(hi)));
  FitData d;
  d.lo = lo;
  d.hi = hi;
  const Rational step = (hi - lo) / Rational(static_cast<long>(points - 1));
  for (std::size_t m = 0; m < points; ++m) {
    d.h_exact.push_back(lo + step * Rational(static_cast<long>(m)));
    d.h.push_back(solvers::to_double(d.h_exact.back()));
    if (m > 0 && !(d.h[m] > d.h[m - 1]))
      throw InputError("points", fmt::format("{} grid points on [{}, {}] are not distinct as doubles (domain too "
                                             "narrow for this many points)",
                                   points, solvers::exact_text(lo), solvers::exact_text(hi)));
  }
  d.description = fmt::format("{}-point uniform grid on [{}, {}]", points, solvers::exact_text(lo),
                              solvers::exact_text(hi));
  return d;
}

namespace {
// Reads one exact value per line; `what` names the kind of file in messages.
// `lines`, when given, receives the file line of each value.
std::vector<Rational> read_values(const std::string& path, const solvers::InputKind& kind,
                                  std::vector<std::size_t>* lines = nullptr) {
  const std::string content = solvers::read_input_file(path, kind);
  std::vector<Rational> v;
  std::size_t row = 0;
  for (std::size_t at = 0; at < content.size();) {
    const auto nl = content.find('\n', at);
    const std::string_view line = std::string_view(content).substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    at = nl == std::string::npos ? content.size() : nl + 1;
    ++row;
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string_view::npos || line[b] == '#') continue;
    const auto e = line.find_last_not_of(" \t\r,");
    const std::string text(line.substr(b, e - b + 1));
    const auto q = solvers::parse_exact(text);
    if (!q) throw InputError(fmt::format("{}: line {}: {} is not a finite number", path, row, quote_excerpt(text)));
    // The fit works in doubles: a value that overflows one (1e400) is bad input.
    if (!std::isfinite(solvers::to_double(*q)))
      throw InputError(fmt::format("{}: line {}: {} is outside the range of a double", path, row, quote_excerpt(text)));
    v.push_back(*q);
    if (lines) lines->push_back(row);
  }
  return v;
}
}  // namespace

FitData read_samples(const std::string& path, const Rational* lo, const Rational* hi) {
  auto values = read_values(path, solvers::kSamplesFileKind);
  FitData d;
  d.source_values = values.size();
  for (std::size_t k = 0; k < values.size(); ++k) {
    const auto& q = values[k];
    if (lo && q < *lo) continue;
    if (hi && q > *hi) continue;
    d.h_exact.push_back(q);
    d.h.push_back(solvers::to_double(q));
    d.kept.push_back(k);
  }
  if (d.h_exact.size() < 2)
    throw InputError(fmt::format("{}: too few samples ({}{}), need at least 2", path, d.h_exact.size(),
                                 lo ? " inside the domain" : ""));
  d.lo = *std::min_element(d.h_exact.begin(), d.h_exact.end());
  d.hi = *std::max_element(d.h_exact.begin(), d.h_exact.end());
  if (!(d.hi > d.lo)) throw InputError(fmt::format("{}: all samples are equal: empty domain", path));
  if (!(solvers::to_double(d.hi) > solvers::to_double(d.lo)))
    throw InputError(fmt::format("{}: all samples are equal as doubles: empty domain", path));
  if (!std::isfinite(solvers::to_double(d.hi) - solvers::to_double(d.lo)))
    throw InputError(fmt::format("{}: the samples' range [{}, {}] is wider than a double holds", path,
                                 solvers::exact_text(d.lo), solvers::exact_text(d.hi)));
  d.description = fmt::format("samples from {} ({} values on [{}, {}])", path, d.h.size(),
                              solvers::exact_text(d.lo), solvers::exact_text(d.hi));
  return d;
}

void read_weights(FitData& data, const std::string& path) {
  std::vector<std::size_t> lines;
  auto w = read_values(path, solvers::kWeightsFileKind, &lines);
  const bool samples = data.source_values > 0;
  const std::size_t expected = samples ? data.source_values : data.h_exact.size();
  if (w.size() != expected)
    throw InputError(samples ? fmt::format("{}: {} weights for the {} values of the samples file (one per sample, "
                                           "before the domain filter)",
                                           path, w.size(), expected)
                             : fmt::format("{}: {} weights for {} points", path, w.size(), expected));
  for (std::size_t m = 0; m < w.size(); ++m)
    if (w[m] < 0)
      throw InputError(fmt::format("{}: line {}: weight {} is negative", path, lines[m], solvers::exact_text(w[m])));
  if (samples && data.kept.size() != w.size()) {  // the weights of the samples inside the domain
    std::vector<Rational> kept;
    for (std::size_t k : data.kept) kept.push_back(w[k]);
    w = std::move(kept);
  }
  const char* which = samples && data.kept.size() != data.source_values ? " of the samples inside the domain" : "";
  Rational total(0);
  double dtotal = 0;
  for (const auto& x : w) {
    total += x;
    dtotal += solvers::to_double(x);
  }
  if (!(total > 0)) throw InputError(fmt::format("{}: the weights{} sum to 0", path, which));
  // The optimizer uses the weights as doubles: their sum must be a positive finite double.
  if (!(dtotal > 0))
    throw InputError(fmt::format("{}: the weights{} sum to 0 as doubles (every weight underflows)", path, which));
  if (!std::isfinite(dtotal))
    throw InputError(fmt::format("{}: the weights' sum overflows a double", path));
  data.w_exact = w;
  data.w.clear();
  for (const auto& q : w) data.w.push_back(solvers::to_double(q));
  data.description += fmt::format(", weighted by {}", path);
}

FitData exploration_data(const FitData& data, std::size_t max_points) {
  const std::size_t n = data.h.size();
  if (max_points == 0 || n <= max_points) return data;
  if (max_points < 2) throw InputError("fit: the exploration needs at least 2 points");
  std::vector<std::size_t> sorted(n);
  for (std::size_t i = 0; i < n; ++i) sorted[i] = i;
  std::stable_sort(sorted.begin(), sorted.end(), [&](std::size_t a, std::size_t b) { return data.h[a] < data.h[b]; });
  const std::size_t k = (n - 1 + max_points - 2) / (max_points - 1);  // ceil((n - 1) / (max_points - 1))
  std::vector<std::size_t> reps;  // positions in `sorted`
  for (std::size_t i = 0; i < n; i += k) reps.push_back(i);
  if (reps.back() != n - 1) reps.push_back(n - 1);
  FitData out;
  out.lo = data.lo;
  out.hi = data.hi;
  out.description = data.description;
  out.w.assign(reps.size(), 0.0);
  for (std::size_t r : reps) {
    out.h.push_back(data.h[sorted[r]]);
    out.h_exact.push_back(data.h_exact[sorted[r]]);
  }
  // Position i lies between reps[j - 1] and reps[j]: its weight goes to the
  // nearer one (by position), half to each on a tie.
  std::size_t j = 0;
  for (std::size_t i = 0; i < n; ++i) {
    while (reps[j] < i) ++j;  // reps[j] >= i
    const double w = data.w.empty() ? 1.0 : data.w[sorted[i]];
    if (reps[j] == i || j == 0) {
      out.w[j] += w;
      continue;
    }
    const std::size_t left = i - reps[j - 1], right = reps[j] - i;
    if (left < right) out.w[j - 1] += w;
    else if (right < left) out.w[j] += w;
    else {
      out.w[j - 1] += 0.5 * w;
      out.w[j] += 0.5 * w;
    }
  }
  return out;
}

solvers::Model model_of(const FamilySpec& f, const std::vector<double>& theta) {
  // Every finite double is a dyadic rational: Rational(double) is exact
  // (mpq_set_d); a non-finite one has no rational value (mpq_set_d traps).
  if (theta.size() < family_parameters(f).size())
    throw InputError(fmt::format("model: {} parameters for the {} family, need {}", theta.size(), family_name(f),
                                 family_parameters(f).size()));
  for (std::size_t k = 0; k < theta.size(); ++k)
    if (!std::isfinite(theta[k]))
      throw InputError(fmt::format("model: parameter {} ({}) is not a finite number", k + 1, theta[k]));
  auto affine = [&](std::size_t k) {
    solvers::Affine r{Rational(theta[k]), Rational(theta[k + 1])};
    // An identically-zero rate written with a negative constant offset would be
    // rejected as a negative constant rate; it is the same rate function as 0.
    if (r.slope == 0 && r.offset < 0) r.offset = 0;
    return r;
  };
  auto constant = [&](std::size_t k) { return solvers::Affine{Rational(theta[k]), Rational(0)}; };
  switch (f.family) {
    case FitFamily::TwoState:
      return solvers::two_state_model(affine(0), constant(2));
    case FitFamily::ThreeState:
      return solvers::three_state_model(affine(0), constant(2), affine(3), constant(5));
    case FitFamily::FullThreeState: {
      std::array<solvers::Affine, 6> r;
      for (std::size_t k = 0; k < 6; ++k) r[k] = affine(2 * k);
      return solvers::full_three_state_model(r);
    }
    case FitFamily::General: {
      solvers::Model m;
      for (std::size_t i = 0; i < f.states; ++i) m.states.push_back(fmt::format("S{}", i));
      std::size_t k = 0;
      for (std::size_t i = 0; i < f.states; ++i)
        for (std::size_t j = 0; j < f.states; ++j) {
          if (i == j) continue;
          const auto r = affine(k);
          k += 2;
          solvers::Transition t;
          t.from = i;
          t.to = j;
          t.offset = solvers::ExactValue(r.offset);
          t.slope = solvers::ExactValue(r.slope);
          t.spike = (j == 0);
          m.transitions.push_back(t);
        }
      m.meta["family"] = "general";
      m.meta["states"] = f.states;
      return m;
    }
  }
  return {};
}

std::vector<double> theta_of(const FamilySpec& f, const solvers::Model& m, const std::string& source) {
  const auto params = family_parameters(f);
  // Which parameters each transition of the family carries: model_of on a
  // probe whose parameter k is k + 1 (a small integer, so exact) writes
  // offset k + 1 into the transition whose offset (or constant rate) is
  // parameter k.
  std::vector<double> probe(params.size());
  for (std::size_t k = 0; k < probe.size(); ++k) probe[k] = static_cast<double>(k + 1);
  const auto shape = model_of(f, probe);
  const std::string family = family_name(f);
  if (m.size() != shape.size())
    throw InputError(fmt::format("{}: {} states, but the {} family has {} ({})", source, m.size(), family,
                                 shape.size(), fmt::join(shape.states, ", ")));
  // States by name when the file uses the family's names (in any order), else
  // by position.
  std::vector<std::size_t> to_family(m.size());
  bool by_name = true;
  for (std::size_t i = 0; i < m.size() && by_name; ++i) {
    const auto it = std::find(shape.states.begin(), shape.states.end(), m.states[i]);
    if (it == shape.states.end()) by_name = false;
    else to_family[i] = static_cast<std::size_t>(it - shape.states.begin());
  }
  if (!by_name)
    for (std::size_t i = 0; i < m.size(); ++i) to_family[i] = i;
  auto value = [&](const solvers::ExactValue& v, const solvers::Transition& t, const char* what) {
    const double d = solvers::to_double(v.value);
    if (!std::isfinite(d))
      throw InputError(fmt::format("{}: the {} of {} -> {} ({}) is outside the range of a double", source, what,
                                   quote_excerpt(m.states[t.from]), quote_excerpt(m.states[t.to]), quote_excerpt(v.text)));
    return d;
  };
  std::vector<double> theta(params.size(), 0.0);  // a transition the file omits has rate 0
  for (const auto& t : m.transitions) {
    const std::size_t from = to_family[t.from], to = to_family[t.to];
    const auto s = std::find_if(shape.transitions.begin(), shape.transitions.end(),
                                [&](const solvers::Transition& x) { return x.from == from && x.to == to; });
    const std::string name = fmt::format("{} -> {}", quote_excerpt(m.states[t.from]), quote_excerpt(m.states[t.to]));
    if (s == shape.transitions.end())
      throw InputError(fmt::format("{}: transition {} is not in the {} family (states {}{})", source, name, family,
                                   fmt::join(shape.states, ", "), by_name ? "" : ", matched by position"));
    if (s->spike != t.spike)
      throw InputError(fmt::format("{}: transition {} {} a spike transition in the {} family", source, name,
                                   s->spike ? "is" : "is not", family));
    const auto k = static_cast<std::size_t>(solvers::to_double(s->offset.value)) - 1;
    theta[k] = value(t.offset, t, "offset");
    if (params[k].kind == ParamKind::ConstRate) {
      if (t.slope.value != 0)
        throw InputError(fmt::format("{}: transition {} has slope {}, but its rate {} is constant in the {} family",
                                     source, name, quote_excerpt(t.slope.text), params[k].name, family));
    } else {
      theta[k + 1] = value(t.slope, t, "slope");
    }
  }
  return theta;
}

std::vector<double> nudge_kinks_off_points(const std::vector<ParamInfo>& params, std::vector<double> theta,
                                           const FitData& data, const FitBounds& bounds) {
  if (theta.size() != params.size() || data.h.size() != data.h_exact.size())
    throw InputError(fmt::format("nudge_kinks_off_points: {} parameters for {}, {} points with {} exact values",
                                 theta.size(), params.size(), data.h.size(), data.h_exact.size()));
  const double upper = bounds.upper(ParamKind::Offset);
  for (std::size_t i = 0; i + 1 < params.size(); ++i) {
    if (!is_rectified_rate(params, i)) continue;
    for (std::size_t m = 0; m < data.h.size(); ++m) {
      // The rate as the objective computes it (fit_flux.hpp: p + s H).
      const double v = theta[i] + theta[i + 1] * data.h[m];
      if (!(v > 0) || v > 1e-12 * (std::abs(theta[i]) + std::abs(theta[i + 1] * data.h[m]))) continue;
      // 64 ulps of p are far more than the rounding of s H_m (|p| ~ |s H_m|).
      for (int step = 0; step < 64 && theta[i] < upper &&
                         !(Rational(theta[i]) + Rational(theta[i + 1]) * data.h_exact[m] > 0);
           ++step)
        theta[i] = std::min(std::nextafter(theta[i], upper), upper);
    }
  }
  return theta;
}

ExactErrors evaluate_exactly(const solvers::Model& model, const FitProblem& problem, unsigned bits,
                             const std::string& source) {
  // As fit() does: beyond a table's rows the target would be extrapolated.
  if (auto why = activations::table_coverage_violation(problem.activation, solvers::to_double(problem.data.lo),
                                          solvers::to_double(problem.data.hi)))
    throw InputError("activation", *why);
  // The working precision is the calling thread's (fits that run at once,
  // as run_fit_table runs targets, each hold their own).
  const ctmc::PrecisionScope precision(bits);  // the caller's precision again on the way out
  const auto& d = problem.data;
  const Mpfr alpha = solvers::from_rational<Mpfr>(problem.alpha);
  Mpfr sum_sq(0), sum_w(0), worst(0);
  ExactErrors e;
  for (std::size_t m = 0; m < d.h_exact.size(); ++m) {
    const auto st = solvers::solve_stationary<Mpfr>(model, d.h_exact[m], solvers::Method::Dense, source);
    const Mpfr target = alpha * problem.activation.eval<Mpfr>(solvers::from_rational<Mpfr>(d.h_exact[m]));
    const Mpfr err = abs(st.flux - target);
    const Mpfr w = d.w_exact.empty() ? Mpfr(1) : solvers::from_rational<Mpfr>(d.w_exact[m]);
    sum_sq += w * err * err;
    sum_w += w;
    // The max error is taken where the fit was asked to fit: a point of
    // weight 0 is outside the data (it also does not count in the MSE).
    if (w > 0 && err > worst) {
      worst = err;
      e.max_abs_error_at = d.h[m];
    }
  }
  e.mse = solvers::to_double(Mpfr(sum_sq / sum_w));
  e.max_abs_error = solvers::to_double(worst);
  return e;
}

}  // namespace ctmc::analysis
