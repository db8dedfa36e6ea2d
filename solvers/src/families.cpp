#include "ctmc/solvers/families.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <type_traits>
#include <tuple>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"

namespace ctmc::solvers {
namespace {

using ojson = nlohmann::ordered_json;

Transition make_transition(std::size_t from, std::size_t to, const Affine& r, bool spike) {
  Transition t;
  t.from = from;
  t.to = to;
  t.offset = ExactValue(r.offset);
  t.slope = ExactValue(r.slope);
  t.spike = spike;
  return t;
}

ojson affine_json(const Affine& r) {
  ojson j;
  j["offset"] = exact_text(r.offset);
  j["slope"] = exact_text(r.slope);
  return j;
}

// A constant rate must not be negative (validate() would reject the model
// later with a less specific message).
void check_affine(const Affine& r, const char* name, const char* family) {
  if (r.slope == 0 && r.offset < 0)
    throw InputError(fmt::format("{} model: rate {}: negative constant rate {}", family, name, exact_text(r.offset)));
}

}  // namespace

Model two_state_model(const Affine& a, const Affine& d) {
  check_affine(a, "a", "two-state");
  check_affine(d, "d", "two-state");
  Model m;
  m.states = {"B", "R"};
  m.transitions = {make_transition(0, 1, a, true), make_transition(1, 0, d, false)};
  m.meta["family"] = "two-state";
  m.meta["a"] = affine_json(a);
  m.meta["d"] = affine_json(d);
  return m;
}

Model three_state_model(const Affine& a, const Affine& b, const Affine& c, const Affine& d) {
  check_affine(a, "a", "three-state");
  check_affine(b, "b", "three-state");
  check_affine(c, "c", "three-state");
  check_affine(d, "d", "three-state");
  Model m;
  m.states = {"B", "G", "R"};
  m.transitions = {make_transition(0, 1, a, false), make_transition(1, 0, b, false), make_transition(1, 2, c, true),
                   make_transition(2, 0, d, false)};
  m.meta["family"] = "three-state";
  m.meta["a"] = affine_json(a);
  m.meta["b"] = affine_json(b);
  m.meta["c"] = affine_json(c);
  m.meta["d"] = affine_json(d);
  return m;
}

Model full_three_state_model(const std::array<Affine, 6>& r) {
  static const char* kNames[6] = {"BG", "BR", "GB", "GR", "RB", "RG"};
  static const std::size_t kFrom[6] = {0, 0, 1, 1, 2, 2};
  static const std::size_t kTo[6] = {1, 2, 0, 2, 0, 1};
  Model m;
  m.states = {"B", "G", "R"};
  m.meta["family"] = "full-three-state";
  for (std::size_t k = 0; k < 6; ++k) {
    check_affine(r[k], kNames[k], "full-three-state");
    m.transitions.push_back(make_transition(kFrom[k], kTo[k], r[k], kTo[k] == 0));
    m.meta[kNames[k]] = affine_json(r[k]);
  }
  return m;
}

Model bernstein_model(const std::vector<Rational>& kappa, const Rational& rho, const Rational& gamma,
                      const Rational& Imin, const Rational& Imax) {
  if (kappa.size() < 2) throw InputError("bernstein model: kappa: need N >= 1 (at least two coefficients)");
  for (std::size_t i = 0; i < kappa.size(); ++i)
    if (kappa[i] < 0) throw InputError(fmt::format("bernstein model: kappa[{}]: negative ({})", i, exact_text(kappa[i])));
  if (rho <= 0) throw InputError("bernstein model: rho: must be > 0");
  if (gamma <= 0) throw InputError("bernstein model: gamma: must be > 0");
  if (Imax <= Imin) throw InputError("bernstein model: domain: need Imin < Imax");
  const std::size_t n = kappa.size() - 1;
  const Rational width = Imax - Imin;
  Model m;
  m.states.reserve(2 * (n + 1));
  for (std::size_t i = 0; i <= n; ++i) m.states.push_back("A" + std::to_string(i));
  for (std::size_t i = 0; i <= n; ++i) m.states.push_back("R" + std::to_string(i));
  m.transitions.reserve(4 * n + 2);
  for (std::size_t i = 0; i <= n; ++i) {
    // gamma (N-i) u = gamma (N-i) (I - Imin) / width.
    if (i < n) {
      const Rational g = gamma * Rational(static_cast<long>(n - i)) / width;
      m.transitions.push_back(make_transition(i, i + 1, Affine{-g * Imin, g}, false));
    }
    // gamma i (1-u) = gamma i (Imax - I) / width.
    if (i > 0) {
      const Rational g = gamma * Rational(static_cast<long>(i)) / width;
      m.transitions.push_back(make_transition(i, i - 1, Affine{g * Imax, -g}, false));
    }
    m.transitions.push_back(make_transition(i, n + 1 + i, Affine{kappa[i], 0}, true));
    m.transitions.push_back(make_transition(n + 1 + i, i, Affine{rho, 0}, false));
  }
  m.meta["family"] = "bernstein";
  m.meta["N"] = n;
  ojson k = ojson::array();
  for (const auto& q : kappa) k.push_back(exact_text(q));
  m.meta["kappa"] = k;
  m.meta["rho"] = exact_text(rho);
  m.meta["gamma"] = exact_text(gamma);
  m.meta["Imin"] = exact_text(Imin);
  m.meta["Imax"] = exact_text(Imax);
  return m;
}

std::string family_name(const Model& m) {
  if (m.meta.contains("family") && m.meta["family"].is_string()) return m.meta["family"].get<std::string>();
  return "";
}

std::string closed_form_text(const std::string& family) {
  if (family == "two-state") return "a d / (a + d)";
  if (family == "three-state") return "a c d / (d (a + b + c) + a c)";
  if (family == "full-three-state")
    return "(w_G r_GB + w_R r_RB) / (w_B + w_G + w_R), w_X = sum over spanning trees into X of the product of their rates";
  if (family == "bernstein") return "rho M / (rho + M), M = sum_i kappa_i C(N,i) u^i (1-u)^(N-i)";
  return "";
}

namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

std::size_t find_transition(const Model& m, const std::string& from, const std::string& to) {
  for (std::size_t k = 0; k < m.transitions.size(); ++k)
    if (m.states[m.transitions[k].from] == from && m.states[m.transitions[k].to] == to) return k;
  return kNone;
}

bool has_states(const Model& m, std::initializer_list<const char*> names) {
  if (m.states.size() != names.size()) return false;
  for (const char* n : names)
    if (std::find(m.states.begin(), m.states.end(), n) == m.states.end()) return false;
  return true;
}

// Indices of the transitions from -> to with the given spike flags, or empty
// when the model has other transitions or a listed one is missing.
std::vector<std::size_t> match_exactly(const Model& m, const std::vector<std::tuple<const char*, const char*, bool>>& want) {
  if (m.transitions.size() != want.size()) return {};
  std::vector<std::size_t> idx;
  for (const auto& [from, to, spike] : want) {
    const std::size_t k = find_transition(m, from, to);
    if (k == kNone || m.transitions[k].spike != spike) return {};
    idx.push_back(k);
  }
  return idx;
}

std::optional<Rational> meta_exact(const nlohmann::ordered_json& j) {
  if (j.is_string()) return parse_exact(j.get<std::string>());
  if (j.is_number()) return parse_exact(j.dump());
  return std::nullopt;
}

struct BernsteinParams {
  std::vector<Rational> kappa;
  Rational rho, Imin, Imax;
};

// Parameters from meta, accepted only when rebuilding the model from them
// gives exactly the model's states and transitions.
std::optional<BernsteinParams> bernstein_params(const Model& m) {
  const auto& j = m.meta;
  for (const char* key : {"kappa", "rho", "gamma", "Imin", "Imax"})
    if (!j.contains(key)) return std::nullopt;
  if (!j["kappa"].is_array()) return std::nullopt;
  BernsteinParams p;
  for (const auto& k : j["kappa"]) {
    auto q = meta_exact(k);
    if (!q) return std::nullopt;
    p.kappa.push_back(*q);
  }
  auto rho = meta_exact(j["rho"]), gamma = meta_exact(j["gamma"]), lo = meta_exact(j["Imin"]), hi = meta_exact(j["Imax"]);
  if (!rho || !gamma || !lo || !hi) return std::nullopt;
  Model ref;
  try {
    ref = bernstein_model(p.kappa, *rho, *gamma, *lo, *hi);
  } catch (const InputError&) {
    return std::nullopt;
  }
  if (ref.states != m.states || ref.transitions.size() != m.transitions.size()) return std::nullopt;
  using Key = std::pair<std::size_t, std::size_t>;
  std::map<Key, const Transition*> have;
  for (const auto& t : m.transitions) have[{t.from, t.to}] = &t;
  for (const auto& t : ref.transitions) {
    auto it = have.find({t.from, t.to});
    if (it == have.end()) return std::nullopt;
    const Transition& u = *it->second;
    if (u.spike != t.spike || u.offset.value != t.offset.value || u.slope.value != t.slope.value) return std::nullopt;
  }
  p.rho = *rho;
  p.Imin = *lo;
  p.Imax = *hi;
  return p;
}

// M_N(u) for long chains: binomial weights relative to the mode by their
// ratios w_{i+1}/w_i = (N-i)/(i+1) * u/(1-u) (no overflow or underflow
// trouble, every term positive), then M = sum kappa_i w_i / sum w_i since the
// binomial weights sum to 1. Relative error O(N eps).
template <class T>
T bernstein_long(const std::vector<Rational>& kappa, const Rational& u) {
  const std::size_t n = kappa.size() - 1;
  const Rational nu = u * Rational(static_cast<long>(n));
  std::size_t mode = static_cast<std::size_t>(Integer(numerator(nu) / denominator(nu)).convert_to<long>());
  if (mode > n) mode = n;
  const T ut = from_rational<T>(u), vt = from_rational<T>(1 - u);
  const T up = ut / vt, down = vt / ut;
  T num = from_rational<T>(kappa[mode]), den(1);
  T w(1);
  for (std::size_t i = mode; i < n; ++i) {
    w = w * T(static_cast<long>(n - i)) / T(static_cast<long>(i + 1)) * up;
    den += w;
    num += w * from_rational<T>(kappa[i + 1]);
  }
  w = T(1);
  for (std::size_t i = mode; i > 0; --i) {
    w = w * T(static_cast<long>(i)) / T(static_cast<long>(n - i + 1)) * down;
    den += w;
    num += w * from_rational<T>(kappa[i - 1]);
  }
  return num / den;
}

constexpr std::size_t kDeCasteljauMax = 2048;  // above this, O(N^2) is too slow

template <class T>
T bernstein_value(const std::vector<Rational>& kappa, const Rational& u) {
  if (u <= 0) return from_rational<T>(kappa.front());
  if (u >= 1) return from_rational<T>(kappa.back());
  if (kappa.size() - 1 > kDeCasteljauMax) return bernstein_long<T>(kappa, u);
  std::vector<T> k;
  k.reserve(kappa.size());
  for (const auto& q : kappa) k.push_back(from_rational<T>(q));
  // 1 - u from the exact u (see bernstein_polynomial), as bernstein_long does.
  return bernstein_polynomial(k, from_rational<T>(u), from_rational<T>(1 - u));
}

// The closed form with every rate (kappa and rho for Bernstein) multiplied
// exactly by `scale` before it is rounded into T.
template <class T>
std::optional<Fraction<T>> closed_form_flux_scaled(const Model& m, const Rational& H, const Rational& scale) {
  const std::string family = family_name(m);
  auto rate = [&](std::size_t k) { return k == kNone ? T(0) : from_rational<T>(m.transitions[k].rate(H) * scale); };
  if (family == "two-state") {
    if (!has_states(m, {"B", "R"})) return std::nullopt;
    const auto k = match_exactly(m, {{"B", "R", true}, {"R", "B", false}});
    if (k.empty()) return std::nullopt;
    return two_state_flux<T>(rate(k[0]), rate(k[1]));
  }
  if (family == "three-state") {
    if (!has_states(m, {"B", "G", "R"})) return std::nullopt;
    const auto k = match_exactly(m, {{"B", "G", false}, {"G", "B", false}, {"G", "R", true}, {"R", "B", false}});
    if (k.empty()) return std::nullopt;
    return three_state_flux<T>(rate(k[0]), rate(k[1]), rate(k[2]), rate(k[3]));
  }
  if (family == "full-three-state") {
    if (!has_states(m, {"B", "G", "R"})) return std::nullopt;
    static const char* kFrom[6] = {"B", "B", "G", "G", "R", "R"};
    static const char* kTo[6] = {"G", "R", "B", "R", "B", "G"};
    std::array<T, 6> r;
    std::size_t found = 0;
    for (std::size_t i = 0; i < 6; ++i) {
      const std::size_t k = find_transition(m, kFrom[i], kTo[i]);
      if (k != kNone) {
        ++found;
        if (m.transitions[k].spike != (std::string(kTo[i]) == "B")) return std::nullopt;
      }
      r[i] = rate(k);
    }
    if (found != m.transitions.size()) return std::nullopt;
    return full_three_state_flux<T>(r);
  }
  if (family == "bernstein") {
    const auto p = bernstein_params(m);
    if (!p) return std::nullopt;
    const Rational u = (H - p->Imin) / (p->Imax - p->Imin);
    std::vector<Rational> kappa = p->kappa;
    for (auto& k : kappa) k *= scale;
    const T mval = bernstein_value<T>(kappa, u);
    const T rho = from_rational<T>(p->rho * scale);
    return Fraction<T>{rho * mval, rho + mval};
  }
  return std::nullopt;
}

}  // namespace

// Every closed form is homogeneous of degree 1 in the rates (num of degree
// k + 1 over den of degree k; Bernstein in kappa and rho), so in double it is
// evaluated on the rates times 2^-e and the value multiplied by 2^e. With e
// midway between the binary exponents of the smallest and largest positive
// rate, products of up to three rates stay in double's range for rates
// spread over 2^680. Unscaled, a d of the two-state chain underflowed to 0
// at a = d = 1e-170 (closed form printed as 0, GTH's flux 5e-171 right) and
// the three-state products overflowed from a = c = 1e155 on.
template <class T>
std::optional<Fraction<T>> closed_form_flux(const Model& m, const Rational& H) {
  if constexpr (std::is_same_v<T, double>) {
    long lo = 0, hi = 0;
    bool any = false;
    for (const auto& r : m.rates(H)) {
      if (!(r > 0)) continue;
      // Binary exponent (r in [2^(e-1), 2^e) up to rounding), outside double's range too.
      const long e = static_cast<long>(std::floor(log2_rational(r))) + 1;
      lo = any ? std::min(lo, e) : e;
      hi = any ? std::max(hi, e) : e;
      any = true;
    }
    const long e = any ? std::clamp((lo + hi) / 2, -1000L, 1000L) : 0;
    Rational scale(1);
    if (e > 0) mpq_div_2exp(scale.backend().data(), scale.backend().data(), static_cast<mp_bitcnt_t>(e));
    if (e < 0) mpq_mul_2exp(scale.backend().data(), scale.backend().data(), static_cast<mp_bitcnt_t>(-e));
    auto f = closed_form_flux_scaled<double>(m, H, scale);
    if (!f || f->den == 0) return f;
    return Fraction<double>{std::ldexp(f->num / f->den, static_cast<int>(e)), 1.0};
  } else {
    return closed_form_flux_scaled<T>(m, H, Rational(1));
  }
}

template std::optional<Fraction<double>> closed_form_flux(const Model&, const Rational&);
template std::optional<Fraction<Mpfr>> closed_form_flux(const Model&, const Rational&);
template std::optional<Fraction<Rational>> closed_form_flux(const Model&, const Rational&);
template std::optional<Fraction<Interval>> closed_form_flux(const Model&, const Rational&);

}  // namespace ctmc::solvers
