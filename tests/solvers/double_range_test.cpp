// Double arithmetic at the edges of its range: GTH's back-substitution must
// not overflow when pi spans more than 1e308 (reference: exact rationals),
// and rates that round out of double's range are refused with the model's
// name, the transition and H instead of turning into NaN or a false
// "reducible" verdict.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/stationary.hpp"

using namespace ctmc::solvers;

namespace {

std::string fmt_pair(std::size_t from, std::size_t to, const std::string& rate, bool spike) {
  return "{\"from\": \"S" + std::to_string(from) + "\", \"to\": \"S" + std::to_string(to) + "\", \"offset\": \"" +
         rate + "\", \"spike\": " + (spike ? "true" : "false") + "}";
}

// Birth-death chain on n states: i -> i+1 at rate 1, i+1 -> i at rate
// `down`, spikes on the downward steps. pi_k is proportional to down^-k.
Model birth_death(std::size_t n, const std::string& down) {
  std::string j = R"({"states": [)";
  for (std::size_t i = 0; i < n; ++i) j += (i ? "," : "") + ("\"S" + std::to_string(i) + "\"");
  j += R"(], "transitions": [)";
  for (std::size_t i = 0; i + 1 < n; ++i) {
    j += (i ? "," : "") + fmt_pair(i, i + 1, "1", false);
    j += "," + fmt_pair(i + 1, i, down, true);
  }
  return model_from_json_text(j + "]}", "birth_death.json");
}

}  // namespace

TEST_CASE("GTH in double: pi spanning 1e705 (48 states, ratio 1e15 per step) keeps full accuracy, dense and sparse") {
  // Without rescaling, the back-substitution from state 0 (pi_0 ~ 1e-705)
  // passes 1.8e308 at state 21 and every pi became NaN.
  const auto m = birth_death(48, "1e-15");
  const auto exact = solve_stationary<Rational>(m, 0);
  for (Method method : {Method::Dense, Method::Sparse}) {
    const auto d = solve_stationary<double>(m, 0, method);
    for (std::size_t k = 25; k < 48; ++k)  // pi_k >= 1e-330 ... only k >= 27 are normal doubles
      if (to_double(exact.pi[k]) > 1e-300) CHECK(relative_error(d.pi[k], exact.pi[k]) < 1e-14);
    CHECK(relative_error(d.flux, exact.flux) < 1e-14);
  }
}

TEST_CASE("double: rates out of double's range are refused with file, transition and H") {
  const std::string head = R"({"states": ["A", "B"], "transitions": [)";
  // offset + slope H = 1e310 at H = 1e10: finite as written, infinite in double.
  const auto huge = model_from_json_text(head + R"({"from": "A", "to": "B", "offset": "0", "slope": "1e300"},
      {"from": "B", "to": "A", "offset": "1", "spike": true}]})", "huge.json");
  CHECK_THROWS_WITH_AS(solve_stationary<double>(huge, Rational(10000000000), Method::Auto, "huge.json"),
                       doctest::Contains("huge.json: at H = 10000000000 the rate of transitions[0] (A -> B)"), ctmc::InputError);
  // 1e-400 rounds to 0: the double chain would be reducible. MPFR solves it.
  const auto tiny = model_from_json_text(head + R"({"from": "A", "to": "B", "offset": "1"},
      {"from": "B", "to": "A", "offset": "1e-400", "spike": true}]})", "tiny.json");
  CHECK_THROWS_WITH_AS(solve_stationary<double>(tiny, 0), doctest::Contains("below the range of double"), ctmc::InputError);
  CHECK(solve_stationary<Rational>(tiny, 0).pi[1] == Rational(1) / (1 + *parse_exact("1e-400")));
  // In range, but q_AB / q_BA = 1e400 overflows inside the elimination.
  const auto wide = model_from_json_text(head + R"({"from": "A", "to": "B", "offset": "1e200"},
      {"from": "B", "to": "A", "offset": "1e-200", "spike": true}]})", "wide.json");
  CHECK_THROWS_WITH_AS(solve_stationary<double>(wide, 0, Method::Auto, "wide.json"), doctest::Contains("wide.json: at H = 0 the rates span"),
                       ctmc::InputError);
}
