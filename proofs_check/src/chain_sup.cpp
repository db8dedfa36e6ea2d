#include "ctmc/proofs_check/chain_sup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <utility>

#include "ctmc/activations/activation_interval.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/tree_theorem.hpp"
#include "outward.hpp"

namespace ctmc::proofs_check {

namespace {

using outward::I;

// Rates are clamped outwards into {0} u [kTiny, kHuge]: a product of up to
// eight of them (a tree of n - 1 <= 6 edges times a spike rate) then stays a
// normal double, as the a-priori error bound requires. Clamping a lower end
// down to 0 or an upper end up to kTiny only widens the enclosure (the tree
// sums are monotone); an upper end above kHuge is an error.
constexpr double kTiny = 1e-35;
constexpr double kHuge = 1e35;

// The spanning in-trees of the chain's transition graph, per root, as lists
// of n - 1 indices into `pairs` (parallel transitions i -> j share a pair:
// their rates add).
struct Trees {
  std::size_t n = 0;
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  std::vector<std::vector<std::size_t>> pair_transitions;
  std::vector<std::vector<std::uint16_t>> edges;  // per root, flat
  std::size_t count = 0;
};

Trees enumerate_trees(const solvers::Model& m) {
  Trees t;
  t.n = m.size();
  std::map<std::pair<std::size_t, std::size_t>, std::size_t> index;
  for (std::size_t k = 0; k < m.transitions.size(); ++k) {
    const auto key = std::make_pair(m.transitions[k].from, m.transitions[k].to);
    auto [it, fresh] = index.emplace(key, t.pairs.size());
    if (fresh) {
      t.pairs.push_back(key);
      t.pair_transitions.emplace_back();
    }
    t.pair_transitions[it->second].push_back(k);
  }
  std::vector<std::vector<std::size_t>> out(t.n);
  for (std::size_t e = 0; e < t.pairs.size(); ++e) out[t.pairs[e].first].push_back(e);
  t.edges.resize(t.n);
  std::vector<std::size_t> choice(t.n);
  for (std::size_t root = 0; root < t.n; ++root) {
    // Every other state picks one outgoing pair; a full assignment is a tree
    // into root when following the choices from every state reaches root.
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < t.n; ++i)
      if (i != root) order.push_back(i);
    std::vector<std::size_t> pos(order.size(), 0);
    bool empty = false;
    for (auto i : order) empty = empty || out[i].empty();
    if (empty) continue;
    while (true) {
      for (std::size_t k = 0; k < order.size(); ++k) choice[order[k]] = out[order[k]][pos[k]];
      bool tree = true;
      for (auto i : order) {
        std::size_t v = i, steps = 0;
        while (v != root && steps <= t.n) {
          v = t.pairs[choice[v]].second;
          ++steps;
        }
        if (v != root) {
          tree = false;
          break;
        }
      }
      if (tree) {
        for (auto i : order) t.edges[root].push_back(static_cast<std::uint16_t>(choice[i]));
        ++t.count;
      }
      std::size_t k = 0;
      while (k < order.size() && ++pos[k] == out[order[k]].size()) pos[k++] = 0;
      if (k == order.size()) break;
    }
  }
  return t;
}

// x (1 + g) rounded up; an exact 0 (a sum of empty or zero products) stays 0.
double grow(double x, double g) { return x == 0 ? 0.0 : outward::up(x * (1 + g)); }

// Enclosures of the error e(H) = F(H) - alpha phi(H) at points and over
// cells. Over a cell X with midpoint m the bound is the intersection of
//   the monotone one    [N(r_lo)/D(r_hi), N(r_hi)/D(r_lo)] - alpha phi(X)
//   and the centred one e(m) + e'(X) (X - m),
// the latter with e'(X) = (N' D - N D')/D^2 - alpha phi'(X), where N', D'
// (dN/dH, dD/dH) are enclosed from the tree sums: the derivative of a tree's
// product is sum_j q_j' prod_{k != j} q_k, q_j' the slope of the pair's
// rate (s, 0, or [0, s] where the rate's affine part changes sign on X). The
// monotone bound converges like the cell width, the centred one like its
// square, which is what makes 1% reachable when the sup error is small
// against the flux.
class ErrorEnclosure {
 public:
  ErrorEnclosure(const solvers::Model& m, const activations::Activation& act, const solvers::Rational& alpha,
                 unsigned precision, std::string source)
      : m_(m), act_(act), trees_(enumerate_trees(m)), prec_(precision), source_(std::move(source)),
        alpha_(precision) {
    activations::set_rational(alpha_, alpha);
    for (const auto& tr : m.transitions) {
      p_.push_back(outward::enclose(tr.offset.value));
      s_.push_back(outward::enclose(tr.slope.value));
      if (tr.spike) spikes_.push_back(&tr - m.transitions.data());
    }
    // Longest chain of roundings: the sums of parallel rates, n - 1
    // products per tree term, the sums over every tree and every spike
    // transition (Higham's gamma_K for nonnegative terms; for the signed
    // derivative sums the same bound relative to the sum of |terms|).
    const double k = double(2 * trees_.n + trees_.count * trees_.n + spikes_.size() + m.transitions.size() + 2);
    const double u = std::ldexp(1.0, -53);
    gamma2_ = 2 * k * u / (1 - k * u);
    const std::size_t nt = m.transitions.size(), np = trees_.pairs.size();
    rlo_.resize(nt);
    rhi_.resize(nt);
    dr_.resize(nt);
    qlo_.resize(np);
    qhi_.resize(np);
    dq_.resize(np);
    wlo_.resize(trees_.n);
    whi_.resize(trees_.n);
    dw_.resize(trees_.n);
  }

  // e at the point x.
  I point(double x) {
    rates(x, x, false);
    const I F = flux_monotone(x);
    return F - target(x, x);
  }

  // e over [x0, x1], given e at the midpoint m.
  I cell(double x0, double x1, double m, I e_mid, bool centred) {
    rates(x0, x1, true);
    const I F = flux_monotone(m);
    const I e_mono = F - target(x0, x1);
    if (!centred) return e_mono;
    const auto de = derivative(x0, x1);
    if (!de) return e_mono;
    const I e_c = e_mid + *de * I{outward::down(x0 - m), outward::up(x1 - m)};
    const I both{std::max(e_mono.lo, e_c.lo), std::min(e_mono.hi, e_c.hi)};
    return both.lo <= both.hi ? both : e_mono;
  }

  // alpha phi over [x0, x1].
  I target(double x0, double x1) {
    activations::Ivl x(prec_), y(prec_);
    mpfi_interv_d(x, x0, x1);
    activations::eval_interval(act_, y, x);
    mpfi_mul(y, y, alpha_);
    return outward::enclose(y);
  }

 private:
  // Rate ranges over [x0, x1] (clamped into {0} u [kTiny, kHuge]) and, if
  // slopes, their derivative enclosures.
  void rates(double x0, double x1, bool slopes) {
    for (std::size_t t = 0; t < p_.size(); ++t) {
      const I v0 = p_[t] + s_[t] * I::point(x0), v1 = p_[t] + s_[t] * I::point(x1);
      const I v = outward::hull(v0, v1);
      double lo = std::max(0.0, v.lo), hi = std::max(0.0, v.hi);
      if (hi > kHuge)
        throw InputError(fmt::format("{}: rate of transition {} -> {} exceeds {:g} near H = {:.17g}", source_,
                                     m_.states[m_.transitions[t].from], m_.states[m_.transitions[t].to], kHuge,
                                     x0));
      if (lo < kTiny) lo = 0;
      if (hi > 0 && hi < kTiny) hi = kTiny;
      rlo_[t] = lo;
      rhi_[t] = hi;
      if (slopes) dr_[t] = v.lo > 0 ? s_[t] : (v.hi <= 0 ? I{0, 0} : outward::hull(I{0, 0}, s_[t]));
    }
    for (std::size_t e = 0; e < qlo_.size(); ++e) {
      double lo = 0, hi = 0;
      I d{0, 0};
      for (auto t : trees_.pair_transitions[e]) {
        lo += rlo_[t];
        hi += rhi_[t];
        if (slopes) d = d + dr_[t];
      }
      qlo_[e] = lo;
      qhi_[e] = hi;
      dq_[e] = d;
    }
  }

  // Tree sums w_i at the rates' lower and upper ends, rigorous (stored in
  // wlo_, whi_), and F's monotone enclosure.
  I flux_monotone(double at) {
    const std::size_t len = trees_.n - 1;
    for (std::size_t root = 0; root < trees_.n; ++root) {
      const auto& e = trees_.edges[root];
      double lo = 0, hi = 0;
      for (std::size_t k = 0; k < e.size(); k += len) {
        double pl = 1, ph = 1;
        for (std::size_t j = 0; j < len; ++j) {
          pl *= qlo_[e[k + j]];
          ph *= qhi_[e[k + j]];
        }
        lo += pl;
        hi += ph;
      }
      wlo_[root] = std::max(0.0, outward::down(lo * (1 - gamma2_)));
      whi_[root] = grow(hi, gamma2_);
    }
    double n_lo = 0, d_lo = 0, n_hi = 0, d_hi = 0;
    for (std::size_t i = 0; i < trees_.n; ++i) {
      d_lo += wlo_[i];
      d_hi += whi_[i];
    }
    for (auto t : spikes_) {
      n_lo += rlo_[t] * wlo_[m_.transitions[t].from];
      n_hi += rhi_[t] * whi_[m_.transitions[t].from];
    }
    if (d_hi == 0)  // no spanning tree at the rates' upper ends: none on the cell
      throw InputError(fmt::format("{}: the chain has no unique closed class at H = {:.17g}", source_, at));
    // The w's are already rigorous; the few sums and products here get their
    // own (tiny) a-priori margin.
    const double g = 4 * double(trees_.n + spikes_.size() + 2) * std::ldexp(1.0, -53);
    n_lo = std::max(0.0, outward::down(n_lo * (1 - g)));
    d_lo = std::max(0.0, outward::down(d_lo * (1 - g)));
    n_hi = grow(n_hi, g);
    d_hi = grow(d_hi, g);
    return {outward::div_dn(n_lo, d_hi), d_lo > 0 ? outward::div_up(n_hi, d_lo) : INFINITY};
  }

  // e'(X) after rates(.., true) and flux_monotone; nullopt when it is not
  // finite (a rate 0 on the lower ends, or overflow).
  std::optional<I> derivative(double x0, double x1) {
    const std::size_t len = trees_.n - 1;
    std::vector<double>& pre_l = pre_l_;
    pre_l.assign(2 * (len + 1), 1.0);
    for (std::size_t root = 0; root < trees_.n; ++root) {
      const auto& e = trees_.edges[root];
      double s_lo = 0, a_lo = 0, s_hi = 0, a_hi = 0;
      for (std::size_t k = 0; k < e.size(); k += len) {
        // prefix products of the lower and upper ends; suffixes on the fly.
        double* pl = pre_l.data();
        double* ph = pre_l.data() + len + 1;
        for (std::size_t j = 0; j < len; ++j) {
          pl[j + 1] = pl[j] * qlo_[e[k + j]];
          ph[j + 1] = ph[j] * qhi_[e[k + j]];
        }
        double sl = 1, sh = 1;
        for (std::size_t j = len; j-- > 0;) {
          const I d = dq_[e[k + j]];
          const double others_lo = pl[j] * sl, others_hi = ph[j] * sh;
          const double up_term = d.hi >= 0 ? d.hi * others_hi : d.hi * others_lo;
          const double lo_term = d.lo >= 0 ? d.lo * others_lo : d.lo * others_hi;
          s_hi += up_term;
          a_hi += std::fabs(up_term);
          s_lo += lo_term;
          a_lo += std::fabs(lo_term);
          sl *= qlo_[e[k + j]];
          sh *= qhi_[e[k + j]];
        }
      }
      constexpr double kUnderflow = 1e-290;  // covers subnormal products of tiny slopes
      dw_[root] = {outward::down(s_lo - gamma2_ * a_lo * 2 - kUnderflow),
                   outward::up(s_hi + gamma2_ * a_hi * 2 + kUnderflow)};
      if (!std::isfinite(dw_[root].lo) || !std::isfinite(dw_[root].hi)) return std::nullopt;
    }
    I N{0, 0}, dN{0, 0}, D{0, 0}, dD{0, 0};
    for (std::size_t i = 0; i < trees_.n; ++i) {
      const I w{wlo_[i], whi_[i]};
      D = D + w;
      dD = dD + dw_[i];
    }
    for (auto t : spikes_) {
      const std::size_t i = m_.transitions[t].from;
      const I r{rlo_[t], rhi_[t]}, w{wlo_[i], whi_[i]};
      N = N + r * w;
      dN = dN + dr_[t] * w + r * dw_[i];
    }
    if (!(D.lo > 0)) return std::nullopt;
    const I dF = (dN * D - N * dD) / (D * D);
    activations::Ivl x(prec_), y(prec_);
    mpfi_interv_d(x, x0, x1);
    activations::derivative_interval(act_, y, x);
    mpfi_mul(y, y, alpha_);
    const I de = dF - outward::enclose(y);
    if (!std::isfinite(de.lo) || !std::isfinite(de.hi)) return std::nullopt;
    return de;
  }

  const solvers::Model& m_;
  const activations::Activation& act_;
  Trees trees_;
  unsigned prec_;
  std::string source_;
  activations::Ivl alpha_;
  std::vector<I> p_, s_;
  std::vector<std::size_t> spikes_;
  double gamma2_ = 0;
  std::vector<double> rlo_, rhi_, qlo_, qhi_, wlo_, whi_, pre_l_;
  std::vector<I> dr_, dq_, dw_;
};

struct Cell {
  double x0, x1, upper;
  bool operator<(const Cell& o) const { return upper < o.upper; }  // max-heap on upper
};

}  // namespace

ChainSupResult certified_chain_sup(const solvers::Model& model, const activations::Activation& act,
                                   const solvers::Rational& alpha, const solvers::Rational& lo,
                                   const solvers::Rational& hi, const ChainSupOptions& opt,
                                   const std::string& source) {
  if (!(lo < hi)) throw InputError(fmt::format("{}: empty domain for the certified sup error", source));
  if (model.size() > solvers::kTreeTheoremMaxStates)
    throw InputError(fmt::format("{}: the certified sup error needs at most {} states (tree-theorem enclosure); "
                                 "this chain has {}",
                                 source, solvers::kTreeTheoremMaxStates, model.size()));
  const I dom_lo = outward::enclose(lo), dom_hi = outward::enclose(hi);
  if (auto why = activations::table_coverage_violation(act, dom_lo.lo, dom_hi.hi)) throw InputError("activation", *why);
  ErrorEnclosure enc(model, act, alpha, opt.precision, source);

  // Split points: a uniform grid over a double cover of [lo, hi], every kink
  // of a rate (where p + s H = 0) and of the activation.
  const double a = dom_lo.lo, b = dom_hi.hi;
  std::vector<double> xs;
  for (std::size_t k = 0; k <= opt.initial_cells; ++k)
    xs.push_back(k == opt.initial_cells ? b : a + (b - a) * double(k) / double(opt.initial_cells));
  for (const auto& t : model.transitions) {
    if (t.slope.value == 0) continue;
    const double x = solvers::to_double(solvers::Rational(-t.offset.value / t.slope.value));
    if (x > a && x < b) xs.push_back(x);
  }
  std::vector<double> act_kinks;
  if (act.kind == activations::ActivationKind::Relu) act_kinks = {0.0};
  if (act.kind == activations::ActivationKind::ClipRelu) act_kinks = {0.0, act.param};
  for (double x : act_kinks)
    if (x > a && x < b) xs.push_back(x);
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());

  ChainSupResult r;
  double scale = 0;
  // e at x; a point inside [lo, hi] also raises the proven lower bound.
  auto point = [&](double x) {
    const I e = enc.point(x);
    ++r.evaluations;
    const solvers::Rational q(x);
    if (q >= lo && q <= hi && (e.mig() > r.lower || r.evaluations == 1)) {
      r.lower = e.mig();
      r.argmax = x;
    }
    return e;
  };
  for (double x : xs) {
    point(x);
    scale = std::max(scale, enc.target(x, x).mag());
  }
  const double abs_tol = opt.abs_tol_scale * scale;

  std::priority_queue<Cell> cells;
  auto push = [&](double x0, double x1) {
    const double m = 0.5 * (x0 + x1);
    cells.push({x0, x1, enc.cell(x0, x1, m, point(m), opt.centred).mag()});
    ++r.cells;
  };
  for (std::size_t k = 0; k + 1 < xs.size(); ++k) push(xs[k], xs[k + 1]);

  double stuck = 0;  // cells at double resolution that could not be split
  while (!cells.empty()) {
    const Cell c = cells.top();
    const double enough = std::max(r.lower * (1 + opt.rel_tol) + abs_tol, opt.stop_below);
    if (c.upper <= enough) {
      r.converged = stuck <= enough;
      break;
    }
    if (r.cells >= opt.max_cells) break;
    cells.pop();
    const double mid = 0.5 * (c.x0 + c.x1);
    if (!(mid > c.x0 && mid < c.x1)) {
      stuck = std::max(stuck, c.upper);
      continue;
    }
    push(c.x0, mid);
    push(mid, c.x1);
  }
  r.upper = std::max({cells.empty() ? 0.0 : cells.top().upper, stuck, r.lower});
  return r;
}

}  // namespace ctmc::proofs_check
