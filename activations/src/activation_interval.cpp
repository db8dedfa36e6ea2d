#include "ctmc/activations/activation_interval.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ctmc/core/errors.hpp"
#include "ctmc/core/quote.hpp"
#include "ctmc/solvers/exact.hpp"

namespace ctmc::activations {

namespace {

// Applies a nondecreasing function given on MPFR endpoints (exact operations
// only: max/min with representable constants).
void relu_like(mpfi_ptr out, mpfi_srcptr x, const double* cap) {
  mpfr_t l, r;
  mpfr_init2(l, mpfi_get_prec(x));
  mpfr_init2(r, mpfi_get_prec(x));
  mpfi_get_left(l, x);
  mpfi_get_right(r, x);
  // max(0, .) and min(K, .) are exact on floating-point numbers.
  if (mpfr_sgn(l) < 0) mpfr_set_zero(l, 1);
  if (mpfr_sgn(r) < 0) mpfr_set_zero(r, 1);
  if (cap != nullptr) {
    if (mpfr_cmp_d(l, *cap) > 0) mpfr_set_d(l, *cap, MPFR_RNDN);
    if (mpfr_cmp_d(r, *cap) > 0) mpfr_set_d(r, *cap, MPFR_RNDN);
  }
  mpfi_interv_fr(out, l, r);
  mpfr_clear(l);
  mpfr_clear(r);
}

// 1 / (1 + e^-y), y an interval: y occurs once, so the enclosure is tight.
void sigmoid_of(mpfi_ptr out, mpfi_srcptr y) {
  mpfi_neg(out, y);
  mpfi_exp(out, out);
  mpfi_add_ui(out, out, 1);
  mpfi_ui_div(out, 1, out);
}

// 1 / (k cosh^2(y / d)) evaluated on |y|: cosh is increasing on [0, inf), so
// evaluating on |y| keeps one occurrence of the variable.
void inverse_cosh_squared(mpfi_ptr out, mpfi_srcptr y, unsigned long k, unsigned long halve) {
  mpfi_abs(out, y);
  if (halve) mpfi_div_2ui(out, out, halve);
  mpfi_cosh(out, out);
  mpfi_sqr(out, out);
  mpfi_mul_ui(out, out, k);
  mpfi_ui_div(out, 1, out);
}

// Does X meet the piece [a, b]? For a proper interval X only pieces whose
// interior X meets count (a piece touching X at one end does not shape phi on
// X); a point X at a knot meets both neighbouring pieces (one-sided slopes).
bool meets(mpfi_srcptr x, double a, double b) {
  if (mpfr_equal_p(&x->left, &x->right))
    return mpfr_cmp_d(&x->left, b) <= 0 && mpfr_cmp_d(&x->right, a) >= 0;
  return mpfr_cmp_d(&x->left, b) < 0 && mpfr_cmp_d(&x->right, a) > 0;
}

void table_hull(const Activation& a, mpfi_ptr out, mpfi_srcptr x, bool derivative) {
  const mpfr_prec_t p = mpfi_get_prec(out);
  Ivl acc(p), piece(p), t(p);
  bool any = false;
  auto add = [&](mpfi_srcptr v) {
    if (!any) {
      mpfi_set(acc, v);
      any = true;
    } else {
      mpfi_put(acc, v);
    }
  };
  const auto& xs = a.xs;
  const auto& ys = a.ys;
  if (mpfr_cmp_d(&x->left, xs.front()) < 0) {  // part of X left of the table: constant
    mpfi_set_d(piece, derivative ? 0.0 : ys.front());
    add(piece);
  }
  if (mpfr_cmp_d(&x->right, xs.back()) > 0) {
    mpfi_set_d(piece, derivative ? 0.0 : ys.back());
    add(piece);
  }
  for (std::size_t j = 0; j + 1 < xs.size(); ++j) {
    if (!meets(x, xs[j], xs[j + 1])) continue;
    // slope = (y_{j+1} - y_j) / (x_{j+1} - x_j), enclosed.
    mpfi_set_d(piece, ys[j + 1]);
    mpfi_sub_d(piece, piece, ys[j]);
    mpfi_set_d(t, xs[j + 1]);
    mpfi_sub_d(t, t, xs[j]);
    mpfi_div(piece, piece, t);
    if (!derivative) {
      // y_j + (X n [x_j, x_{j+1}] - x_j) * slope
      mpfi_interv_d(t, xs[j], xs[j + 1]);
      mpfi_intersect(t, t, x);
      mpfi_sub_d(t, t, xs[j]);
      mpfi_mul(piece, piece, t);
      mpfi_add_d(piece, piece, ys[j]);
    }
    add(piece);
  }
  mpfi_set(out, acc);
}

}  // namespace

double Ivl::lo() const { return mpfr_get_d(&v_->left, MPFR_RNDD); }
double Ivl::hi() const { return mpfr_get_d(&v_->right, MPFR_RNDU); }
double Ivl::mid() const {
  mpfr_t m;
  mpfr_init2(m, mpfi_get_prec(v_));
  mpfi_mid(m, v_);
  const double d = mpfr_get_d(m, MPFR_RNDN);
  mpfr_clear(m);
  return d;
}

void set_rational(mpfi_ptr out, const solvers::Rational& q) {
  mpfi_set_q(out, q.backend().data());
}

void eval_interval(const Activation& a, mpfi_ptr out, mpfi_srcptr x) {
  const mpfr_prec_t p = mpfi_get_prec(out);
  Ivl y(p);
  switch (a.kind) {
    case ActivationKind::Sigmoid:
      sigmoid_of(out, x);
      return;
    case ActivationKind::ShiftedSigmoid:
      mpfi_sub_d(y, x, a.param);
      sigmoid_of(out, y);
      return;
    case ActivationKind::Relu:
      relu_like(out, x, nullptr);
      return;
    case ActivationKind::ClipRelu:
      relu_like(out, x, &a.param);
      return;
    case ActivationKind::Softplus:
      // log1p(e^x): MPFR's exponent range holds e^x for any |x| we meet.
      mpfi_exp(y, x);
      mpfi_log1p(out, y);
      return;
    case ActivationKind::TanhPlusOne:
      mpfi_tanh(out, x);
      mpfi_add_ui(out, out, 1);
      return;
    case ActivationKind::Tabulated:
      table_hull(a, out, x, false);
      return;
  }
}

void derivative_interval(const Activation& a, mpfi_ptr out, mpfi_srcptr x) {
  const mpfr_prec_t p = mpfi_get_prec(out);
  Ivl y(p);
  switch (a.kind) {
    case ActivationKind::Sigmoid:
      // sigma' = sigma (1 - sigma) = 1 / (4 cosh^2(x/2)).
      inverse_cosh_squared(out, x, 4, 1);
      return;
    case ActivationKind::ShiftedSigmoid:
      mpfi_sub_d(y, x, a.param);
      inverse_cosh_squared(out, y, 4, 1);
      return;
    case ActivationKind::Softplus:
      sigmoid_of(out, x);
      return;
    case ActivationKind::TanhPlusOne:
      inverse_cosh_squared(out, x, 1, 0);  // tanh' = 1/cosh^2
      return;
    case ActivationKind::Relu:
    case ActivationKind::ClipRelu: {
      // Derivative 1 on (0, K), 0 outside; at a kink both one-sided values.
      const double kink_hi = a.kind == ActivationKind::Relu ? INFINITY : a.param;
      const bool has_zero = mpfr_cmp_d(&x->left, 0.0) <= 0 || mpfr_cmp_d(&x->right, kink_hi) >= 0;
      const bool has_one = mpfr_cmp_d(&x->right, 0.0) >= 0 && mpfr_cmp_d(&x->left, kink_hi) <= 0;
      mpfi_interv_si(out, has_zero ? 0 : 1, has_one ? 1 : 0);
      return;
    }
    case ActivationKind::Tabulated:
      table_hull(a, out, x, true);
      return;
  }
}

solvers::Interval eval_interval(const Activation& a, const solvers::Interval& x) {
  solvers::Interval r = x;
  eval_interval(a, r.backend().data(), x.backend().data());
  return r;
}

solvers::Interval derivative_interval(const Activation& a, const solvers::Interval& x) {
  solvers::Interval r = x;
  derivative_interval(a, r.backend().data(), x.backend().data());
  return r;
}

bool is_smooth(const Activation& a) {
  return a.kind == ActivationKind::Sigmoid || a.kind == ActivationKind::ShiftedSigmoid ||
         a.kind == ActivationKind::Softplus || a.kind == ActivationKind::TanhPlusOne;
}

std::optional<solvers::Mpfr> second_derivative(const Activation& a, const solvers::Mpfr& x) {
  using solvers::Mpfr;
  const Mpfr one(1), two(2);
  switch (a.kind) {
    case ActivationKind::Sigmoid:
    case ActivationKind::ShiftedSigmoid: {
      const Mpfr s = a.eval(x);  // s'' = s (1-s) (1-2s)
      return s * (one - s) * (one - two * s);
    }
    case ActivationKind::Softplus: {
      const Mpfr s = one / (one + exp(-x));  // softplus'' = s (1-s)
      return s * (one - s);
    }
    case ActivationKind::TanhPlusOne: {
      const Mpfr t = tanh(x);  // (tanh)'' = -2 t (1 - t^2)
      return -two * t * (one - t * t);
    }
    default:
      return std::nullopt;
  }
}

std::optional<std::string> admissibility_violation(const Activation& a, const solvers::Rational& lo,
                                                   const solvers::Rational& hi, mpfr_prec_t prec) {
  if (auto why = table_coverage_violation(a, solvers::to_double(lo), solvers::to_double(hi))) return why;
  Ivl x(prec), lo_iv(prec), hi_iv(prec), v(prec);
  set_rational(lo_iv, lo);
  set_rational(hi_iv, hi);
  mpfi_union(x, lo_iv, hi_iv);
  const std::string where = fmt::format("[{}, {}]", solvers::exact_text(lo), solvers::exact_text(hi));
  derivative_interval(a, v, x);
  if (mpfr_sgn(&v.get()->left) < 0)
    return fmt::format("{} is not nondecreasing on {} (slope down to {:.6g})", quote_excerpt(a.name), where, v.lo());
  eval_interval(a, v, lo_iv);
  if (mpfr_sgn(&v.get()->left) < 0)
    return fmt::format("{} is negative on {} (phi({}) = {:.6g})", quote_excerpt(a.name), where,
                       solvers::exact_text(lo), v.mid());
  return std::nullopt;
}

}  // namespace ctmc::activations
