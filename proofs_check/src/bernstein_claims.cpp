#include "ctmc/proofs_check/bernstein_claims.hpp"

#include <fmt/format.h>
#include <gmp.h>

#include <algorithm>
#include <cmath>

#include "bernstein_binomial.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/solvers/polynomial.hpp"
#include "ctmc/solvers/stationary.hpp"

namespace ctmc::proofs_check {

using solvers::Polynomial;

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Proved: return "Proved";
    case Verdict::Refuted: return "Refuted";
    case Verdict::Unknown: return "Unknown";
  }
  return "Unknown";
}

nlohmann::ordered_json to_json(const Claim& c) {
  return {{"id", c.id}, {"statement", c.statement}, {"verdict", verdict_name(c.verdict)},
          {"decided_by", c.decided_by}};
}

namespace {

double down(double x) { return std::nextafter(x, -INFINITY); }
double up(double x) { return std::nextafter(x, INFINITY); }

// A rational function num/den of polynomials; zero iff num is the zero
// polynomial (den is a product of factors that are nonzero for 0 < u < 1,
// 0 <= i <= N).
struct Frac {
  Polynomial num, den{1};
};
Frac operator+(const Frac& a, const Frac& b) { return {a.num * b.den + b.num * a.den, a.den * b.den}; }
Frac operator-(const Frac& a, const Frac& b) { return {a.num * b.den - b.num * a.den, a.den * b.den}; }
Frac operator*(const Frac& a, const Frac& b) { return {a.num * b.num, a.den * b.den}; }
Frac poly(const Polynomial& p) { return {p, Polynomial(1)}; }

Polynomial var(const std::string& name) { return Polynomial::variable("bern_" + name, name); }

// Global balance of A_i (inflow - outflow) with i given as a polynomial
// (the symbol i, or 0, or N); has_down/has_up: whether A_{i-1}/A_{i+1} exist.
Frac balance_active(const Polynomial& i, bool has_down, bool has_up) {
  const Polynomial N = var("N"), u = var("u"), g = var("gamma"), rho = var("rho"), c = var("c"), b = var("b");
  const Polynomial k = var("kappa_i");
  const Polynomial one(1);
  // Product form: pi(A_j) = c b_j, b_{i-1} = b_i i(1-u)/((N-i+1)u),
  // b_{i+1} = b_i (N-i)u/((i+1)(1-u)) (ratio lemma); pi(R_i) = pi(A_i) kappa_i / rho.
  const Frac pa{c * b, one};
  const Frac pa_down{c * b * i * (one - u), (N - i + one) * u};
  const Frac pa_up{c * b * (N - i) * u, (i + one) * (one - u)};
  const Frac pr = pa * Frac{k, rho};
  Frac in = pr * poly(rho);
  if (has_down) in = in + pa_down * poly(g * (N - i + one) * u);  // A_{i-1} -> A_i at gamma (N-(i-1)) u
  if (has_up) in = in + pa_up * poly(g * (i + one) * (one - u));  // A_{i+1} -> A_i at gamma (i+1)(1-u)
  const Frac out = pa * poly(g * (N - i) * u + g * i * (one - u) + k);
  return in - out;
}

}  // namespace

Claim claim1_symbolic(std::vector<std::string>* identities) {
  Claim c{"claim1-all-N", "for all N >= 1, i, kappa >= 0: flux of the chain = rho M_N / (rho + M_N)",
          Verdict::Proved, ""};
  std::vector<std::string> done;
  auto fail = [&](const std::string& what) {
    c.verdict = Verdict::Refuted;
    c.decided_by = what;
  };
  // Ratio lemma C(N,i+1)(i+1) = C(N,i)(N-i), in integers.
  mpz_t x, y;
  mpz_inits(x, y, nullptr);
  for (unsigned long n = 1; n <= 300 && c.verdict == Verdict::Proved; ++n)
    for (unsigned long i = 0; i < n; ++i) {
      mpz_bin_uiui(x, n, i + 1);
      mpz_mul_ui(x, x, i + 1);
      mpz_bin_uiui(y, n, i);
      mpz_mul_ui(y, y, n - i);
      if (mpz_cmp(x, y) != 0) {
        fail(fmt::format("ratio lemma fails at N={}, i={}", n, i));
        break;
      }
    }
  mpz_clears(x, y, nullptr);
  done.push_back("C(N,i+1)(i+1) = C(N,i)(N-i) for 0 <= i < N <= 300 (integers)");
  // sum_i b_i(u) = 1 (binomial theorem) as polynomials in u.
  const Polynomial u = var("u"), one(1);
  for (std::uint32_t n = 1; n <= 40 && c.verdict == Verdict::Proved; ++n) {
    Polynomial sum(0);
    mpz_t bin;
    mpz_init(bin);
    for (std::uint32_t i = 0; i <= n; ++i) {
      mpz_bin_uiui(bin, n, i);
      solvers::Integer z;
      mpz_set(z.backend().data(), bin);
      sum += Polynomial(solvers::Rational(z)) * solvers::pow(u, i) * solvers::pow(one - u, n - i);
    }
    mpz_clear(bin);
    if (!(sum - one).is_zero()) fail(fmt::format("sum of b_i(u) != 1 at N={}", n));
  }
  done.push_back("sum_i C(N,i) u^i (1-u)^(N-i) = 1 as polynomials in u, N <= 40");
  // Global balance at A_i (interior, i = 0, i = N) and R_i.
  const Polynomial i = var("i"), N = var("N");
  if (!balance_active(i, true, true).num.is_zero()) fail("balance at interior A_i");
  done.push_back("balance at A_i, 0 < i < N: symbolic in N, i, u, gamma, rho, kappa_i");
  if (!balance_active(Polynomial(0), false, true).num.is_zero()) fail("balance at A_0");
  done.push_back("balance at A_0 (i = 0, no A_{-1})");
  if (!balance_active(N, true, false).num.is_zero()) fail("balance at A_N");
  done.push_back("balance at A_N (i = N, no A_{N+1})");
  {
    const Polynomial cc = var("c"), b = var("b"), k = var("kappa_i"), rho = var("rho");
    const Frac pa{cc * b, one}, pr = Frac{cc * b, one} * Frac{k, rho};
    if (!(pa * poly(k) - pr * poly(rho)).num.is_zero()) fail("balance at R_i");
    done.push_back("balance at R_i: pi(A_i) kappa_i = pi(R_i) rho");
    // Normalization: c sum_j b_j (1 + kappa_j / rho) = c (1 + M/rho) = 1 gives
    // c = rho/(rho+M); flux = sum_j pi(A_j) kappa_j = c M.
    const Polynomial M = var("M");
    const Frac cval{rho, rho + M};
    if (!(cval * Frac{rho + M, rho} - poly(one)).num.is_zero()) fail("normalization");
    if (!(cval * poly(M) - Frac{rho * M, rho + M}).num.is_zero()) fail("flux formula");
    done.push_back("normalization c (1 + M/rho) = 1 and flux c M = rho M / (rho + M)");
  }
  if (c.verdict == Verdict::Proved)
    c.decided_by = "product-form law satisfies every balance equation (exact polynomial identities); "
                   "unique stationary law on the closed class for 0 < u < 1";
  if (identities) *identities = done;
  return c;
}

std::vector<Claim1Point> claim1_numeric(const BernsteinProblem& p, std::int64_t n, const std::vector<Rational>& us,
                                        std::int64_t exact_max_n) {
  const ctmc::PrecisionScope precision(static_cast<unsigned>(p.prec));
  // kappa_i = h(i/N) rounded to the working precision: exact rationals, the
  // same numbers in the generator and in the formula.
  std::vector<Rational> kappa(static_cast<std::size_t>(n + 1));
  Rational kmax(0);
  {
    Ivl uu(p.prec), hv(p.prec);
    mpfr_t mid;
    mpfr_init2(mid, p.prec);
    for (std::int64_t i = 0; i <= n; ++i) {
      mpfi_set_si(uu, static_cast<long>(i));
      mpfi_div_si(uu, uu, static_cast<long>(n));
      p.h(hv, uu);
      mpfi_mid(mid, hv);
      if (mpfr_sgn(mid) < 0) mpfr_set_zero(mid, 1);
      mpfr_get_q(kappa[static_cast<std::size_t>(i)].backend().data(), mid);
      kmax = std::max(kmax, kappa[static_cast<std::size_t>(i)]);
    }
    mpfr_clear(mid);
  }
  const auto model = solvers::bernstein_model(kappa, p.rho, Rational(1), p.imin, p.imax);
  std::vector<Claim1Point> out;
  for (const auto& u : us) {
    const Rational H = p.imin + (p.imax - p.imin) * u;
    Claim1Point pt;
    pt.u = u;
    if (n <= exact_max_n) {
      pt.method = "exact rationals";
      const auto st = solvers::solve_stationary<Rational>(model, H, solvers::Method::Sparse, "bernstein chain");
      const Rational formula = solvers::bernstein_flux<Rational>(kappa, p.rho, u).value();
      pt.flux = solvers::to_double(st.flux);
      pt.verdict = st.flux == formula ? Verdict::Proved : Verdict::Refuted;
      pt.max_rel_gap = st.flux == formula ? 0.0 : std::fabs(solvers::to_double((st.flux - formula) / formula));
    } else {
      pt.method = "MPFI";
      const auto st = solvers::solve_stationary<solvers::Interval>(model, H, solvers::Method::Sparse, "bernstein chain");
      std::vector<Ivl> kiv;
      kiv.reserve(kappa.size());
      for (const auto& k : kappa) {
        kiv.emplace_back(p.prec);
        activations::set_rational(kiv.back(), k);
      }
      Ivl km(p.prec), ui(p.prec), m(p.prec), f(p.prec), r(p.prec), t(p.prec);
      activations::set_rational(km, kmax);
      activations::set_rational(ui, u);
      bernstein_sum(m, n, ui, [&](std::int64_t i) -> mpfi_srcptr { return kiv[static_cast<std::size_t>(i)]; }, km);
      activations::set_rational(r, p.rho);
      mpfi_add(t, r, m);
      mpfi_sqr(f, r);
      mpfi_div(t, f, t);
      mpfi_sub(f, r, t);  // rho - rho^2/(rho + M)
      Ivl g(p.prec);
      mpfi_set(g, st.flux.backend().data());
      pt.flux = f.mid();
      const double lo = std::min(f.lo(), g.lo()), hi = std::max(f.hi(), g.hi());
      pt.max_rel_gap = pt.flux != 0 ? (hi - lo) / std::fabs(pt.flux) : hi - lo;
      const bool disjoint = f.hi() < g.lo() || g.hi() < f.lo();
      pt.verdict = disjoint ? Verdict::Refuted : Verdict::Unknown;
    }
    out.push_back(pt);
  }
  return out;
}

BoundsAtN bounds_at(const BernsteinProblem& p, const LipschitzBound& lh, std::int64_t n, const SupOptions& opt,
                    Arithmetic arith) {
  BoundsAtN b;
  b.n = n;
  BernsteinEvaluator ev(p, n, arith);
  b.sup = certified_sup(ev, opt);
  b.m_n_lo = max_mean_abs_deviation_lower(n);
  b.m_n_hi = max_mean_abs_deviation_upper(n);
  const double sq = std::sqrt(static_cast<double>(n));
  // Directed rounding by one ulp per operation (each op is correctly rounded).
  b.paper_lo = down(down(lh.lower / 2) / up(sq));
  b.paper_hi = up(up(lh.upper / 2) / down(sq));
  b.sharper_lo = down(down(lh.lower / 2) * b.m_n_lo);
  b.sharper_hi = up(up(lh.upper / 2) * b.m_n_hi);
  b.asymptotic = 0.5 * (lh.lower + lh.upper) / (2 * std::sqrt(2 * M_PI * static_cast<double>(n)));
  auto decide = [&](const std::string& id, const std::string& what, double lo, double hi) {
    Claim c{id, fmt::format("sup|F_N - psi| <= {} at N = {}", what, n), Verdict::Unknown, ""};
    if (b.sup.upper <= lo) {
      c.verdict = Verdict::Proved;
      // lo is the lower end of the bound's enclosure: sup <= lo <= bound.
      c.decided_by = fmt::format("certified sup <= {:.6e} <= {:.6e} <= bound", b.sup.upper, lo);
    } else if (b.sup.lower > hi) {
      c.verdict = Verdict::Refuted;
      c.decided_by = fmt::format("point value {:.6e} at u = {:.17g} > {:.6e} >= bound", b.sup.lower,
                                 b.sup.argmax_u, hi);
    } else {
      c.decided_by = fmt::format("sup in [{:.6e}, {:.6e}], bound in [{:.6e}, {:.6e}]", b.sup.lower, b.sup.upper, lo, hi);
    }
    return c;
  };
  b.corollary = decide("corollary", "L_h/(2 sqrt N)", b.paper_lo, b.paper_hi);
  b.sharper = decide("sharper", "(L_h/2) m_N", b.sharper_lo, b.sharper_hi);
  return b;
}

namespace {

enum class Decision { TooSmall, Certified, Undecided };

struct Decided {
  Decision d;
  double lower, upper;
};

Decided decide_n(const BernsteinProblem& p, std::int64_t n, double eps, const EpsSearchOptions& opt) {
  BernsteinEvaluator ev(p, n, opt.arithmetic);
  const SupResult lb = search_lower_bound(ev);
  if (lb.lower >= eps) return {Decision::TooSmall, lb.lower, INFINITY};
  SupOptions so;
  so.eps = eps;
  so.max_evals = opt.certify_max_evals;
  const SupResult r = certified_sup(ev, so);
  if (r.upper < eps) return {Decision::Certified, std::max(lb.lower, r.lower), r.upper};
  if (r.lower >= eps) return {Decision::TooSmall, r.lower, r.upper};
  return {Decision::Undecided, std::max(lb.lower, r.lower), r.upper};
}

// Smallest N with bound(N) < eps, bound nonincreasing in N (binary search).
template <class Bound>
std::int64_t smallest_n_for(Bound&& bound, double eps) {
  std::int64_t hi = 1;
  while (!(bound(hi) < eps)) {
    if (hi > (std::int64_t{1} << 52)) return kNBeyondRange;
    hi *= 2;
  }
  std::int64_t lo = hi / 2;  // bound(lo) >= eps or lo == 0
  if (hi == 1) return 1;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (bound(mid) < eps ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace

EpsSearch smallest_n(const BernsteinProblem& p, const LipschitzBound& lh, double eps, const EpsSearchOptions& opt) {
  if (!(eps > 0)) throw InputError("eps", fmt::format("must be > 0 (got {})", eps));
  EpsSearch s;
  s.eps = eps;
  {
    // Kept in double until it is known to fit: a cast of (L_h / (2 eps))^2
    // beyond 2^63 is undefined (and came out as INT64_MIN, below any N_lo).
    const double r = up(up(lh.upper / 2) / down(eps));
    const double pn = std::ceil(up(r * r));
    s.paper_n = pn < 0x1p62 ? static_cast<std::int64_t>(pn) : kNBeyondRange;
  }
  const double half_l = up(lh.upper / 2);
  s.sharper_n = smallest_n_for(
      [&](std::int64_t n) { return up(half_l * max_mean_abs_deviation_upper(n)); }, eps);

  std::int64_t last_fail = 0;  // largest N tested below n_hi that did not certify
  auto record = [&](std::int64_t n, const Decided& d) {
    ++s.tested;
    if (d.d == Decision::TooSmall) s.n_lo = std::max(s.n_lo, n);
    if (d.d == Decision::Certified && (s.n_hi == 0 || n < s.n_hi)) {
      s.n_hi = n;
      s.lower_at_hi = d.lower;
      s.upper_at_hi = d.upper;
    }
  };
  // Doubling.
  std::int64_t n = 1;
  for (; n <= opt.cap; n *= 2) {
    const Decided d = decide_n(p, n, eps, opt);
    record(n, d);
    if (d.d == Decision::Certified) break;
    last_fail = n;
  }
  if (s.n_hi == 0) {
    const Decided d = decide_n(p, opt.cap, eps, opt);
    record(opt.cap, d);
    if (d.d != Decision::Certified) {
      s.capped = true;
      s.lower_at_cap = d.lower;
      s.upper_at_cap = up(half_l * max_mean_abs_deviation_upper(opt.cap));
      s.reasoning = fmt::format("no N <= {} certified; at the cap sup error >= {:.4e} (point value), <= {:.4e} "
                                "(sharper bound)", opt.cap, s.lower_at_cap, s.upper_at_cap);
      return s;
    }
    last_fail = std::max(last_fail, n / 2);
  }
  // Bisection between the last failure and n_hi.
  std::int64_t lo = last_fail, hi = s.n_hi;
  while (hi - lo > 1 && static_cast<double>(hi - lo) > opt.rel_stop * static_cast<double>(hi)) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    const Decided d = decide_n(p, mid, eps, opt);
    record(mid, d);
    if (d.d == Decision::Certified) {
      hi = mid;
    } else {
      lo = mid;  // too small (proven) or undecided: search above
    }
  }
  s.minimal = s.n_lo + 1 == s.n_hi;
  s.reasoning = fmt::format(
      "N_hi = {}: certified sup < eps; N_lo = {}: a point value >= eps. {}", s.n_hi, s.n_lo,
      s.minimal ? "N_hi is the smallest N above N_lo; N < N_lo are not ruled out in general (the error is not "
                  "monotone in N), every tested N below N_hi failed"
                : "the gap holds N that were not tested or not decided");
  return s;
}

std::vector<VoronovskayaRow> voronovskaya(const BernsteinProblem& p, double u, const std::vector<std::int64_t>& ns) {
  std::vector<VoronovskayaRow> rows;
  if (!activations::is_smooth(p.act)) return rows;
  const ctmc::PrecisionScope precision(static_cast<unsigned>(p.prec));
  using solvers::Mpfr;
  // h'' = rho^2 [psi'' (rho - psi) + 2 psi'^2] / (rho - psi)^3, psi' = D phi', psi'' = D^2 phi''.
  const double D = solvers::to_double(p.imax - p.imin);
  const Mpfr I = Mpfr(solvers::to_double(p.imin)) + Mpfr(D) * Mpfr(u);
  Ivl Ii(p.prec), d1(p.prec);
  mpfi_set_fr(Ii, I.backend().data());
  activations::derivative_interval(p.act, d1, Ii);
  const Mpfr phi = p.act.eval(I);
  const Mpfr phi1(d1.mid());
  const Mpfr phi2 = *activations::second_derivative(p.act, I);
  const Mpfr rho = solvers::from_rational<Mpfr>(p.rho);
  const Mpfr ps1 = Mpfr(D) * phi1, ps2 = Mpfr(D) * Mpfr(D) * phi2;
  const Mpfr h2 = rho * rho * (ps2 * (rho - phi) + Mpfr(2) * ps1 * ps1) / ((rho - phi) * (rho - phi) * (rho - phi));
  const double limit = solvers::to_double(Mpfr(u) * Mpfr(1 - u) * h2 / Mpfr(2));
  for (std::int64_t n : ns) {
    BernsteinEvaluator ev(p, n);
    Ivl ui(p.prec), m(p.prec), f(p.prec), hv(p.prec);
    mpfi_set_d(ui, u);
    ev.eval(m, f, ui);
    p.h(hv, ui);
    mpfi_sub(m, m, hv);
    mpfi_mul_si(m, m, static_cast<long>(n));
    VoronovskayaRow r{n, u, m.mid(), limit, 0};
    r.rel_diff = limit != 0 ? std::fabs(r.scaled - limit) / std::fabs(limit) : std::fabs(r.scaled);
    rows.push_back(r);
  }
  return rows;
}

}  // namespace ctmc::proofs_check
