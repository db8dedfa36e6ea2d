#include "ctmc/proofs_check/bernstein.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <queue>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"

namespace ctmc::proofs_check {

namespace {

// Relative size below which a binomial tail is dropped into the enclosure
// (it is still bounded, not ignored), in the double paths.
constexpr double kTailRelDouble = 1e-14;

double up(double x) { return std::nextafter(x, INFINITY); }
double down(double x) { return std::nextafter(x, -INFINITY); }

}  // namespace

// ---------------------------------------------------------------- problem

void BernsteinProblem::psi(mpfi_ptr out, mpfi_srcptr u) const {
  Ivl x(prec), lo(prec);
  activations::set_rational(x, imax - imin);
  mpfi_mul(x, x, u);
  activations::set_rational(lo, imin);
  mpfi_add(x, x, lo);
  activations::eval_interval(act, out, x);
}

void BernsteinProblem::h(mpfi_ptr out, mpfi_srcptr u) const {
  // h = rho psi / (rho - psi) = rho^2 / (rho - psi) - rho: psi occurs once.
  Ivl ps(prec), r(prec);
  psi(ps, u);
  activations::set_rational(r, rho);
  mpfi_sub(ps, r, ps);
  mpfi_sqr(r, r);
  mpfi_div(ps, r, ps);
  activations::set_rational(r, rho);
  mpfi_sub(out, ps, r);
}

void BernsteinProblem::psi_derivative(mpfi_ptr out, mpfi_srcptr u) const {
  Ivl x(prec), lo(prec), d(prec);
  activations::set_rational(d, imax - imin);
  mpfi_mul(x, d, u);
  activations::set_rational(lo, imin);
  mpfi_add(x, x, lo);
  activations::derivative_interval(act, out, x);
  mpfi_mul(out, out, d);
}

void BernsteinProblem::max_psi(mpfi_ptr out) const {
  Ivl one(prec);
  mpfi_set_ui(one, 1);
  psi(out, one);
}

BernsteinProblem make_problem(const activations::Activation& act, const Rational& imin, const Rational& imax,
                              const std::optional<Rational>& rho, const std::optional<Rational>& rho_factor,
                              mpfr_prec_t prec) {
  if (!(imax > imin))
    throw InputError("domain", fmt::format("empty interval [{}, {}] (need LO < HI)", solvers::exact_text(imin),
                                           solvers::exact_text(imax)));
  // L_h, the bounds and the sup search are doubles, and they scale with the
  // width: -1e308,1e308 printed a limit of -nan (exit 0).
  if (!std::isfinite(solvers::to_double(imax) - solvers::to_double(imin)))
    throw InputError("domain", fmt::format("the width of [{}, {}] overflows a double (domain too wide)",
                                           solvers::exact_text(imin), solvers::exact_text(imax)));
  if (auto why = activations::admissibility_violation(act, imin, imax, prec))
    throw InputError("activation", *why);
  BernsteinProblem p{act, imin, imax, Rational(0), prec};
  Ivl mx(prec);
  p.max_psi(mx);
  // An overflowing max phi (softplus on [-1e200, 1e200]) is named as such, not
  // mistaken further on for a phi that is not positive.
  if (!mpfi_bounded_p(mx) || !std::isfinite(mpfr_get_d(&mx.get()->right, MPFR_RNDU)))
    throw InputError("domain", fmt::format("max phi of {} on [{}, {}] is beyond the range of a double", act.name,
                                           solvers::exact_text(imin), solvers::exact_text(imax)));
  if (rho) {
    p.rho = *rho;
  } else {
    const Rational f = rho_factor ? *rho_factor : Rational(2);
    if (!(f > 1))
      throw InputError("rho_factor", fmt::format("must be > 1 (got {})", solvers::exact_text(f)));
    Ivl r(prec), fi(prec);
    activations::set_rational(fi, f);
    mpfi_mul(r, mx, fi);
    mpfr_t hi;
    mpfr_init2(hi, prec);
    mpfi_get_right(hi, r);  // a dyadic rational >= f max phi
    Rational q;
    mpfr_get_q(q.backend().data(), hi);
    mpfr_clear(hi);
    p.rho = q;
  }
  // rho is used in double too: 1e400 became inf (sup error 0, "Proved").
  if (!std::isfinite(solvers::to_double(p.rho))) {
    if (rho) throw InputError("rho", fmt::format("{} is beyond the range of a double", solvers::exact_text(*rho)));
    throw InputError("rho_factor", fmt::format("rho = {} x max phi ({:.10g}) is beyond the range of a double",
                                               solvers::exact_text(rho_factor.value_or(Rational(2))), mx.mid()));
  }
  Ivl r(prec);
  activations::set_rational(r, p.rho);
  if (!(mpfr_cmp(&r.get()->left, &mx.get()->right) > 0)) {
    if (!rho)  // rho came from the factor: max phi <= 0, so no factor helps
      throw InputError("rho_factor", fmt::format("F x max phi = {} does not exceed max phi = {:.10g} on the "
                                                 "domain (phi is not positive there); give rho itself",
                                                 solvers::to_double(p.rho), mx.mid()));
    throw InputError("rho", fmt::format("rho = {} must exceed max phi = {:.10g} on the domain",
                                        solvers::to_double(p.rho), mx.mid()));
  }
  return p;
}

// ---------------------------------------------------------------- the sum

namespace {

// Scratch MPFR values of one side (lower or upper end) of the window sums.
struct SideSums {
  mpfr_t w, t, s, a;
  explicit SideSums(mpfr_prec_t p) {
    mpfr_inits2(p, w, t, s, a, static_cast<mpfr_ptr>(nullptr));
  }
  ~SideSums() { mpfr_clears(w, t, s, a, static_cast<mpfr_ptr>(nullptr)); }
};

}  // namespace

// The window sums run on the interval ends separately: every quantity is
// nonnegative, so the lower ends combine with downward rounding and the upper
// ends with upward rounding (cheaper than general MPFI products).
void bernstein_sum(mpfi_ptr out, std::int64_t n, mpfi_srcptr u,
                   const std::function<mpfi_srcptr(std::int64_t)>& kappa, mpfi_srcptr kappa_max,
                   std::uint64_t* terms, double tail_rel) {
  const mpfr_prec_t prec = mpfi_get_prec(out);
  if (mpfr_cmp_ui(&u->left, 1) >= 0) {  // u = 1: b_N = 1
    mpfi_set(out, kappa(n));
    return;
  }
  if (mpfr_sgn(&u->right) <= 0) {  // u = 0: b_0 = 1
    mpfi_set(out, kappa(0));
    return;
  }
  Ivl q(prec), qinv(prec), one_minus(prec);
  mpfi_ui_sub(one_minus, 1, u);
  mpfi_div(q, u, one_minus);      // u / (1-u)
  mpfi_div(qinv, one_minus, u);   // (1-u) / u
  const double um = mpfr_get_d(&u->left, MPFR_RNDN);
  std::int64_t m = static_cast<std::int64_t>(std::floor(static_cast<double>(n + 1) * um));
  m = std::clamp<std::int64_t>(m, 0, n);

  SideSums lo(prec), hi(prec);
  mpfr_set_ui(lo.s, 1, MPFR_RNDN);  // w_m = 1
  mpfr_set_ui(hi.s, 1, MPFR_RNDN);
  mpfr_set(lo.a, &kappa(m)->left, MPFR_RNDD);
  mpfr_set(hi.a, &kappa(m)->right, MPFR_RNDU);
  double tail = 0;
  std::uint64_t count = 1;
  // One direction: w_next = w t_i with t_i = factor * num(i) / den(i), where
  // the ratios decrease along the walk, so once t < 1 the rest is at most a
  // geometric series w t / (1 - t).
  auto walk = [&](mpfi_srcptr factor, std::int64_t step) {
    mpfr_set_ui(lo.w, 1, MPFR_RNDN);
    mpfr_set_ui(hi.w, 1, MPFR_RNDN);
    for (std::int64_t i = m; step > 0 ? i < n : i > 0; i += step) {
      // up: t = q (N-i)/(i+1); down: t = q^-1 i/(N-i+1)
      const auto num = static_cast<unsigned long>(step > 0 ? n - i : i);
      const auto den = static_cast<unsigned long>(step > 0 ? i + 1 : n - i + 1);
      mpfr_mul_ui(lo.t, &factor->left, num, MPFR_RNDD);
      mpfr_div_ui(lo.t, lo.t, den, MPFR_RNDD);
      mpfr_mul_ui(hi.t, &factor->right, num, MPFR_RNDU);
      mpfr_div_ui(hi.t, hi.t, den, MPFR_RNDU);
      const double th = mpfr_get_d(hi.t, MPFR_RNDU);
      if (th < 1) {
        const double bound = up(up(mpfr_get_d(hi.w, MPFR_RNDU) * th) / down(1 - th));
        if (bound <= tail_rel * mpfr_get_d(lo.s, MPFR_RNDD)) {
          tail += bound;
          return;
        }
      }
      mpfr_mul(lo.w, lo.w, lo.t, MPFR_RNDD);
      mpfr_mul(hi.w, hi.w, hi.t, MPFR_RNDU);
      mpfr_add(lo.s, lo.s, lo.w, MPFR_RNDD);
      mpfr_add(hi.s, hi.s, hi.w, MPFR_RNDU);
      mpfi_srcptr k = kappa(i + step);
      // kappa >= 0 (h >= 0): lower ends pair with lower ends.
      mpfr_fma(lo.a, &k->left, lo.w, lo.a, MPFR_RNDD);
      mpfr_fma(hi.a, &k->right, hi.w, hi.a, MPFR_RNDU);
      ++count;
    }
  };
  walk(q, +1);
  walk(qinv, -1);
  if (terms) *terms += count;
  // M in (A + [0, kappa_max T]) / (S + [0, T]); tail is a double rounded up.
  tail = up(tail);
  mpfr_mul_d(hi.t, &kappa_max->right, tail, MPFR_RNDU);
  mpfr_add(hi.a, hi.a, hi.t, MPFR_RNDU);
  mpfr_add_d(hi.s, hi.s, tail, MPFR_RNDU);
  // lower end: A_lo / (S_hi + T); upper end: (A_hi + kappa_max T) / S_lo
  mpfr_div(lo.t, lo.a, hi.s, MPFR_RNDD);
  mpfr_div(hi.t, hi.a, lo.s, MPFR_RNDU);
  mpfi_interv_fr(out, lo.t, hi.t);
}

// ---------------------------------------------------------------- evaluator

namespace {
std::int64_t checked_n(std::int64_t n) {
  if (n < 1) throw InputError("N", fmt::format("must be >= 1 (got {})", n));
  return n;
}
}  // namespace

BernsteinEvaluator::BernsteinEvaluator(const BernsteinProblem& p, std::int64_t n, Arithmetic arith)
    : p_(p), n_(checked_n(n)), arith_(arith), kappa_(static_cast<std::size_t>(n + 1)), kappa_d_(static_cast<std::size_t>(n + 1)),
      kappa_d_set_(static_cast<std::size_t>(n + 1), 0), kappa_max_(p.prec) {
  Ivl one(p.prec);
  mpfi_set_ui(one, 1);
  p.h(kappa_max_, one);  // h nondecreasing: kappa_i <= h(1)
}

BernsteinEvaluator::~BernsteinEvaluator() = default;

mpfi_srcptr BernsteinEvaluator::kappa(std::int64_t i) {
  auto& slot = kappa_[static_cast<std::size_t>(i)];
  if (!slot) {
    slot = std::make_unique<Ivl>(p_.prec);
    Ivl u(p_.prec);
    mpfi_set_si(u, static_cast<long>(i));
    mpfi_div_si(u, u, static_cast<long>(n_));
    p_.h(*slot, u);
    // h >= 0 is proved (phi >= 0, rho > psi): drop a negative rounding end,
    // the window sums pair lower ends with lower ends.
    if (mpfr_sgn(&slot->get()->left) < 0) mpfr_set_zero(&slot->get()->left, 1);
  }
  return *slot;
}

double BernsteinEvaluator::kappa_double(std::int64_t i) {
  const auto k = static_cast<std::size_t>(i);
  if (!kappa_d_set_[k]) {
    kappa(i);
    kappa_d_[k] = kappa_[k]->mid();
    kappa_d_set_[k] = 1;
  }
  return kappa_d_[k];
}

double BernsteinEvaluator::kappa_lo_d(std::int64_t i) {
  if (kappa_lo_d_.empty()) {
    kappa_lo_d_.assign(static_cast<std::size_t>(n_ + 1), NAN);
    kappa_hi_d_.assign(static_cast<std::size_t>(n_ + 1), NAN);
  }
  double& v = kappa_lo_d_[static_cast<std::size_t>(i)];
  if (std::isnan(v)) {
    mpfi_srcptr k = kappa(i);
    v = mpfr_get_d(&k->left, MPFR_RNDD);
    kappa_hi_d_[static_cast<std::size_t>(i)] = mpfr_get_d(&k->right, MPFR_RNDU);
  }
  return v;
}

double BernsteinEvaluator::kappa_hi_d(std::int64_t i) {
  kappa_lo_d(i);
  return kappa_hi_d_[static_cast<std::size_t>(i)];
}

namespace {

// Binomial weights w_i = b_i / b_m of degree n at u over the window where
// they matter, in doubles with an a-priori relative error bound delta
// (Higham's gamma, doubled) and a bound `tail` on the weight outside the
// window (same units), as in bernstein_sum.
struct Window {
  std::int64_t i0 = 0, i1 = -1;
  std::vector<double> w;
  double s = 0, delta = 0, tail = 0;
  bool ok = false;
  // Enclosure of the normalized b_i (0 and the tail mass outside the window).
  double b_lo(std::int64_t i) const {
    if (i < i0 || i > i1) return 0;
    return down(down(w[i - i0] * down(1 - delta)) / up(up(s * up(1 + delta)) + tail));
  }
  double b_hi(std::int64_t i) const {
    if (i < i0 || i > i1) return outside();
    return up(up(w[i - i0] * up(1 + delta)) / down(s * down(1 - delta)));
  }
  double outside() const { return up(tail / down(s * down(1 - delta))); }
};

Window window_weights(std::int64_t n, double u) {
  Window win;
  const double q = u / (1 - u), qi = (1 - u) / u;
  const std::int64_t m = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::floor((n + 1) * u)), 0, n);
  std::vector<double> upw, dnw;
  std::vector<std::pair<double, double>> stops;
  double s = 1;
  std::int64_t steps_max = 0;
  auto walk = [&](double factor, std::int64_t step, std::vector<double>& out) {
    double w = 1;
    for (std::int64_t i = m; step > 0 ? i < n : i > 0; i += step) {
      const double num = static_cast<double>(step > 0 ? n - i : i);
      const double den = static_cast<double>(step > 0 ? i + 1 : n - i + 1);
      const double t = factor * num / den;
      if (t < 1 - 1e-4 && w * t / (1 - t) <= kTailRelDouble * s) {
        stops.emplace_back(w, t);
        break;
      }
      w *= t;
      s += w;
      out.push_back(w);
    }
    steps_max = std::max<std::int64_t>(steps_max, static_cast<std::int64_t>(out.size()));
  };
  if (m < n) walk(q, +1, upw);
  if (m > 0) walk(qi, -1, dnw);
  win.i0 = m - static_cast<std::int64_t>(dnw.size());
  win.i1 = m + static_cast<std::int64_t>(upw.size());
  win.w.assign(dnw.rbegin(), dnw.rend());
  win.w.push_back(1.0);
  win.w.insert(win.w.end(), upw.begin(), upw.end());
  win.s = s;
  const double k_ops = static_cast<double>(5 * steps_max + static_cast<std::int64_t>(win.w.size()) + 4);
  win.delta = up(2 * up(k_ops * 0x1p-53) / down(1 - k_ops * 0x1p-53));
  for (auto [w, t] : stops) {
    const double tt = up(t * up(1 + win.delta)), ww = up(w * up(1 + win.delta));
    if (!(tt < 1)) return win;
    win.tail = up(win.tail + up(up(ww * tt) / down(1 - tt)));
  }
  win.ok = win.delta < 1e-3;
  return win;
}

// Upper bound of exp(x), MPFR rounded up (no libm inside a bound).
double exp_up(double x) {
  mpfr_t t;
  mpfr_init2(t, 64);
  mpfr_set_d(t, x, MPFR_RNDU);
  mpfr_exp(t, t, MPFR_RNDU);
  const double r = mpfr_get_d(t, MPFR_RNDU);
  mpfr_clear(t);
  return r;
}

}  // namespace

bool BernsteinEvaluator::derivative_bounds(double a, double b, double& lo, double& hi) {
  if (!(a > 0 && b < 1 && a <= b)) return false;
  const std::int64_t n1 = n_ - 1;
  auto delta_lo = [&](std::int64_t i) { return std::max(0.0, down(kappa_lo_d(i + 1) - kappa_hi_d(i))); };
  auto delta_hi = [&](std::int64_t i) { return up(kappa_hi_d(i + 1) - kappa_lo_d(i)); };
  const double nd = static_cast<double>(n_);
  if (n1 == 0) {  // M_1 = kappa_0 (1-u) + kappa_1 u: M' = kappa_1 - kappa_0
    lo = delta_lo(0);
    hi = delta_hi(0);
    return true;
  }
  // A cell much wider than the binomial spread cannot pass the window checks
  // below: skip the work (the caller bisects instead).
  if ((b - a) * static_cast<double>(n1) > 8 * std::sqrt(static_cast<double>(n1)) + 4) return false;
  const Window wa = window_weights(n1, a), wb = window_weights(n1, b);
  if (!wa.ok || !wb.ok) return false;
  const std::int64_t i0 = std::min(wa.i0, wb.i0), i1 = std::max(wa.i1, wb.i1);
  if (wa.i1 + 1 < wb.i0) return false;  // the windows must overlap: no index unaccounted for
  // Indices whose b_i may peak inside [a, b] (i/n1 in [a, b], one index of
  // slack for the rounding of a n1 and b n1) must lie in the union window.
  const auto mid_lo = static_cast<std::int64_t>(std::floor(a * static_cast<double>(n1))) - 1;
  const auto mid_hi = static_cast<std::int64_t>(std::ceil(b * static_cast<double>(n1))) + 1;
  if (mid_lo < i0 || mid_hi > i1) return false;
  double sum_lo = 0, sum_hi = 0;
  const double width = up(b - a);
  for (std::int64_t i = i0; i <= i1; ++i) {
    const double dl = delta_lo(i), dh = delta_hi(i);
    sum_lo += dl * std::min(wa.b_lo(i), wb.b_lo(i));
    double mx;
    if (i < mid_lo) {
      mx = wa.b_hi(i);  // peak i/n1 < a: b_i decreases on [a, b]
    } else if (i > mid_hi) {
      mx = wb.b_hi(i);  // peak > b: b_i increases on [a, b]
    } else {
      // log b_i is concave: b_i(u) <= b_i(a) exp((i/a - (n1-i)/(1-a)) (u - a)).
      const double slope = up(up(static_cast<double>(i) / a) - down(static_cast<double>(n1 - i) / up(1 - a)));
      mx = std::max({wa.b_hi(i), wb.b_hi(i), up(wa.b_hi(i) * exp_up(up(std::max(0.0, slope) * width)))});
    }
    sum_hi += dh * mx;
  }
  // Indices outside the union peak outside (a, b): at most b_i(a) + b_i(b),
  // whose total is the two tail masses; increments sum to <= kappa_N - kappa_0.
  const double total_delta = up(kappa_hi_d(n_) - kappa_lo_d(0));
  const double k_ops = static_cast<double>(4 * (i1 - i0 + 1) + 4);
  const double g = up(2 * up(k_ops * 0x1p-53) / down(1 - k_ops * 0x1p-53));
  lo = down(down(sum_lo * down(1 - g)) * nd);
  hi = up(up(up(sum_hi * up(1 + g)) + up(total_delta * up(wa.outside() + wb.outside()))) * nd);
  return true;
}

void BernsteinEvaluator::eval_double_bound(mpfi_ptr m_out, double u) {
  auto klo = [&](std::int64_t i) { return kappa_lo_d(i); };
  auto khi = [&](std::int64_t i) { return kappa_hi_d(i); };
  const double q = u / (1 - u), qi = (1 - u) / u;
  const std::int64_t m = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::floor((n_ + 1) * u)), 0, n_);
  double s = 1, alo = klo(m), ahi = khi(m);
  std::int64_t steps_max = 0, count = 1;
  // Rounding budget per term: 2 for q, 2 for t, 1 per product step, 1 per
  // sum (recursive summation), 1 per fma: gamma_K with K = 5 J + W + 4.
  auto walk = [&](double factor, std::int64_t step, std::vector<std::pair<double, double>>& stop) {
    double w = 1;
    std::int64_t j = 0;
    for (std::int64_t i = m; step > 0 ? i < n_ : i > 0; i += step) {
      const double num = static_cast<double>(step > 0 ? n_ - i : i);
      const double den = static_cast<double>(step > 0 ? i + 1 : n_ - i + 1);
      const double t = factor * num / den;
      if (t < 1 - 1e-4 && w * t / (1 - t) <= kTailRelDouble * s) {
        stop.emplace_back(w, t);  // tail bounded below, after the error budget is known
        break;
      }
      w *= t;
      s += w;
      const std::int64_t k = i + step;
      alo = std::fma(klo(k), w, alo);
      ahi = std::fma(khi(k), w, ahi);
      ++j;
      ++count;
    }
    steps_max = std::max(steps_max, j);
  };
  std::vector<std::pair<double, double>> stops;
  if (m < n_) walk(q, +1, stops);
  if (m > 0) walk(qi, -1, stops);
  terms_ += static_cast<std::uint64_t>(count);
  // delta >= 2 gamma_K bounds the relative error of every computed w, t, S, A.
  const double k_ops = static_cast<double>(5 * steps_max + count + 4);
  const double unit = 0x1p-53;
  const double delta = up(2 * up(k_ops * unit) / down(1 - k_ops * unit));
  double tail = 0;
  for (auto [w, t] : stops) {
    const double tt = up(t * up(1 + delta)), ww = up(w * up(1 + delta));
    if (!(tt < 1) || !(delta < 1e-3)) {  // error budget too large for the double path
      mpfi_t uu;
      mpfi_init2(uu, p_.prec);
      mpfi_set_d(uu, u);
      bernstein_sum(m_out, n_, uu, [this](std::int64_t i) { return kappa(i); }, kappa_max_, &terms_);
      mpfi_clear(uu);
      return;
    }
    tail = up(tail + up(up(ww * tt) / down(1 - tt)));
  }
  const double s_lo = down(s * down(1 - delta)), s_hi = up(up(s * up(1 + delta)) + tail);
  const double a_lo = down(alo * down(1 - delta));
  const double kmax = mpfr_get_d(&kappa_max_.get()->right, MPFR_RNDU);
  const double a_hi = up(up(ahi * up(1 + delta)) + up(kmax * tail));
  mpfi_interv_d(m_out, std::max(0.0, down(a_lo / s_hi)), up(a_hi / s_lo));
}

void BernsteinEvaluator::eval(mpfi_ptr m_out, mpfi_ptr f_out, mpfi_srcptr u) {
  const bool point = mpfr_equal_p(&u->left, &u->right) != 0;
  const double ud = mpfr_get_d(&u->left, MPFR_RNDN);
  if (arith_ == Arithmetic::DoubleErrorBound && point && ud > 0 && ud < 1 &&
      mpfr_cmp_d(&u->left, ud) == 0) {
    eval_double_bound(m_out, ud);
  } else {
    bernstein_sum(m_out, n_, u, [this](std::int64_t i) { return kappa(i); }, kappa_max_, &terms_);
  }
  // F = g(M) = rho - rho^2 / (rho + M): M occurs once.
  Ivl r(p_.prec), t(p_.prec);
  activations::set_rational(r, p_.rho);
  mpfi_add(t, r, m_out);
  mpfi_sqr(f_out, r);
  mpfi_div(t, f_out, t);
  mpfi_sub(f_out, r, t);
}

double BernsteinEvaluator::error_double(double u) {
  const double rho = solvers::to_double(p_.rho);
  double m;
  if (u <= 0) {
    m = kappa_double(0);
  } else if (u >= 1) {
    m = kappa_double(n_);
  } else {
    const double q = u / (1 - u), qi = (1 - u) / u;
    const std::int64_t mode = std::clamp<std::int64_t>(static_cast<std::int64_t>((n_ + 1) * u), 0, n_);
    double s = 1, a = kappa_double(mode), w = 1;
    for (std::int64_t i = mode; i < n_; ++i) {
      const double t = q * static_cast<double>(n_ - i) / static_cast<double>(i + 1);
      if (t < 1 && w * t / (1 - t) < kTailRelDouble * s) break;
      w *= t;
      s += w;
      a += w * kappa_double(i + 1);
    }
    w = 1;
    for (std::int64_t i = mode; i > 0; --i) {
      const double t = qi * static_cast<double>(i) / static_cast<double>(n_ - i + 1);
      if (t < 1 && w * t / (1 - t) < kTailRelDouble * s) break;
      w *= t;
      s += w;
      a += w * kappa_double(i - 1);
    }
    m = a / s;
  }
  const double f = rho * m / (rho + m);
  const double imin = solvers::to_double(p_.imin), imax = solvers::to_double(p_.imax);
  return f - p_.act.eval(imin + (imax - imin) * u);
}

// ---------------------------------------------------------------- certified sup

namespace {

struct Point {
  double u;
  double f_lo, f_hi, p_lo, p_hi;
  double m_lo, m_hi;
};

struct Cell {
  Point a, b;
  double bound;
  bool operator<(const Cell& o) const { return bound < o.bound; }
};

Point evaluate_point(BernsteinEvaluator& ev, double u) {
  const mpfr_prec_t prec = ev.problem().prec;
  Ivl ui(prec), m(prec), f(prec), ps(prec);
  mpfi_set_d(ui, u);  // exact: grid points are doubles
  ev.eval(m, f, ui);
  ev.problem().psi(ps, ui);
  return {u, f.lo(), f.hi(), ps.lo(), ps.hi(), m.lo(), m.hi()};
}

// max over x in [0, w] of min(A + s1 x, B - s2 (w - x)) (s1 >= s2): the
// minimum of two lines is concave, so its maximum is at an end or where they
// cross; the margin covers the rounding of these few operations.
double envelope_max(double A, double s1, double B, double s2, double w) {
  auto val = [&](double x) { return std::min(A + s1 * x, B - s2 * (w - x)); };
  double best = std::max(val(0), val(w));
  if (s1 > s2) {
    const double xs = (B - s2 * w - A) / (s1 - s2);
    if (xs > 0 && xs < w) best = std::max(best, val(xs));
  }
  const double margin = 1e-13 * (std::fabs(A) + std::fabs(B) + (std::fabs(s1) + std::fabs(s2)) * w);
  return up(best + margin);
}

// Second-order cell bound (mean-value form on both ends): with
// e = F_N - psi and e' in [s_lo, s_hi] on [a, b] (F_N' = g'(M) M_N', g'
// decreasing, M nondecreasing; psi' from the activation's derivative
// enclosure), e(u) <= min(e(a) + s_hi (u-a), e(b) - s_lo (b-u)), and the same
// for -e. Its overestimate shrinks like the square of the cell width where
// e' changes sign, unlike the bracketing bound. INFINITY when unavailable.
double second_order_bound(BernsteinEvaluator& ev, const Point& a, const Point& b) {
  double mlo, mhi;
  if (!ev.derivative_bounds(a.u, b.u, mlo, mhi)) return INFINITY;
  const auto& p = ev.problem();
  Ivl m(p.prec), r(p.prec), g(p.prec), fp(p.prec), pp(p.prec), uu(p.prec);
  mpfi_interv_d(m, a.m_lo, b.m_hi);
  activations::set_rational(r, p.rho);
  mpfi_add(g, r, m);
  mpfi_sqr(g, g);
  mpfi_sqr(r, r);
  mpfi_div(g, r, g);  // g'(M) = rho^2 / (rho + M)^2 over the cell
  mpfi_interv_d(fp, mlo, mhi);
  mpfi_mul(fp, fp, g);
  mpfi_interv_d(uu, a.u, b.u);
  p.psi_derivative(pp, uu);
  mpfi_sub(fp, fp, pp);
  const double s_lo = fp.lo(), s_hi = fp.hi(), w = b.u - a.u;
  const double e_up = envelope_max(up(a.f_hi - a.p_lo), s_hi, up(b.f_hi - b.p_lo), s_lo, w);
  const double e_dn = envelope_max(up(a.p_hi - a.f_lo), -s_lo, up(b.p_hi - b.f_lo), -s_hi, w);
  return std::max(e_up, e_dn);
}

// Proven lower bound of |F_N(u) - psi(u)| at a point.
double point_lower(const Point& p) { return std::max(0.0, down(std::max(p.f_lo - p.p_hi, p.p_lo - p.f_hi))); }

// Monotone bracketing bound on [a, b] (DESIGN.md section 6).
double cell_bound(const Point& a, const Point& b) { return up(std::max(b.f_hi - a.p_lo, b.p_hi - a.f_lo)); }

// Nonrigorous double search for the argmax of |F_N - psi|: a grid, then
// local refinement around the best few grid points.
double search_argmax(BernsteinEvaluator& ev) {
  constexpr int kGrid = 512;
  std::vector<double> v(kGrid + 1);
  for (int k = 0; k <= kGrid; ++k) v[k] = std::fabs(ev.error_double(static_cast<double>(k) / kGrid));
  std::vector<int> idx(kGrid + 1);
  for (int k = 0; k <= kGrid; ++k) idx[k] = k;
  std::partial_sort(idx.begin(), idx.begin() + 3, idx.end(), [&](int x, int y) { return v[x] > v[y]; });
  double best_u = static_cast<double>(idx[0]) / kGrid, best_v = v[idx[0]];
  for (int c = 0; c < 3; ++c) {
    double u = static_cast<double>(idx[c]) / kGrid, val = v[idx[c]];
    for (double step = 0.5 / kGrid; step > 1e-12; step *= 0.5) {
      for (double cand : {u - step, u + step}) {
        if (cand <= 0 || cand >= 1) continue;
        const double e = std::fabs(ev.error_double(cand));
        if (e > val) {
          val = e;
          u = cand;
        }
      }
    }
    if (val > best_v) {
      best_v = val;
      best_u = u;
    }
  }
  return best_u;
}

SupResult run_cells(BernsteinEvaluator& ev, std::vector<Point> pts, const SupOptions& opt, bool adaptive) {
  SupResult r;
  std::sort(pts.begin(), pts.end(), [](const Point& x, const Point& y) { return x.u < y.u; });
  r.evaluations = static_cast<std::int64_t>(pts.size());
  std::priority_queue<Cell> cells;
  for (const auto& p : pts) {
    const double l = point_lower(p);
    if (l > r.lower) {
      r.lower = l;
      r.argmax_u = p.u;
    }
  }
  auto target = [&] { return opt.eps ? *opt.eps : r.lower * (1 + opt.rel_tol) + opt.abs_tol; };
  const bool second = opt.second_order && ev.arithmetic() == Arithmetic::DoubleErrorBound;
  auto make_cell = [&](const Point& a, const Point& b) {
    double bound = cell_bound(a, b);
    // Only near the target: far above it the cell is bisected anyway.
    if (second && bound >= target() && bound < 16 * target())
      bound = std::min(bound, second_order_bound(ev, a, b));
    return Cell{a, b, bound};
  };
  for (std::size_t k = 0; k + 1 < pts.size(); ++k) cells.push(make_cell(pts[k], pts[k + 1]));
  auto done = [&](double top) {
    if (opt.eps) return top < *opt.eps || r.lower >= *opt.eps;
    return top <= target();
  };
  while (adaptive && !cells.empty()) {
    const Cell c = cells.top();
    if (done(c.bound)) {
      r.converged = true;
      break;
    }
    const double mid = 0.5 * (c.a.u + c.b.u);
    if (r.evaluations >= opt.max_evals || !(mid > c.a.u && mid < c.b.u)) break;
    cells.pop();
    const Point p = evaluate_point(ev, mid);
    ++r.evaluations;
    const double l = point_lower(p);
    if (l > r.lower) {
      r.lower = l;
      r.argmax_u = p.u;
    }
    cells.push(make_cell(c.a, p));
    cells.push(make_cell(p, c.b));
  }
  if (!adaptive) r.converged = true;
  r.cells = static_cast<std::int64_t>(cells.size());
  r.upper = std::max(r.lower, cells.empty() ? 0.0 : cells.top().bound);
  return r;
}

}  // namespace

SupResult certified_sup(BernsteinEvaluator& ev, const SupOptions& opt) {
  std::vector<Point> pts;
  const int n0 = std::max(1, opt.initial_cells);
  for (int k = 0; k <= n0; ++k) pts.push_back(evaluate_point(ev, static_cast<double>(k) / n0));
  if (opt.seed_with_search) {
    const double u = search_argmax(ev);
    if (u > 0 && u < 1 && std::none_of(pts.begin(), pts.end(), [&](const Point& p) { return p.u == u; }))
      pts.push_back(evaluate_point(ev, u));
  }
  return run_cells(ev, std::move(pts), opt, true);
}

SupResult search_lower_bound(BernsteinEvaluator& ev) {
  SupResult r;
  const double u = search_argmax(ev);
  const Point p = evaluate_point(ev, u);
  r.lower = point_lower(p);
  r.argmax_u = u;
  r.upper = INFINITY;
  r.evaluations = 1;
  return r;
}

SupResult uniform_grid_sup(BernsteinEvaluator& ev, std::int64_t cells) {
  std::vector<Point> pts;
  for (std::int64_t k = 0; k <= cells; ++k)
    pts.push_back(evaluate_point(ev, static_cast<double>(k) / static_cast<double>(cells)));
  return run_cells(ev, std::move(pts), SupOptions{}, false);
}

// ---------------------------------------------------------------- L_h

LipschitzBound lipschitz_h(const BernsteinProblem& p, double rel_tol, int max_evals) {
  const mpfr_prec_t prec = p.prec;
  Ivl rho(prec), width(prec);
  activations::set_rational(rho, p.rho);
  activations::set_rational(width, p.imax - p.imin);
  // f(X) = (Imax - Imin) rho^2 phi'(X) / (rho - phi(X))^2.
  auto f = [&](mpfi_ptr out, mpfi_srcptr x) {
    Ivl d(prec), v(prec);
    activations::derivative_interval(p.act, d, x);
    activations::eval_interval(p.act, v, x);
    mpfi_sub(v, rho, v);
    mpfi_sqr(v, v);
    mpfi_mul(d, d, width);
    mpfi_div(d, d, v);
    mpfi_sqr(v, rho);
    mpfi_mul(out, d, v);
  };
  struct Box {
    std::shared_ptr<Ivl> x;
    double upper;
    bool operator<(const Box& o) const { return upper < o.upper; }
  };
  LipschitzBound r;
  auto point_value = [&](mpfr_srcptr at) {
    Ivl x(prec), v(prec);
    mpfi_set_fr(x, at);
    f(v, x);
    if (v.lo() > r.lower) {
      r.lower = v.lo();
      r.argmax_I = mpfr_get_d(at, MPFR_RNDN);
    }
  };
  auto make_box = [&](mpfr_srcptr a, mpfr_srcptr b) {
    auto x = std::make_shared<Ivl>(prec);
    mpfi_interv_fr(*x, a, b);
    Ivl v(prec);
    f(v, *x);
    return Box{x, v.hi()};
  };
  Ivl lo(prec), hi(prec);
  activations::set_rational(lo, p.imin);
  activations::set_rational(hi, p.imax);
  std::priority_queue<Box> q;
  q.push(make_box(&lo.get()->left, &hi.get()->right));
  point_value(&lo.get()->left);
  point_value(&hi.get()->right);
  mpfr_t mid;
  mpfr_init2(mid, prec);
  int evals = 0;
  while (!q.empty() && evals < max_evals) {
    const Box b = q.top();
    if (b.upper <= r.lower * (1 + rel_tol)) break;
    q.pop();
    mpfi_mid(mid, *b.x);
    point_value(mid);
    q.push(make_box(&b.x->get()->left, mid));
    q.push(make_box(mid, &b.x->get()->right));
    evals += 3;
  }
  mpfr_clear(mid);
  r.upper = std::max(r.lower, q.empty() ? 0.0 : q.top().upper);
  return r;
}

}  // namespace ctmc::proofs_check
