// Target activation functions phi (paper section 4; DESIGN.md section 6).
//
// Names accepted by parse_activation (and every --activation option):
//   sigmoid            1 / (1 + e^-x)
//   relu               max(0, x)
//   softplus           log(1 + e^x)
//   cliprelu_K         min(max(0, x), K), K in [1e-6, 1e6] ("cliprelu_4", "cliprelu_2.5")
//   sigmoid_shift_S    sigmoid(x - S): the sigmoid shifted right by S (0 or
//                      |S| in [1e-6, 1e6]); K and S are plain decimals
//                      (no spaces, hex, inf or nan)
//   tanh1              tanh(x) + 1
//   table:FILE         piecewise-linear through a CSV of (x, phi(x)) rows,
//                      x strictly increasing; eval() holds the end values
//                      beyond the ends, but fit and bernstein refuse a domain
//                      reaching beyond them (table_coverage_violation). Each
//                      row: exactly two comma-separated plain decimals (finite);
//                      blank and '#' lines skipped; a leading UTF-8 BOM is
//                      ignored; the first row is a header only if it has no digit
// eval<T> works for double and float (the deterministic functions of
// solvers/det_math.hpp: the same bits on every machine), ceres::Jet and Mpfr
// (their own exp, log, tanh, found by argument-dependent lookup).
#pragma once
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "ctmc/solvers/det_math.hpp"

namespace ctmc::activations {

enum class ActivationKind { Sigmoid, Relu, Softplus, ClipRelu, ShiftedSigmoid, TanhPlusOne, Tabulated };

struct Activation {
  ActivationKind kind = ActivationKind::Sigmoid;
  double param = 0;  // K for cliprelu, S for sigmoid_shift
  std::string name;  // canonical name as parsed
  std::vector<double> xs, ys;  // tabulated knots

  template <class T>
  T eval(const T& x) const {
    using detmath::exp;
    using detmath::log;
    using detmath::tanh;
    switch (kind) {
      case ActivationKind::Sigmoid:
        return T(1) / (T(1) + exp(-x));
      case ActivationKind::ShiftedSigmoid:
        return T(1) / (T(1) + exp(T(param) - x));
      case ActivationKind::Relu:
        return x > T(0) ? x : T(0);
      case ActivationKind::Softplus:
        // log(1 + e^x) = max(x, 0) + log(1 + e^-|x|), stable for large |x|.
        return x > T(0) ? x + log(T(1) + exp(-x)) : log(T(1) + exp(x));
      case ActivationKind::ClipRelu:
        return x > T(param) ? T(param) : (x > T(0) ? x : T(0));
      case ActivationKind::TanhPlusOne:
        return tanh(x) + T(1);
      case ActivationKind::Tabulated:
        return eval_table(x);
    }
    return T(0);
  }

 private:
  template <class T>
  T eval_table(const T& x) const {
    if (!(x > T(xs.front()))) return T(ys.front());
    if (!(x < T(xs.back()))) return T(ys.back());
    std::size_t lo = 0, hi = xs.size() - 1;
    while (hi - lo > 1) {
      std::size_t mid = (lo + hi) / 2;
      (x < T(xs[mid]) ? hi : lo) = mid;
    }
    // Rows at +-1e308 (any knots whose difference overflows a double) are
    // interpolated on the values halved: exact in binary floating point but
    // for subnormals, whose lost half-ulp is below 2^-1075, nothing beside a
    // difference over 1.7e308. Unscaled, x1 - x0 = inf made t = 0 and the
    // table 0 everywhere between -1e308 and 1e308.
    const bool wide_x = !std::isfinite(xs[hi] - xs[lo]);
    const double sx = wide_x ? 0.5 : 1.0;
    const T t = (x * T(sx) - T(xs[lo] * sx)) / T(xs[hi] * sx - xs[lo] * sx);
    if (std::isfinite(ys[hi] - ys[lo])) return T(ys[lo]) + t * T(ys[hi] - ys[lo]);
    // y0 + t (y1 - y0) = 2 (y0/2 + t (y1/2 - y0/2)), the halves' difference finite.
    return T(2) * (T(ys[lo] * 0.5) + t * T(ys[hi] * 0.5 - ys[lo] * 0.5));
  }
};

// Throws ctmc::InputError ("activation: unknown activation 'foo'", or
// naming the table file and row) for anything it cannot parse; `what` names
// where the name came from (e.g. "activation" of a manifest layer).
Activation parse_activation(const std::string& name, const std::string& what = "activation");

// A table:FILE target is only known between its first and last x (beyond
// them eval() holds the end values): fitting or checking it on a domain
// [lo, hi] that reaches further would silently use that constant extension.
// Returns what is wrong, naming the table and both ranges (callers throw it
// as InputError("activation", ...)), or nothing (also for every other kind).
std::optional<std::string> table_coverage_violation(const Activation& a, double lo, double hi);

// Names of the built-in activations, for --help texts.
std::string activation_names_help();

}  // namespace ctmc::activations
