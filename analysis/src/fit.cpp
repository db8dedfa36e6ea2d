// The Ceres multistart fit (fit.hpp). All ceres::Jet instantiations of the
// flux (closed forms and GTH) live in this one translation unit.
#include "ctmc/analysis/fit.hpp"

#include <ceres/ceres.h>
#include <glog/logging.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <random>

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef __SSE__
#include <xmmintrin.h>
#endif

#include "ctmc/solvers/errors.hpp"
#include "ctmc/solvers/exact.hpp"

namespace ctmc::analysis {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Range of max |alpha phi| on the data that the fit accepts (see fit()).
constexpr double kMinTargetScale = 1e-100, kMaxTargetScale = 1e100;

// Targets alpha phi(H_m) and residual scales sqrt(w_m / sum w) in double;
// ymax = max |alpha phi| (1 if the target is 0), the scale of start rates
// and basin-hopping steps.
struct Targets {
  std::vector<double> y, scale;
  double ymax = 1;
};

Targets make_targets(const FitProblem& p) {
  Targets t;
  const double alpha = solvers::to_double(p.alpha);
  const std::size_t m = p.data.h.size();
  double total = 0;
  for (std::size_t i = 0; i < m; ++i) total += p.data.w.empty() ? 1.0 : p.data.w[i];
  for (std::size_t i = 0; i < m; ++i) {
    t.y.push_back(alpha * p.activation.eval<double>(p.data.h[i]));
    t.scale.push_back(std::sqrt((p.data.w.empty() ? 1.0 : p.data.w[i]) / total));
  }
  double ymax = 0;
  for (double y : t.y) ymax = std::max(ymax, std::abs(y));
  if (ymax > 0) t.ymax = ymax;
  return t;
}

// One problem the fit works on (the full one, or its exploration subsample)
// with its targets, sorted distinct points (kink hops) and rounding floor:
// an MSE below kRoundingFloor * mean (alpha phi)^2 is an exact fit up to
// double rounding of the parameters (max error ~1e-10 of the target's size);
// nothing can lower it by a meaningful amount. Not copyable: the cost
// functions point at problem and targets.
struct Stage {
  explicit Stage(const FitProblem& p) : problem(&p), own(make_targets(p)), targets(&own), points(p.data.h) {
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    double mean_y2 = 0;
    for (std::size_t m = 0; m < own.y.size(); ++m) mean_y2 += own.scale[m] * own.scale[m] * own.y[m] * own.y[m];
    floor_mse = kRoundingFloor * mean_y2;
  }
  Stage(const Stage&) = delete;
  Stage& operator=(const Stage&) = delete;
  const FitProblem* problem;
  Targets own;
  const Targets* targets;
  std::vector<double> points;
  double floor_mse = 0;
};

template <class T>
bool finite(const T& x) {
  using std::isfinite;
  return isfinite(x);
}

// Residual m: sqrt(w_m / sum w) (F_theta(H_m) - alpha phi(H_m)), so that the
// Ceres cost 1/2 sum r_m^2 is half the weighted MSE of eq. 3. Returning false
// (a non-finite flux: the chain became reducible at some H) makes Ceres reject
// the step.
template <int P>
struct FluxResiduals {
  const FitProblem* problem;
  const Targets* targets;
  template <class T>
  bool operator()(const T* theta, T* residual) const {
    const auto& h = problem->data.h;
    for (std::size_t m = 0; m < h.size(); ++m) {
      const T f = family_flux<T>(problem->family, theta, T(h[m]));
      if (!finite(f)) return false;
      residual[m] = T(targets->scale[m]) * (f - T(targets->y[m]));
    }
    return true;
  }
};

struct StartOutcome {
  std::vector<double> theta;
  double mse = kInf;
  long iterations = 0;
};

double weighted_mse(const FitProblem& p, const Targets& t, const std::vector<double>& theta) {
  double s = 0;
  for (std::size_t m = 0; m < p.data.h.size(); ++m) {
    double f;
    try {
      f = family_flux<double>(p.family, theta.data(), p.data.h[m]);
    } catch (const InputError&) {
      return kInf;  // reducible at this H (GTH in double)
    }
    if (!std::isfinite(f)) return kInf;
    const double r = t.scale[m] * (f - t.y[m]);
    s += r * r;
  }
  return s;
}

// Residuals with the analytic Jacobian of family_flux_gradient (fit_flux.hpp):
// hand-derived derivatives of the closed forms, the adjoint of the stationary
// equations (pi from GTH, one small linear solve per point) for the general
// family.
class AnalyticCost : public ceres::CostFunction {
 public:
  AnalyticCost(const FitProblem* p, const Targets* t, int parameters) : p_(p), t_(t), np_(parameters) {
    set_num_residuals(static_cast<int>(p->data.h.size()));
    mutable_parameter_block_sizes()->push_back(parameters);
  }
  bool Evaluate(double const* const* x, double* residuals, double** jacobians) const override {
    const auto& h = p_->data.h;
    for (std::size_t m = 0; m < h.size(); ++m) {
      double f = 0;
      double* g = (jacobians && jacobians[0]) ? jacobians[0] + m * np_ : nullptr;
      const double sc = t_->scale[m];
      if (!family_flux_gradient(p_->family, x[0], h[m], f, g, sc) || !std::isfinite(f)) return false;
      residuals[m] = sc * (f - t_->y[m]);
    }
    return true;
  }

 private:
  const FitProblem* p_;
  const Targets* t_;
  int np_;
};

template <int P>
ceres::CostFunction* autodiff_cost(const FitProblem& p, const Targets& t) {
  return new ceres::AutoDiffCostFunction<FluxResiduals<P>, ceres::DYNAMIC, P>(new FluxResiduals<P>{&p, &t},
                                                                              static_cast<int>(p.data.h.size()));
}

ceres::CostFunction* make_cost(const FitProblem& p, const Targets& t, std::size_t parameters, const FitOptions& o) {
  if (o.gradient == GradientMethod::Analytic) return new AnalyticCost(&p, &t, static_cast<int>(parameters));
  switch (parameters) {
    case 3: return autodiff_cost<3>(p, t);
    case 4: return autodiff_cost<4>(p, t);
    case 6: return autodiff_cost<6>(p, t);
    case 12: return autodiff_cost<12>(p, t);
    case 24: return autodiff_cost<24>(p, t);
    case 40: return autodiff_cost<40>(p, t);
    case 60: return autodiff_cost<60>(p, t);
  }
  throw InputError(fmt::format("fit: no solver for {} parameters", parameters));
}

// Sets MXCSR's flush-to-zero and denormals-are-zero bits for its lifetime.
class FlushDenormalsWhileSolving {
 public:
#ifdef __SSE__
  FlushDenormalsWhileSolving() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040); }
  ~FlushDenormalsWhileSolving() { _mm_setcsr(saved_); }
#else
  FlushDenormalsWhileSolving() = default;
#endif
  FlushDenormalsWhileSolving(const FlushDenormalsWhileSolving&) = delete;
  FlushDenormalsWhileSolving& operator=(const FlushDenormalsWhileSolving&) = delete;

 private:
#ifdef __SSE__
  unsigned saved_;
#endif
};

StartOutcome solve_start(const FitProblem& p, const Targets& t, const std::vector<ParamInfo>& params,
                         std::vector<double> theta, const FitOptions& o) {
  // Flush denormals to zero while solving: derivative parts of the Jets
  // underflow as rates approach their bounds, and denormal arithmetic is
  // ~100x slower. MXCSR is per thread, so this stays deterministic -- as long
  // as it is restored on every exit, including an exception thrown inside
  // ceres::Solve (the flux of a reducible chain on the Jet path): a scope
  // guard, so that the thread's later double work never runs flushed.
  FlushDenormalsWhileSolving flush_guard;
  ceres::Problem problem;
  problem.AddResidualBlock(make_cost(p, t, params.size(), o), nullptr, theta.data());
  for (std::size_t i = 0; i < params.size(); ++i) {
    problem.SetParameterLowerBound(theta.data(), static_cast<int>(i), p.bounds.lower(params[i].kind));
    problem.SetParameterUpperBound(theta.data(), static_cast<int>(i), p.bounds.upper(params[i].kind));
  }
  ceres::Solver::Options so;
  so.linear_solver_type = ceres::DENSE_QR;
  so.max_num_iterations = o.max_iterations;
  so.num_threads = 1;  // parallelism is over starts
  so.logging_type = ceres::SILENT;
  so.minimizer_progress_to_stdout = false;
  so.function_tolerance = o.function_tolerance;
  so.gradient_tolerance = o.function_tolerance * 1e-4;
  so.parameter_tolerance = o.function_tolerance;
  if (o.method == TrustRegion::Dogleg) {
    so.trust_region_strategy_type = ceres::DOGLEG;
    so.use_nonmonotonic_steps = true;
  }
  ceres::Solver::Summary summary;
  ceres::Solve(so, &problem, &summary);
  StartOutcome out;
  out.iterations = static_cast<long>(summary.iterations.size());
  out.mse = weighted_mse(p, t, theta);
  out.theta = std::move(theta);
  return out;
}

void clamp_to_bounds(const FitBounds& b, const std::vector<ParamInfo>& params, std::vector<double>& theta) {
  for (std::size_t i = 0; i < params.size(); ++i) theta[i] = std::clamp(theta[i], b.lower(params[i].kind), b.upper(params[i].kind));
}

// Start indices sorted by (MSE, index).
std::vector<int> order_by_mse(const std::vector<StartOutcome>& outcomes) {
  std::vector<int> order(outcomes.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int>(k);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return outcomes[a].mse < outcomes[b].mse; });
  return order;
}

// Index of the outcome with the smallest finite MSE (the first on ties), or
// -1 if none is finite.
int best_finite(const std::vector<StartOutcome>& outcomes) {
  int best = -1;
  for (int k = 0; k < static_cast<int>(outcomes.size()); ++k) {
    const double m = outcomes[static_cast<std::size_t>(k)].mse;
    if (std::isfinite(m) && (best < 0 || m < outcomes[static_cast<std::size_t>(best)].mse)) best = k;
  }
  return best;
}

// A random starting point. Scales come from the target: rates of the order of
// max |alpha phi| (0.1x to 30x), slopes such that a rate changes by that order
// over the domain, mostly increasing in H (the targets are nondecreasing).
// Clamped into the bounds.
std::vector<double> draw_start(const FitProblem& p, const Targets& t, const std::vector<ParamInfo>& params,
                               std::mt19937_64& rng) {
  const double ymax = t.ymax;
  const double lo = solvers::to_double(p.data.lo), hi = solvers::to_double(p.data.hi);
  const double width = hi - lo;
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  auto log_uniform = [&](double a, double b) { return std::pow(10.0, a + (b - a) * u01(rng)); };
  std::vector<double> theta(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    switch (params[i].kind) {
      case ParamKind::ConstRate:
        theta[i] = ymax * log_uniform(-1, 1.5);
        break;
      case ParamKind::Offset: {
        // (offset, slope) pairs: pick the slope, then the rate at a random
        // point of the domain.
        const double sign = u01(rng) < 0.75 ? 1.0 : -1.0;
        const double slope = sign * ymax / width * log_uniform(-1, 1.5);
        const double hc = lo + width * u01(rng);
        const double rate_c = ymax * log_uniform(-1, 1.5);
        theta[i] = rate_c - slope * hc;
        theta[i + 1] = slope;
        ++i;
        break;
      }
      case ParamKind::Slope:
        break;  // set with its offset
    }
  }
  clamp_to_bounds(p.bounds, params, theta);
  return theta;
}

// n for the families whose chains try state exchanges (exchange_states):
// full-three-state (B, G, R = 0, 1, 2); 0 otherwise. The general family has
// the structure too, but trying them there (measured together with per-state
// rate scalings, since dropped) made the report's general rows 2-3x slower
// without better fits.
std::size_t relabelable_states(const FamilySpec& f) {
  if (f.family == FitFamily::FullThreeState) return 3;
  return 0;
}

// The larger value at the domain ends of the rate whose offset is theta[i]
// (affine, so its largest on [lo, hi]).
double peak_rate(const std::vector<double>& theta, std::size_t i, double lo, double hi) {
  return std::max(theta[i] + theta[i + 1] * lo, theta[i] + theta[i + 1] * hi);
}

// The largest peak_rate of the rectified rates (0 if none).
double fastest_rate(const std::vector<ParamInfo>& params, const std::vector<double>& theta, double lo, double hi) {
  double m = 0;
  for (std::size_t i = 0; i + 1 < params.size(); ++i)
    if (is_rectified_rate(params, i)) m = std::max(m, peak_rate(theta, i, lo, hi));
  return m;
}

std::vector<std::string> parameters_on_bound(const std::vector<ParamInfo>& params, const std::vector<double>& theta,
                                             const FitBounds& b) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const double lo = b.lower(params[i].kind), hi = b.upper(params[i].kind);
    // Relative tolerance: Ceres' projected steps land exactly on a bound, but
    // allow for a final step that stops just short of it.
    if (std::abs(theta[i] - lo) <= 1e-6 * std::abs(lo))
      out.push_back(fmt::format("{}={} (lower bound)", params[i].name, lo));
    else if (std::abs(theta[i] - hi) <= 1e-6 * std::abs(hi))
      out.push_back(fmt::format("{}={} (upper bound)", params[i].name, hi));
  }
  return out;
}

}  // namespace

std::vector<std::string> parameters_outside_bounds(const std::vector<ParamInfo>& params,
                                                   const std::vector<double>& theta, const FitBounds& b) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < params.size(); ++i)
    if (!(theta[i] >= b.lower(params[i].kind) && theta[i] <= b.upper(params[i].kind)))
      out.push_back(fmt::format("{}={}", params[i].name, theta[i]));
  return out;
}

namespace {

// Index of the (offset, slope) pair of transition i -> j (i != j) in a chain
// of every transition between n states, in the families' order: row-major,
// the diagonal skipped. State i's exits are the n - 1 pairs from i (n - 1).
std::size_t transition_pair(std::size_t n, std::size_t i, std::size_t j) {
  return i * (n - 1) + (j < i ? j : j - 1);
}

}  // namespace

std::vector<double> exchange_states(const std::vector<double>& theta, std::size_t n, std::size_t k) {
  if (n < 2 || k == 0 || k >= n || theta.size() != 2 * n * (n - 1))
    throw InputError(fmt::format("exchange_states: bad arguments (n = {}, k = {}, {} parameters)", n, k, theta.size()));
  auto sigma = [&](std::size_t i) { return i == 0 ? k : i == k ? 0 : i; };
  std::vector<double> out(theta.size());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const std::size_t from = transition_pair(n, i, j), to = transition_pair(n, sigma(i), sigma(j));
      out[2 * to] = theta[2 * from];
      out[2 * to + 1] = theta[2 * from + 1];
    }
  return out;
}

std::vector<double> scale_state_exits(const std::vector<double>& theta, std::size_t n, std::size_t k, double factor) {
  if (n < 2 || k >= n || !(factor > 0) || !std::isfinite(factor) || theta.size() != 2 * n * (n - 1))
    throw InputError(fmt::format("scale_state_exits: bad arguments (n = {}, k = {}, factor = {}, {} parameters)", n, k,
                                 factor, theta.size()));
  auto out = theta;
  // State k's exits are the n - 1 consecutive pairs from k (n - 1)
  // (transition_pair).
  for (std::size_t t = k * (n - 1); t < (k + 1) * (n - 1); ++t) {
    out[2 * t] *= factor;
    out[2 * t + 1] *= factor;
  }
  return out;
}

std::vector<double> split_state(const std::vector<double>& theta, std::size_t n, std::size_t k, double share,
                                double internal) {
  if (n < 2 || k == 0 || k >= n || !(share > 0 && share < 1) || !(internal > 0) || !std::isfinite(internal) ||
      theta.size() != 2 * n * (n - 1))
    throw InputError(fmt::format("split_state: bad arguments (n = {}, k = {}, share = {}, internal = {}, {} parameters)",
                                 n, k, share, internal, theta.size()));
  const std::size_t m = n + 1;
  std::vector<double> out(2 * m * (m - 1));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < m; ++j) {
      if (i == j) continue;
      const std::size_t to = transition_pair(m, i, j);
      double p = 0, s = 0;
      if ((i == k && j == n) || (i == n && j == k)) {
        p = internal;
      } else {
        // The old transition this one copies (exits of n are k's), and the
        // part of it (rates into k are shared between k and n).
        const std::size_t from = transition_pair(n, i == n ? k : i, j == n ? k : j);
        const double part = j == k ? share : j == n ? 1 - share : 1;
        p = part * theta[2 * from];
        s = part * theta[2 * from + 1];
      }
      out[2 * to] = p;
      out[2 * to + 1] = s;
    }
  return out;
}

std::vector<double> slow_fast_rates(const std::vector<ParamInfo>& params, const std::vector<double>& theta, double lo,
                                    double hi, double fast, double target) {
  if (theta.size() != params.size() || !(fast > 0) || !std::isfinite(fast) || !(target > 0) || !std::isfinite(target) ||
      !(lo <= hi))
    throw InputError(fmt::format("slow_fast_rates: bad arguments ({} parameters for {}, fast = {}, target = {}, "
                                 "domain [{}, {}])",
                                 theta.size(), params.size(), fast, target, lo, hi));
  const double factor = target / fastest_rate(params, theta, lo, hi);
  auto out = theta;
  for (std::size_t i = 0; i + 1 < params.size(); ++i)
    if (is_rectified_rate(params, i) && peak_rate(theta, i, lo, hi) > fast) {
      out[i] *= factor;
      out[i + 1] *= factor;
    }
  return out;
}

double fast_rate_headroom(const std::vector<ParamInfo>& params, const std::vector<double>& theta, double lo, double hi,
                          double fast, const FitBounds& bounds) {
  if (theta.size() != params.size())
    throw InputError(fmt::format("fast_rate_headroom: {} parameters for {}", theta.size(), params.size()));
  double f = kInf;
  for (std::size_t i = 0; i + 1 < params.size(); ++i)
    if (is_rectified_rate(params, i) && peak_rate(theta, i, lo, hi) > fast)
      for (std::size_t k : {i, i + 1}) {
        const double x = theta[k];
        if (x > 0) f = std::min(f, bounds.upper(params[k].kind) / x);
        if (x < 0) f = std::min(f, bounds.lower(params[k].kind) / x);
      }
  return std::isfinite(f) ? std::max(f, 1.0) : 1.0;
}

int fit_threads(const FitOptions& options) {
#ifdef _OPENMP
  return options.threads > 0 ? options.threads : omp_get_max_threads();
#else
  return 1;
#endif
}

double mse_double(const FitProblem& problem, const std::vector<double>& theta) {
  return weighted_mse(problem, make_targets(problem), theta);
}

FitResult fit(const FitProblem& problem, const FitOptions& options) {
  // Ceres reports a start whose first evaluation fails (a chain reducible at
  // some H) through glog at ERROR level; such a start simply scores +inf here,
  // so keep glog to FATAL messages.
  static const bool quiet = [] {
    FLAGS_minloglevel = google::GLOG_FATAL;
    return true;
  }();
  (void)quiet;
  if (!options.warm_start.empty() && options.warm_start.size() != family_parameters(problem.family).size())
    throw InputError("fit: warm start has the wrong number of parameters");
  for (const auto& s : options.seeded_starts)
    if (s.size() != family_parameters(problem.family).size())
      throw InputError("fit: a seeded start has the wrong number of parameters");
  if (options.starts < 1) throw InputError(fmt::format("--starts: need at least 1 start, got {}", options.starts));
  // The re-evaluation is the reported MSE: below double precision it would be
  // less accurate than the fit it checks (the CLI's --precision starts at 53).
  if (options.mpfr_bits < 53)
    throw InputError(
        fmt::format("--precision: the MSE re-evaluation needs at least 53 MPFR bits, got {}", options.mpfr_bits));
  if (!(problem.alpha > 0)) throw InputError("--alpha: alpha_fit must be > 0");
  const auto params = family_parameters(problem.family);
  if (problem.data.h.size() < params.size())
    throw InputError(fmt::format("fit: too few points ({}) for the {} parameters of the {} family",
                                 problem.data.h.size(), params.size(), family_name(problem.family)));
  if (auto why = table_coverage_violation(problem.activation, solvers::to_double(problem.data.lo),
                                          solvers::to_double(problem.data.hi)))
    throw InputError(*why);
  const Stage full(problem);
  const Targets& targets = *full.targets;
  for (std::size_t m = 0; m < targets.y.size(); ++m)
    if (!std::isfinite(targets.y[m]))
      throw InputError(fmt::format("--activation: {} is not finite at H = {}", problem.activation.name, problem.data.h[m]));
  // The MSE is the square of the target's scale: outside [1e-100, 1e100] it
  // (or the rounding floor, 1e-26 of it) leaves the normal doubles, and the
  // fit fails ('every start failed') or reports an MSE of 0 that is not.
  double target_max = 0;
  for (double y : targets.y) target_max = std::max(target_max, std::abs(y));
  if (target_max > 0 && !(target_max >= kMinTargetScale && target_max <= kMaxTargetScale))
    throw InputError(fmt::format("--alpha: max |alpha * {}| on the data is {:g}; the fit needs it in [{:g}, {:g}] (its "
                                 "square, the MSE's scale, must stay a normal double)",
                                 problem.activation.name, target_max, kMinTargetScale, kMaxTargetScale));

  // Two stages. Exploration (starts, polishing, basin-hopping chains) runs on
  // a subsample of at most options.explore_points points (see
  // exploration_data): its solves cost a quarter of the full problem's on the
  // report's 401-point grids, so the chains can be long. Then the chain ends
  // are solved on the full problem, and kink hops and the local phase run
  // there (closed-form families): the reported fit is a local minimum of the
  // full problem.
  FitProblem explore_problem = problem;
  explore_problem.data = exploration_data(problem.data, options.explore_points);
  const bool coarse = explore_problem.data.h.size() < problem.data.h.size();
  std::optional<Stage> coarse_stage;
  if (coarse) coarse_stage.emplace(explore_problem);
  const Stage& ex = coarse ? *coarse_stage : full;
  const double floor_mse = full.floor_mse;
  // A warm start that is already exact (e.g. a nested smaller family's exact
  // optimum) is the answer: the random starts are skipped (and the result
  // says so: starts_run = 1, exact_warm_start).
  std::vector<double> warm = options.warm_start;  // clamped into the bounds
  std::vector<std::string> warm_clamped;
  if (!warm.empty()) {
    warm_clamped = parameters_outside_bounds(params, warm, problem.bounds);
    clamp_to_bounds(problem.bounds, params, warm);
  }
  const bool exact_warm_start = !warm.empty() && weighted_mse(problem, targets, warm) < floor_mse;
  const int n = exact_warm_start ? 1 : options.starts;
  std::vector<StartOutcome> outcomes(n);
  long total_iterations = 0;
  const int threads = fit_threads(options);
  // The best distinct local minima seen in the exploration (kExplorationPool
  // of them; two minima are distinct if their MSEs differ by more than 1e-7
  // relative). They all go on to the full problem: on the exploration's
  // subsample the order of near-equal minima can differ from the full
  // problem's (softplus x 1/14 full-three-state: the minimum that is best on
  // 101 points is 3.241e-8 on 401, where another is 3.157e-8).
  std::vector<StartOutcome> pool;
  auto remember = [&](const std::vector<StartOutcome>& found) {
    for (const auto& o : found)
      if (std::isfinite(o.mse)) pool.push_back(o);
    std::stable_sort(pool.begin(), pool.end(), [](const StartOutcome& a, const StartOutcome& b) { return a.mse < b.mse; });
    std::vector<StartOutcome> kept;
    for (auto& o : pool) {
      if (kept.size() == kExplorationPool) break;
      if (!kept.empty() && !(o.mse > kept.back().mse * (1 + 1e-7))) continue;
      kept.push_back(std::move(o));
    }
    pool = std::move(kept);
  };
  // Solves every theta of `thetas` on stage st (in parallel; results in order).
  auto solve_all = [&](const Stage& st, const std::vector<std::vector<double>>& thetas, const FitOptions& so) {
    const int nc = static_cast<int>(thetas.size());
    std::vector<StartOutcome> solved(thetas.size());
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
#endif
    for (int c = 0; c < nc; ++c) {
      // Exceptions must not leave an OpenMP region: a failed solve scores +inf.
      try {
        solved[static_cast<std::size_t>(c)] = solve_start(*st.problem, *st.targets, params, thetas[static_cast<std::size_t>(c)], so);
      } catch (...) {
        solved[static_cast<std::size_t>(c)] = StartOutcome{};
      }
    }
    for (const auto& o : solved) total_iterations += o.iterations;
    if (coarse && &st == &ex) remember(solved);
    return solved;
  };
  {
    std::vector<std::vector<double>> thetas(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k) {
      std::mt19937_64 rng(start_seed(options.seed, static_cast<std::uint64_t>(k)));
      // Seeded starts (options.seeded_starts) come after the warm start.
      const std::size_t seeded = static_cast<std::size_t>(k) - (warm.empty() ? 0 : 1);
      if (k == 0 && !warm.empty()) {
        thetas[0] = warm;
      } else if (seeded < options.seeded_starts.size()) {
        thetas[k] = options.seeded_starts[seeded];
        clamp_to_bounds(problem.bounds, params, thetas[k]);
      } else {
        // Redraw (from the same stream) until the start has a finite
        // objective: the general family can start reducible at some H.
        for (int attempt = 0; attempt < 100; ++attempt) {
          thetas[k] = draw_start(problem, targets, params, rng);
          if (std::isfinite(weighted_mse(*ex.problem, *ex.targets, thetas[k]))) break;
        }
      }
    }
    outcomes = solve_all(ex, thetas, options);
  }

  // Polish: the best few starts often stop while still crawling along a
  // shallow valley towards a bound (e.g. a refractory rate -> R); continue
  // them with 10x the iterations and tighter tolerances. Deterministic: the
  // set is chosen by (MSE, start index) and each polish is a pure function of
  // its start.
  FitOptions polish_options = options;
  polish_options.max_iterations = 10 * options.max_iterations;
  polish_options.function_tolerance = options.polish_tolerance;
  if (options.polish > 0) {
    const auto order = order_by_mse(outcomes);
    std::vector<std::vector<double>> thetas;
    std::vector<int> which;
    for (int i = 0; i < std::min(options.polish, n); ++i)
      if (std::isfinite(outcomes[order[i]].mse)) {
        thetas.push_back(outcomes[order[i]].theta);
        which.push_back(order[i]);
      }
    auto polished = solve_all(ex, thetas, polish_options);
    for (std::size_t i = 0; i < which.size(); ++i)
      if (polished[i].mse < outcomes[which[i]].mse) outcomes[which[i]] = std::move(polished[i]);
  }

  // Deterministic reduction: smallest (MSE, start index).
  FitResult r;
  r.family = problem.family;
  r.params = params;
  r.bounds = problem.bounds;
  const int best = best_finite(outcomes);
  if (best < 0) throw InputError(fmt::format("fit: every start failed for the {} family", family_name(problem.family)));
  r.best_start = best;

  // Index of the best of `solved` that lowers `current` by more than rounding
  // noise of the same minimum, or -1.
  auto best_improvement = [&](const std::vector<StartOutcome>& solved, double current) {
    int bc = -1;
    for (int c = 0; c < static_cast<int>(solved.size()); ++c)
      if (solved[static_cast<std::size_t>(c)].mse < (bc < 0 ? current : solved[static_cast<std::size_t>(bc)].mse)) bc = c;
    if (bc >= 0 && !(solved[static_cast<std::size_t>(bc)].mse < current * (1 - 1e-9))) bc = -1;
    return bc;
  };

  // Kink hopping. The objective is only piecewise smooth: each rectified
  // rate max(0, p + s H) has its kink H0 = -p/s between two data points, and
  // every placement of the kinks among the points is a separate smooth piece
  // with its own local minimum. A trust-region method stops at the minimum of
  // the piece it ends in, even when the neighbouring piece (kink one data
  // interval over) is better. So, for the families with closed forms (at most
  // 6 rectified rates: cheap), move each kink of the fit into the
  // neighbouring intervals of the full problem's points (slope kept),
  // re-solve with the polish tolerance (but a start's iteration cap: a hop
  // that needs more is not a neighbouring piece's minimum), and keep an
  // improvement; repeat while one is found (at most 4 rounds). Run on the
  // full problem only: the exploration's pieces are not the full problem's.
  const bool hop_kinks = options.kink_hops && problem.family.family != FitFamily::General && options.polish > 0;
  auto kink_hop = [&](std::vector<double>& theta, double& mse) {
    FitOptions po = options;
    po.function_tolerance = polish_options.function_tolerance;
    const auto& pts = full.points;
    for (int round = 0; round < 4; ++round) {
      std::vector<std::vector<double>> cands;
      for (std::size_t i = 0; i + 1 < params.size(); ++i) {
        if (params[i].kind != ParamKind::Offset) continue;
        const double pp = theta[i], ss = theta[i + 1];
        if (ss == 0) continue;
        const double h0 = -pp / ss;
        const auto it = std::upper_bound(pts.begin(), pts.end(), h0);  // pts[j-1] <= h0 < pts[j]
        const auto j = static_cast<std::ptrdiff_t>(it - pts.begin());
        for (std::ptrdiff_t jj : {j - 1, j + 1}) {  // neighbouring intervals [pts[jj-1], pts[jj])
          if (jj < 1 || jj >= static_cast<std::ptrdiff_t>(pts.size())) continue;
          const double h1 = 0.5 * (pts[static_cast<std::size_t>(jj - 1)] + pts[static_cast<std::size_t>(jj)]);
          auto th = theta;
          th[i] = std::clamp(-ss * h1, problem.bounds.lower(params[i].kind), problem.bounds.upper(params[i].kind));
          cands.push_back(std::move(th));
        }
      }
      if (cands.empty()) break;
      const auto hop = solve_all(full, cands, po);
      const int bc = best_improvement(hop, mse);
      if (bc < 0) break;
      theta = hop[static_cast<std::size_t>(bc)].theta;
      mse = hop[static_cast<std::size_t>(bc)].mse;
      ++r.kink_hops;
    }
  };

  // Basin hopping (monotonic: Leary 2000) on the exploration problem. The
  // larger families have many local minima (different sets of active rates
  // and kink placements), and independent starts rarely land in the same
  // one. Each round perturbs the chain's point `basin_candidates` times
  // (every rectified rate's values at the domain ends, and every constant
  // rate's logarithm, by sigma times their size; or some rates redrawn),
  // solves the candidates like starts and moves to the best if it improves
  // (on a subsample unpolished, see hop_to_best). Candidate c of round k of
  // chain h draws from start_seed(seed, starts + (h * rounds + k) * candidates + c):
  // deterministic for any thread count, and disjoint from the starts' streams.
  // Skipped when the fit is exact up to double rounding (see kRoundingFloor).
  // The closed-form families get kClosedFormBasinFactor x the rounds: their
  // solves cost about a fifth of a general family's, and their local minima
  // are as many. Measured on softplus x 1/14 full-three-state on the
  // 101-point exploration grid (one chain, seeds 1-20): the chance that a
  // chain reaches the row's best funnel grows with its length (10, 30, 60,
  // 200 rounds: 2, 4, 6, 14 of 20 seeds) and with the number of chains (3
  // chains of 200 rounds: 16 of 16); kink hops after each accepted hop took
  // most of a chain's time, so the chains do not hop kinks (the full problem
  // does, below).
  const double ymax = targets.ymax;
  const double lo = solvers::to_double(problem.data.lo), hi = solvers::to_double(problem.data.hi);
  const double width = hi - lo;
  // Candidate c: every rectified rate's values at the domain ends and every
  // constant rate's logarithm moved by sigma times their size (even c), or
  // some rates redrawn from the start distribution (odd c).
  auto perturb = [&](const std::vector<double>& theta0, int c, std::mt19937_64& rng, double sigma, bool redraws) {
    std::normal_distribution<double> z(0.0, sigma);
    auto th = theta0;
    if (redraws && c % 2 == 1) {
      // Redraw some rates from the start distribution, keep the rest:
      // one or two, or (every fourth candidate) half of them, or (every
      // eighth) all: a fresh random start.
      const auto fresh = draw_start(problem, targets, params, rng);
      std::vector<std::size_t> rates;
      for (std::size_t i = 0; i < params.size(); ++i)
        if (params[i].kind != ParamKind::Slope) rates.push_back(i);
      const int redraw = c % 8 == 7   ? static_cast<int>(rates.size())
                         : c % 4 == 3 ? static_cast<int>((rates.size() + 1) / 2)
                                      : 1 + static_cast<int>(rng() % 2);
      for (int k = 0; k < redraw; ++k) {
        const std::size_t i = rates[rng() % rates.size()];
        th[i] = fresh[i];
        if (params[i].kind == ParamKind::Offset) th[i + 1] = fresh[i + 1];
      }
    } else {
      for (std::size_t i = 0; i < params.size(); ++i) {
        if (params[i].kind == ParamKind::ConstRate) {
          th[i] *= std::exp(z(rng));
        } else if (params[i].kind == ParamKind::Offset) {
          double r_lo = th[i] + th[i + 1] * lo, r_hi = th[i] + th[i + 1] * hi;
          r_lo += z(rng) * std::max(std::abs(r_lo), ymax);
          r_hi += z(rng) * std::max(std::abs(r_hi), ymax);
          th[i + 1] = (r_hi - r_lo) / width;
          th[i] = r_lo - th[i + 1] * lo;
        }
      }
    }
    clamp_to_bounds(problem.bounds, params, th);
    return th;
  };
  // One hop on stage st: solve the candidates like starts; if the best
  // improves on (theta, mse), move there, polished if `polish`, and hop its
  // kinks if `kinks`. True if moved. Chains on a subsample do not polish:
  // a polish is one solve with 10x the iterations, so it ran on one thread
  // while the other idled, and took 0.6 s of the 0.9 s that the chains of
  // softplus x 1/14 full-three-state cost; its extra digits rarely change
  // which later candidate improves on the point. Chain ends and the pool are
  // polished on the full problem.
  auto hop_to_best = [&](const Stage& st, const std::vector<std::vector<double>>& cands, std::vector<double>& theta,
                         double& mse, bool polish, bool kinks) {
    const auto solved = solve_all(st, cands, options);
    const int bc = best_improvement(solved, mse);
    if (bc < 0) return false;
    StartOutcome accepted = solved[static_cast<std::size_t>(bc)];
    if (polish) {
      auto polished = solve_all(st, {accepted.theta}, polish_options);
      if (polished[0].mse < accepted.mse) accepted = std::move(polished[0]);
    }
    theta = std::move(accepted.theta);
    mse = accepted.mse;
    if (kinks) kink_hop(theta, mse);
    return true;
  };
  const std::size_t relabel_states = relabelable_states(problem.family);
  // The state exchanges of (theta, mse) on stage st (exchange_states), each
  // polished (an exchanged point is far from any minimum); moves to the best
  // if it improves, after hopping its kinks if `kinks`.
  auto try_exchanges = [&](const Stage& st, std::vector<double>& theta, double& mse, bool kinks) {
    std::vector<std::vector<double>> cands;
    for (std::size_t k = 1; k < relabel_states; ++k) cands.push_back(exchange_states(theta, relabel_states, k));
    const auto solved = solve_all(st, cands, polish_options);
    const int bc = best_finite(solved);
    if (bc < 0) return false;
    auto th = solved[static_cast<std::size_t>(bc)].theta;
    double m = solved[static_cast<std::size_t>(bc)].mse;
    if (kinks) kink_hop(th, m);
    if (!(m < mse * (1 - 1e-9))) return false;
    theta = std::move(th);
    mse = m;
    return true;
  };
  // Fast relays (full-three-state). Some minima use one state as a fast
  // relay: its exits, and the rates into it from one other state, ~1000x the
  // others' (softplus x 1/14: the 3.2408e-8 and 3.2417e-8 minima, rates up to
  // 7000-26000 x max |alpha phi|). The 3.1574e-8 minimum has the same rates
  // and kinks with those fast ones ~1000x slower, and no perturbation,
  // redraw or exchange of the chains and the local phase reached it from
  // the relay minima. Slowing every fast rate by one common factor (so the
  // fastest becomes c x max |alpha phi|, c in kSlowedRateTargets) does,
  // after a polish and kink hops (the slowed rates' kinks land in the wrong
  // cells: the candidates polish to 1.1x-1.5x the relay's MSE first).
  // Measured on seeds 1-9 with c from 2 to 7.9 in steps of 10^0.05: the
  // bridge works from both relay minima for c = 2.0-2.5 and 4.5, and from
  // one for 6.3; between them lie candidates that polish to 1e4x-1e5x
  // worse. Seeds 1-20 of the report's row: all six fits that ended in a
  // relay minimum bridged, so the second check beats 3 instead of 9 of 20,
  // at 3.5 instead of 3.4 s per seed. Not every relay is a trap: the
  // lowest minima seen (3.1105e-8, seed 18; 3.1273e-8, seed 5) relay
  // through a state with two fast exits and nothing fast into it (a spiking
  // loop through it: B -> G -> B at rate ~H/14 for H > 0 at seed 18);
  // slowing them does not improve them, and only an improvement is
  // accepted. Kink hops, the cost, are run only for candidates that polish
  // to below kFastRate (one with a fast rate is back in the relay's funnel)
  // and to less than 2x the fit's MSE (the sigmoid rows' slowed candidates
  // polish to 4x-12x theirs: their fits need the fast rates). The slowdowns
  // need the kink hops, so they run only with them (not in the widened
  // refits).
  // The other way: the loop relays' optimum lies at infinite relay speed
  // (the relay state's occupation is wasted time), and Levenberg-Marquardt
  // stalls in that flat valley short of the bound (seed 18: 3.1105e-8 with
  // the relay's rates at 400-22000; sped up by the common factor that puts
  // one of its parameters on its bound, 1.2, and polished: 3.1037e-8). One
  // more candidate: the fast rates sped up by fast_rate_headroom, its kinks
  // hopped if it improves on the fit. Moves to the best candidate if it
  // improves; returns what it did.
  enum class Rescaled { None, Slowed, SpedUp };
  auto rescale_fast_relays = [&](std::vector<double>& theta, double& mse) {
    const double fast = kFastRate * ymax;
    const double fastest = fastest_rate(params, theta, lo, hi);
    if (!(fastest > fast)) return Rescaled::None;
    std::vector<std::vector<double>> cands;
    if (hop_kinks)
      for (double c : kSlowedRateTargets) cands.push_back(slow_fast_rates(params, theta, lo, hi, fast, c * ymax));
    const std::size_t slowed = cands.size();
    const double up = fast_rate_headroom(params, theta, lo, hi, fast, problem.bounds);
    if (up > 1 + 1e-6) cands.push_back(slow_fast_rates(params, theta, lo, hi, fast, fastest * up));
    if (cands.empty()) return Rescaled::None;
    auto solved = solve_all(full, cands, polish_options);
    for (std::size_t k = 0; k < solved.size() && hop_kinks; ++k) {
      auto& o = solved[k];
      if (k < slowed ? o.mse < 2 * mse && !(fastest_rate(params, o.theta, lo, hi) > fast) : o.mse < mse)
        kink_hop(o.theta, o.mse);
    }
    const int bc = best_improvement(solved, mse);
    if (bc < 0) return Rescaled::None;
    theta = std::move(solved[static_cast<std::size_t>(bc)].theta);
    mse = solved[static_cast<std::size_t>(bc)].mse;
    return static_cast<std::size_t>(bc) < slowed ? Rescaled::Slowed : Rescaled::SpedUp;
  };
  const int basin_rounds =
      options.basin_rounds * (problem.family.family != FitFamily::General ? kClosedFormBasinFactor
                              : coarse                                      ? kGeneralBasinFactor
                                                                            : 1);
  const bool hopping = basin_rounds > 0 && options.polish > 0 && !(outcomes[best].mse < ex.floor_mse);
  // Chains: from the best `basin_chains` starts, each with its own candidate
  // streams. Their ends (or, without chains, the best start) go on to the
  // full problem.
  std::vector<StartOutcome> ends;
  std::vector<int> end_hops;
  const auto order = order_by_mse(outcomes);
  // Several chains only where they pay: one general-family solve costs about
  // five closed-form ones, and where the starts agree (at least an eighth of
  // them within 1% of the best) the landscape is benign; one chain then.
  int agreeing = 0;
  for (const auto& o : outcomes) agreeing += o.mse <= 1.01 * outcomes[best].mse;
  const bool one_chain = problem.family.family == FitFamily::General || 8 * agreeing >= n;
  const int chains = hopping ? std::min(one_chain ? 1 : options.basin_chains, n) : 0;
  for (int chain = 0; chain < chains; ++chain) {
    StartOutcome at = outcomes[order[chain]];
    if (!std::isfinite(at.mse)) continue;
    int hops = 0;
    bool relabel = relabel_states > 0;  // the point is new: try its state exchanges
    for (int round = 0; round < basin_rounds; ++round) {
      std::vector<std::vector<double>> cands;
      for (int c = 0; c < options.basin_candidates; ++c) {
        const auto stream = static_cast<std::uint64_t>(n + (chain * basin_rounds + round) * options.basin_candidates + c);
        std::mt19937_64 rng(start_seed(options.seed, stream));
        cands.push_back(perturb(at.theta, c, rng, options.basin_sigma, true));
      }
      const double before = at.mse;
      if (relabel && try_exchanges(ex, at.theta, at.mse, false)) ++hops;
      if (hop_to_best(ex, cands, at.theta, at.mse, !coarse, false)) ++hops;
      relabel = relabel_states > 0 && at.mse < before;
    }
    ends.push_back(std::move(at));
    end_hops.push_back(hops);
  }
  if (ends.empty()) {
    ends.push_back(outcomes[best]);
    end_hops.push_back(0);
  }
  // The chains continue the best starts (like polishing): the best chain end,
  // if lower, replaces the best start's MSE in the within-1% count (compared
  // on the exploration problem).
  const double explore_best = std::min(outcomes[best].mse, ends[static_cast<std::size_t>(best_finite(ends))].mse);

  // Onto the full problem: every chain end, plus the warm start as given (so
  // that a warm-started fit never ends above its warm start's full MSE),
  // polished there; the best (lowest MSE, then first) wins.
  {
    std::vector<std::vector<double>> thetas;
    for (const auto& e : ends) thetas.push_back(e.theta);
    if (!warm.empty()) thetas.push_back(warm);
    if (coarse && options.pool_to_full)
      for (const auto& o : pool) thetas.push_back(o.theta);
    std::vector<StartOutcome> on_full;
    if (coarse) {
      on_full = solve_all(full, thetas, polish_options);
    } else {
      for (const auto& e : ends) on_full.push_back(e);  // already polished on this problem
      if (!warm.empty()) on_full.push_back(StartOutcome{warm, weighted_mse(problem, targets, warm), 0});
    }
    const int bf = best_finite(on_full);
    if (bf < 0) {
      // No end is feasible on the full problem: the exploration's points
      // miss an H where its fit leaves no closed class (an exact ReLU fit
      // with every rate 0 between two exploration points). Explore on the
      // full problem instead.
      if (coarse) {
        FitOptions o = options;
        o.explore_points = 0;
        return fit(problem, o);
      }
      throw InputError(fmt::format("fit: every start failed for the {} family", family_name(problem.family)));
    }
    r.theta = on_full[static_cast<std::size_t>(bf)].theta;
    r.mse_double = on_full[static_cast<std::size_t>(bf)].mse;
    for (int h : end_hops) r.basin_hops += h;
  }
  if (hop_kinks) kink_hop(r.theta, r.mse_double);
  // The general family has no kink hops or local phase on the full problem,
  // and a transferred fit can still be crawling along a valley when the
  // polish's iteration cap ends it (sigmoid general-4 from 4 starts and 4
  // rounds: 5.7955e-7, then 5.7408e-7 and 5.7200e-7 after two more
  // polishes). Polish again while that improves (at most
  // options.general_repolish times; a converged fit stops after one short
  // solve).
  if (coarse && problem.family.family == FitFamily::General)
    for (int k = 0; k < options.general_repolish; ++k) {
      const auto again = solve_all(full, {r.theta}, polish_options);
      if (best_improvement(again, r.mse_double) < 0) break;
      r.theta = again[0].theta;
      r.mse_double = again[0].mse;
    }

  // Local phase (full problem): the chains' big moves (sigma 0.3, redraws)
  // find funnels but rarely the best of the near-equal minima inside one
  // (different kink cells of the same rates: softplus x 1/14
  // full-three-state ends at 3.22e-8 or 3.18e-8 where 3.157e-8 is a small
  // step away). Rounds of small Gaussian moves (local_sigma) of the best fit,
  // accepted like hops, with kink hops after each.
  if (hopping && options.local_rounds > 0 && problem.family.family != FitFamily::General &&
      !(r.mse_double < floor_mse)) {
    // The state exchanges once, on the full problem, from the transferred
    // fit (the chains tried them on the exploration problem).
    if (relabel_states > 0 && try_exchanges(full, r.theta, r.mse_double, hop_kinks)) ++r.local_hops;
    const int chains_streams = std::max(chains, 1) * basin_rounds * options.basin_candidates;
    for (int round = 0; round < options.local_rounds; ++round) {
      std::vector<std::vector<double>> cands;
      for (int c = 0; c < options.basin_candidates; ++c) {
        const auto stream = static_cast<std::uint64_t>(n + chains_streams + round * options.basin_candidates + c);
        std::mt19937_64 rng(start_seed(options.seed, stream));
        cands.push_back(perturb(r.theta, c, rng, options.local_sigma, false));
      }
      if (hop_to_best(full, cands, r.theta, r.mse_double, true, hop_kinks)) ++r.local_hops;
    }
  }
  // Time-scale moves (full problem). Some minima differ from a better one
  // mainly in how fast one state is left: softplus full-three-state's 1.1205e-5
  // (seed 1 of the report's row) and 1.0007e-5, where G is left much faster
  // (GR's peak 69 -> 4170). Between them, the chains' moves of every rate at
  // once polish back into the old funnel; scaling one state's exits
  // (scale_state_exits: its occupation changes, its routing does not) and
  // re-solving crosses over in three accepted moves. Which candidate polishes
  // into the better funnel depends on the exact point, so this is no guarantee
  // (seeds 2-5 of the same row stay at 1.1205e-5 and 1.4719e-5). Each round
  // tries every state with every factor of kTimeScaleFactors and keeps the best
  // if it improves by kTimeScaleMinGain (smaller gains are kink-cell steps,
  // which the kink hops and local phase make). Full-three-state (12 candidates,
  // closed form): all polished on the full problem, the best kink-hopped if
  // within 10% of the fit (a scaled state's kinks stay, the polish moves them).
  // General (16-20 candidates): ranked on the exploration problem with the
  // starts' options, the best kTimeScalePolished polished on the full problem;
  // polishing all cost 2-3x the row. Seed 1 of the report's table: softplus
  // full-three-state and 6 of the 8 inexact general rows lower (softplus x 1/14
  // general-5 1.18e-10 -> 1.74e-11), none higher; bench_fit table 42.4 -> 48.6
  // s back to back. Not in the widened refits (warm-started from the moved
  // fit).
  const bool time_scaled = problem.family.family == FitFamily::FullThreeState ||
                           problem.family.family == FitFamily::General;
  if (options.time_scale_moves && time_scaled && options.polish > 0 && !(r.mse_double < floor_mse)) {
    const std::size_t ns = state_count(problem.family);
    const bool rank_on_subsample = problem.family.family == FitFamily::General && coarse;
    for (int round = 0; round < kTimeScaleRounds; ++round) {
      std::vector<std::vector<double>> cands;
      for (std::size_t k = 0; k < ns; ++k)
        for (double factor : kTimeScaleFactors) {
          auto th = scale_state_exits(r.theta, ns, k, factor);
          clamp_to_bounds(problem.bounds, params, th);
          cands.push_back(std::move(th));
        }
      if (rank_on_subsample) {
        const auto rough = solve_all(ex, cands, options);
        const auto ranked = order_by_mse(rough);
        std::vector<std::vector<double>> best;
        for (int i = 0; i < kTimeScalePolished && i < static_cast<int>(ranked.size()); ++i)
          if (std::isfinite(rough[static_cast<std::size_t>(ranked[i])].mse))
            best.push_back(rough[static_cast<std::size_t>(ranked[i])].theta);
        cands = std::move(best);
      }
      auto solved = solve_all(full, cands, polish_options);
      const int lowest = best_finite(solved);
      if (hop_kinks && lowest >= 0 && solved[static_cast<std::size_t>(lowest)].mse < 1.1 * r.mse_double)
        kink_hop(solved[static_cast<std::size_t>(lowest)].theta, solved[static_cast<std::size_t>(lowest)].mse);
      const int bc = best_improvement(solved, r.mse_double);
      if (bc < 0 || !(solved[static_cast<std::size_t>(bc)].mse < r.mse_double * (1 - kTimeScaleMinGain))) break;
      r.theta = std::move(solved[static_cast<std::size_t>(bc)].theta);
      r.mse_double = solved[static_cast<std::size_t>(bc)].mse;
      ++r.time_scale_moves;
    }
  }
  if (options.rescale_relays && problem.family.family == FitFamily::FullThreeState && options.polish > 0 &&
      !(r.mse_double < floor_mse)) {
    const auto done = rescale_fast_relays(r.theta, r.mse_double);
    r.relay_slowdowns += done == Rescaled::Slowed;
    r.relay_speedups += done == Rescaled::SpedUp;
  }
  // Starts' MSEs and the within-1% count are on the exploration problem,
  // where the starts ran; without a subsample (the exploration problem is
  // the full one) the final fit continues the best start.
  for (int k = 0; k < n; ++k) r.start_mse.push_back(outcomes[k].mse);
  const double reference = coarse ? explore_best : r.mse_double;
  r.start_mse[static_cast<std::size_t>(best)] = reference;
  r.iterations = total_iterations;
  for (int k = 0; k < n; ++k)
    if (r.start_mse[static_cast<std::size_t>(k)] <= 1.01 * reference) ++r.within_1pct;
  r.explore_points = ex.problem->data.h.size();

  // The written model is the chain the optimizer saw, also where a kink sits
  // on a data point to the last bit (nudge_kinks_off_points).
  r.theta = nudge_kinks_off_points(params, r.theta, problem.data, problem.bounds);
  r.mse_double = weighted_mse(problem, targets, r.theta);
  r.model = model_of(problem.family, r.theta);
  const auto exact = evaluate_exactly(r.model, problem, options.mpfr_bits);
  r.mse = exact.mse;
  r.max_abs_error = exact.max_abs_error;
  r.max_abs_error_at = exact.max_abs_error_at;
  r.on_bound = parameters_on_bound(params, r.theta, problem.bounds);

  // At the rounding floor wider bounds cannot lower the MSE by a meaningful
  // amount, so the widened refits are not run and the result says so instead.
  r.mse_at_rounding_floor = r.mse < floor_mse;
  r.starts_run = n;
  r.exact_warm_start = exact_warm_start;
  r.warm_start_clamped = std::move(warm_clamped);
  if (!r.on_bound.empty() && options.widen_on_bound && !r.mse_at_rounding_floor) {
    for (double factor : {10.0, 100.0}) {
      FitProblem wider = problem;
      wider.bounds.widen = problem.bounds.widen * factor;
      // Warm start from the bounded optimum (so the widened MSE can only be
      // lower), plus an eighth of the random starts; no hopping or moves, and
      // only the best start and the warm start go on to the full problem (see
      // pool_to_full, general_repolish).
      FitOptions o = options;
      o.widen_on_bound = false;
      o.kink_hops = false;  // warm-started from the hopped optimum already
      o.basin_rounds = 0;   // likewise
      o.time_scale_moves = false;
      o.warm_start = r.theta;
      o.seeded_starts.clear();
      o.pool_to_full = false;
      o.general_repolish = 1;
      o.starts = std::max(8, options.starts / 8);
      const auto w = fit(wider, o);
      r.widened.push_back({factor, w.mse, w.max_abs_error, w.on_bound});
    }
  }

  // Meta (DESIGN.md sections 7-8): what was fitted, how, and how well.
  auto& meta = r.model.meta;
  meta["family"] = problem.family.family == FitFamily::General ? std::string("general") : family_name(problem.family);
  meta["states"] = state_count(problem.family);
  meta["target"] = problem.activation.name;
  meta["alpha_fit"] = solvers::exact_text(problem.alpha);
  meta["domain"] = {solvers::exact_text(problem.data.lo), solvers::exact_text(problem.data.hi)};
  meta["data"] = problem.data.description;
  meta["points"] = problem.data.h.size();
  meta["mse"] = r.mse;
  meta["max_abs_error"] = r.max_abs_error;
  meta["max_abs_error_at"] = r.max_abs_error_at;
  meta["error_precision_bits"] = options.mpfr_bits;
  meta["starts"] = n;
  if (exact_warm_start) meta["random_starts_skipped"] = "the warm start is exact up to double rounding";
  meta["starts_within_1pct"] = r.within_1pct;
  meta["exploration_points"] = r.explore_points;
  meta["kink_hops"] = r.kink_hops;
  meta["basin_hops"] = r.basin_hops;
  meta["local_hops"] = r.local_hops;
  meta["relay_slowdowns"] = r.relay_slowdowns;
  meta["relay_speedups"] = r.relay_speedups;
  meta["time_scale_moves"] = r.time_scale_moves;
  meta["best_start"] = best;
  meta["seed"] = options.seed;
  meta["bounds"] = {{"offset", {problem.bounds.lower(ParamKind::Offset), problem.bounds.upper(ParamKind::Offset)}},
                    {"slope", {problem.bounds.lower(ParamKind::Slope), problem.bounds.upper(ParamKind::Slope)}},
                    {"constant_rate",
                     {problem.bounds.lower(ParamKind::ConstRate), problem.bounds.upper(ParamKind::ConstRate)}}};
  meta["on_bound"] = r.on_bound;
  if (!r.widened.empty()) {
    auto arr = nlohmann::ordered_json::array();
    for (const auto& w : r.widened)
      arr.push_back({{"widen", w.widen}, {"mse", w.mse}, {"max_abs_error", w.max_abs_error}, {"on_bound", w.on_bound}});
    meta["widened_bounds"] = arr;
  } else if (!r.on_bound.empty() && r.mse_at_rounding_floor) {
    meta["widened_bounds"] = fmt::format("not refitted: MSE {:.3e} is below {:g} x mean((alpha phi)^2), the rounding floor, "
                                         "so wider bounds cannot lower it",
                                         r.mse, kRoundingFloor);
  }
  return r;
}

}  // namespace ctmc::analysis
