// The family cases of the flux-identity checks and the symbolic proof
// (tree theorem). The numeric checks are in flux_identities_numeric.cpp.
#include <fmt/format.h>

#include <stdexcept>

#include "ctmc/proofs_check/flux_identities.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/core/seeding.hpp"

namespace ctmc::proofs_check {

using solvers::Affine;

namespace {

// 10^k exactly: the rational that the decimal "1ek" denotes (parse_exact forms
// the power by GMP powering).
Rational pow10(int k) { return *solvers::parse_exact(fmt::format("1e{}", k)); }

long uniform(std::mt19937_64& rng, long lo, long hi) { return std::uniform_int_distribution<long>(lo, hi)(rng); }

// A rate with varied magnitudes: (p/q) 10^k, p < 2^24, q < 2^12, |k| <= 3.
Rational random_rate(std::mt19937_64& rng) {
  const Rational m(uniform(rng, 1, 1L << 24), uniform(rng, 1, 1L << 12));
  return m * pow10(static_cast<int>(uniform(rng, -3, 3)));
}

// A stiff rate: 7-digit mantissa in [1, 10) times 10^k, |k| <= 12.
Rational stiff_rate(std::mt19937_64& rng) {
  const Rational m(uniform(rng, 1000000, 9999999), 1000000);
  return m * pow10(static_cast<int>(uniform(rng, -12, 12)));
}

Rational draw_rate(std::mt19937_64& rng, PointKind kind) {
  return kind == PointKind::Stiff ? stiff_rate(rng) : random_rate(rng);
}

// Writes a rate value r as a rectified affine rate at input H: a random slope
// s (zero a quarter of the time) and offset r - s H, so max(0, offset + s H)
// = r exactly.
Affine affine_for(const Rational& r, const Rational& H, std::mt19937_64& rng) {
  Rational s(0);
  if (uniform(rng, 0, 3) != 0) s = Rational(uniform(rng, -1000, 1000), uniform(rng, 1, 100));
  if (r == 0) s = 0;  // keep an exactly-zero rate constant (no rectification needed)
  return Affine{r - s * H, s};
}

Rational random_input(std::mt19937_64& rng) { return Rational(uniform(rng, -2000, 2000), uniform(rng, 1, 1000)); }

std::vector<std::vector<Rational>> magnitude_corners(std::size_t k) {
  const Rational mags[3] = {pow10(-12), Rational(1), pow10(12)};
  std::vector<std::vector<Rational>> out{{}};
  for (std::size_t i = 0; i < k; ++i) {
    std::vector<std::vector<Rational>> next;
    for (const auto& p : out)
      for (const auto& m : mags) {
        auto q = p;
        q.push_back(m);
        next.push_back(std::move(q));
      }
    out = std::move(next);
  }
  return out;
}

std::vector<Polynomial> symbol_polys(const std::vector<std::string>& names) {
  std::vector<Polynomial> s;
  for (const auto& n : names) s.push_back(Polynomial::variable(n));
  return s;
}

// ---------------------------------------------------------------- rate families

FamilyCase rate_family(FluxFamily family) {
  FamilyCase c;
  c.family = family;
  switch (family) {
    case FluxFamily::TwoState:
      c.name = "two-state";
      c.states = 2;
      c.symbols = {"a", "d"};
      c.closed_form = [](const std::vector<Rational>& p) { return solvers::two_state_flux(p[0], p[1]); };
      c.closed_form_symbolic = [](const std::vector<Polynomial>& p) { return solvers::two_state_flux(p[0], p[1]); };
      c.build = [](const std::vector<Rational>& p, std::mt19937_64& rng) {
        const Rational H = random_input(rng);
        return FamilyInstance{solvers::two_state_model(affine_for(p[0], H, rng), affine_for(p[1], H, rng)), H};
      };
      break;
    case FluxFamily::ThreeState:
      c.name = "three-state";
      c.states = 3;
      c.symbols = {"a", "b", "c", "d"};
      c.paper_formula_latex = "\\nu_\\theta(H)=\\frac{d\\,a_\\theta(H)c_\\theta(H)}{d\\,[a_\\theta(H)+b+c_\\theta(H)]+a_\\theta(H)c_\\theta(H)}";
      c.paper_reference = "paper eq. (2) (eq:rate), derived in Appendix A";
      c.closed_form = [](const std::vector<Rational>& p) { return solvers::three_state_flux(p[0], p[1], p[2], p[3]); };
      c.closed_form_symbolic = [](const std::vector<Polynomial>& p) {
        return solvers::three_state_flux(p[0], p[1], p[2], p[3]);
      };
      c.build = [](const std::vector<Rational>& p, std::mt19937_64& rng) {
        const Rational H = random_input(rng);
        return FamilyInstance{solvers::three_state_model(affine_for(p[0], H, rng), affine_for(p[1], H, rng),
                                                         affine_for(p[2], H, rng), affine_for(p[3], H, rng)),
                              H};
      };
      break;
    case FluxFamily::FullThreeState:
      c.name = "full-three-state";
      c.states = 3;
      // Builder order {BG, BR, GB, GR, RB, RG} = solvers::FullThreeStateRate.
      c.symbols = {"r_B_G", "r_B_R", "r_G_B", "r_G_R", "r_R_B", "r_R_G"};
      c.closed_form = [](const std::vector<Rational>& p) {
        return solvers::full_three_state_flux(std::array<Rational, 6>{p[0], p[1], p[2], p[3], p[4], p[5]});
      };
      c.closed_form_symbolic = [](const std::vector<Polynomial>& p) {
        return solvers::full_three_state_flux(std::array<Polynomial, 6>{p[0], p[1], p[2], p[3], p[4], p[5]});
      };
      c.build = [](const std::vector<Rational>& p, std::mt19937_64& rng) {
        const Rational H = random_input(rng);
        std::array<Affine, 6> r;
        for (std::size_t k = 0; k < 6; ++k) r[k] = affine_for(p[k], H, rng);
        return FamilyInstance{solvers::full_three_state_model(r), H};
      };
      break;
    default:
      throw std::logic_error("rate_family: not a rate family");
  }
  const std::size_t k = c.symbols.size();
  c.sample = [k](std::mt19937_64& rng, PointKind kind) {
    std::vector<Rational> p;
    for (std::size_t i = 0; i < k; ++i) p.push_back(draw_rate(rng, kind));
    return p;
  };
  c.stiff_grid = [k](std::mt19937_64&) { return magnitude_corners(k); };
  // The builders emit one transition per rate, in parameter order.
  c.symbolic_rate = [](const Model&, std::size_t t, const std::vector<Polynomial>& s) { return s.at(t); };
  const auto sym = symbol_polys(c.symbols);
  const auto cf = c.closed_form_symbolic(sym);
  c.closed_form_text = solvers::fraction_text(cf.num, cf.den);
  c.closed_form_latex = solvers::fraction_latex(cf.num, cf.den);
  return c;
}

// ---------------------------------------------------------------- Bernstein

// Parameters: [u, gamma, kappa_0 .. kappa_N, rho].
FamilyCase bernstein_family(std::size_t N) {
  if (N < 1) throw InputError("bernstein: N must be >= 1");
  FamilyCase c;
  c.family = FluxFamily::Bernstein;
  c.N = N;
  c.name = fmt::format("bernstein(N={})", N);
  c.states = 2 * (N + 1);
  c.symbols = {"u", "gamma"};
  for (std::size_t i = 0; i <= N; ++i) c.symbols.push_back(fmt::format("kappa_{}", i));
  c.symbols.push_back("rho");
  c.paper_formula_latex =
      "F_N(u)=\\frac{\\rho M_N(u)}{\\rho+M_N(u)},\\quad M_N(u)=\\sum_{i=0}^{N}\\kappa_i\\binom{N}{i}u^i(1-u)^{N-i}";
  c.paper_reference = "paper eq. (bernrate), Appendix B";
  c.closed_form_text = "rho*M_N / (rho + M_N), M_N = sum_i kappa_i*C(N,i)*u^i*(1-u)^(N-i)";
  c.closed_form_latex = "\\frac{\\rho M_N}{\\rho + M_N}";
  auto split = [N](const auto& p) {
    using T = std::decay_t<decltype(p[0])>;
    return std::vector<T>(p.begin() + 2, p.begin() + 3 + static_cast<long>(N));
  };
  c.closed_form = [split, N](const std::vector<Rational>& p) {
    return solvers::bernstein_flux(split(p), p[N + 3], p[0]);
  };
  c.closed_form_symbolic = [split, N](const std::vector<Polynomial>& p) {
    return solvers::bernstein_flux(split(p), p[N + 3], p[0]);
  };
  c.sample = [N](std::mt19937_64& rng, PointKind kind) {
    std::vector<Rational> p;
    if (kind == PointKind::Stiff) {
      // u = 10^-k or 1 - 10^-k, k <= 12: the chain's ends nearly decouple.
      const Rational e = pow10(-static_cast<int>(uniform(rng, 0, 12)));
      p.push_back(uniform(rng, 0, 1) ? e : Rational(1) - e);
      if (p[0] == 0) p[0] = Rational(1, 2);
    } else {
      const long den = uniform(rng, 2, 10000);
      p.push_back(Rational(uniform(rng, 1, den - 1), den));
    }
    p.push_back(draw_rate(rng, kind));  // gamma
    for (std::size_t i = 0; i <= N; ++i)  // kappa_i, zero a tenth of the time
      p.push_back(uniform(rng, 0, 9) == 0 ? Rational(0) : draw_rate(rng, kind));
    p.push_back(draw_rate(rng, kind));  // rho
    return p;
  };
  c.stiff_grid = [N](std::mt19937_64& rng) {
    // u at and near both ends (u = 0, 1 make the chain reducible: the solver
    // must find the closed class), gamma and rho at the extreme magnitudes,
    // kappa log-uniform in 1e-12 .. 1e13.
    const Rational us[5] = {Rational(0), pow10(-12), Rational(1, 2), Rational(1) - pow10(-12), Rational(1)};
    const Rational gammas[2] = {pow10(-12), pow10(12)};
    const Rational rhos[3] = {pow10(-12), Rational(1), pow10(12)};
    std::vector<std::vector<Rational>> out;
    for (const auto& u : us)
      for (const auto& g : gammas)
        for (const auto& r : rhos) {
          std::vector<Rational> p{u, g};
          for (std::size_t i = 0; i <= N; ++i) p.push_back(stiff_rate(rng));
          p.push_back(r);
          out.push_back(std::move(p));
        }
    return out;
  };
  c.build = [split, N](const std::vector<Rational>& p, std::mt19937_64& rng) {
    // A random input domain [Imin, Imax] and the input I with u = (I - Imin)/(Imax - Imin).
    const Rational imin(uniform(rng, -5000, 5000), uniform(rng, 1, 1000));
    const Rational width(uniform(rng, 1, 10000), uniform(rng, 1, 1000));
    const Rational I = imin + p[0] * width;
    return FamilyInstance{solvers::bernstein_model(split(p), p[N + 3], p[1], imin, imin + width), I};
  };
  c.symbolic_rate = [N](const Model& m, std::size_t k, const std::vector<Polynomial>& s) {
    // States A_0..A_N are 0..N, R_i is N+1+i (bernstein_model's layout).
    const auto& t = m.transitions.at(k);
    const std::size_t f = t.from, g = t.to;
    const Polynomial &u = s[0], &gamma = s[1], &rho = s[N + 3];
    if (f <= N && g == f + 1 && g <= N) return gamma * Polynomial(static_cast<int>(N - f)) * u;
    if (f <= N && f >= 1 && g == f - 1) return gamma * Polynomial(static_cast<int>(f)) * (Polynomial(1) - u);
    if (f <= N && g == N + 1 + f) return s[2 + f];
    if (f > N && g == f - N - 1) return rho;
    throw std::logic_error("bernstein symbolic rate: unexpected transition");
  };
  return c;
}

}  // namespace

std::uint64_t point_seed(std::uint64_t seed, const std::string& tag, std::uint64_t index) {
  return ctmc::named_stream_seed(seed, tag, index);
}

FamilyCase family_case(FluxFamily family, std::size_t N) {
  return family == FluxFamily::Bernstein ? bernstein_family(N) : rate_family(family);
}

std::vector<FamilyCase> standard_cases(const std::vector<std::size_t>& bernstein_N) {
  std::vector<FamilyCase> cs = {family_case(FluxFamily::TwoState), family_case(FluxFamily::ThreeState),
                                family_case(FluxFamily::FullThreeState)};
  for (auto n : bernstein_N) cs.push_back(family_case(FluxFamily::Bernstein, n));
  return cs;
}

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::Proved: return "proved";
    case Verdict::Refuted: return "refuted";
    default: return "unknown";
  }
}

bool FluxCheckResult::passed() const {
  if (symbolic.verdict == Verdict::Refuted) return false;
  for (const auto& s : scalars)
    if (!s.passed()) return false;
  return true;
}

SymbolicCheck check_symbolic(const FamilyCase& c) {
  SymbolicCheck r;
  if (c.states > solvers::kTreeTheoremMaxStates) {
    r.reason = fmt::format("{} states > {}: beyond the symbolic tree theorem", c.states,
                           solvers::kTreeTheoremMaxStates);
    return r;
  }
  // The chain's structure comes from the family's own model builder, at a
  // generic point (all rates positive); the symbolic rate of each transition
  // is checked there against the builder's exact rate, so the proof is about
  // the same generator the numeric checks solve.
  std::mt19937_64 rng(point_seed(0, c.name + "/symbolic", 0));
  std::vector<Rational> p = c.sample(rng, PointKind::Random);
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p[i] == 0) p[i] = Rational(static_cast<long>(i) + 2, 3);  // generic: no zero kappa
  const auto inst = c.build(p, rng);
  const auto rates = inst.model.rates(inst.H);
  const auto sym = symbol_polys(c.symbols);
  std::vector<std::uint32_t> index;
  for (const auto& n : c.symbols) index.push_back(solvers::variable_index(n));
  auto value = [&](std::uint32_t v) {
    for (std::size_t i = 0; i < index.size(); ++i)
      if (index[i] == v) return p[i];
    throw std::logic_error("symbolic check: unknown variable");
  };
  std::vector<solvers::SymbolicTransition> tr;
  for (std::size_t k = 0; k < inst.model.transitions.size(); ++k) {
    const auto& t = inst.model.transitions[k];
    Polynomial rate = c.symbolic_rate(inst.model, k, sym);
    if (rate.evaluate(value) != rates[k])
      throw std::logic_error(c.name + ": symbolic rate of transition " + std::to_string(k) + " disagrees with the builder");
    tr.push_back({t.from, t.to, std::move(rate), t.spike});
  }
  const auto tree = solvers::tree_theorem(inst.model.size(), tr, c.name);
  r.trees = tree.trees;
  Polynomial shown_num = tree.flux_num, shown_den = tree.flux_den;
  solvers::cancel_content(shown_num, shown_den);  // display only: drop common monomials (gamma^N, rho)
  r.derived_text = solvers::fraction_text(shown_num, shown_den);
  r.derived_latex = solvers::fraction_latex(shown_num, shown_den);
  const auto cf = c.closed_form_symbolic(sym);
  const bool same = !cf.den.is_zero() && cf.num * tree.flux_den == tree.flux_num * cf.den;
  r.verdict = same ? Verdict::Proved : Verdict::Refuted;
  r.reason = fmt::format("num_cf * den_tree {} num_tree * den_cf as polynomials in {} symbols ({} spanning in-trees)",
                         same ? "==" : "!=", c.symbols.size(), tree.trees);
  return r;
}

}  // namespace ctmc::proofs_check
