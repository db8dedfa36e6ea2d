#include "ctmc/solvers/families.hpp"

#include <fmt/format.h>

#include "ctmc/solvers/errors.hpp"
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

}  // namespace ctmc::solvers
