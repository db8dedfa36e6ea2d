// The Ceres solves of the fit (fit_internal.hpp): residuals, Jacobians and
// one bounded Levenberg-Marquardt (or dogleg) solve. All ceres::Jet
// instantiations of the flux (closed forms and GTH) live in this one
// translation unit.
#include <ceres/ceres.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef __SSE__
#include <xmmintrin.h>
#endif

#include "ctmc/core/errors.hpp"
#include "fit/fit_internal.hpp"

namespace ctmc::analysis {
namespace fit_search {

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

Stage::Stage(const FitProblem& p) : problem(&p), own(make_targets(p)), targets(&own), points(p.data.h) {
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  double mean_y2 = 0;
  for (std::size_t m = 0; m < own.y.size(); ++m) mean_y2 += own.scale[m] * own.scale[m] * own.y[m] * own.y[m];
  floor_mse = kRoundingFloor * mean_y2;
}

namespace {

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

}  // namespace

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

}  // namespace fit_search

int fit_threads(const FitOptions& options) {
#ifdef _OPENMP
  return options.threads > 0 ? options.threads : omp_get_max_threads();
#else
  return 1;
#endif
}

double mse_double(const FitProblem& problem, const std::vector<double>& theta) {
  return fit_search::weighted_mse(problem, fit_search::make_targets(problem), theta);
}

}  // namespace ctmc::analysis
