// Fit inputs outside double range, strict activation tables: InputError, never
// a crash or a silently dropped row.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <string>

#include "ctmc/activations/activation.hpp"
#include "ctmc/analysis/fit.hpp"
#include "ctmc/analysis/fit_tables.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/model.hpp"
#include "../test_temp_files.hpp"

using namespace ctmc;
using solvers::Rational;

namespace {
std::string write_input(const std::string& name, const std::string& body) {
  return ctmc::testing::write_temp_file("fit_input_test_" + name, body);
}
}  // namespace

TEST_CASE("parse_domain / make_grid reject ends outside double range or equal as doubles") {
  CHECK_THROWS_AS(analysis::parse_domain("1e400,1e401"), InputError);
  CHECK_THROWS_AS(analysis::parse_domain("-1e-400,1e-400"), InputError);
  CHECK_THROWS_AS(analysis::parse_domain("1,1.0000000000000000000001"), InputError);
  const auto [lo, hi] = analysis::parse_domain("-2,2");
  CHECK(analysis::make_grid(lo, hi, 5).h.size() == 5);
  CHECK_THROWS_AS(analysis::make_grid(lo, hi, 100'000'000), InputError);
  // Ends distinct as doubles, but 10^6 points between neighbouring doubles collapse.
  const Rational a(1), b = Rational(1) + Rational(1) / Rational(1L << 40);
  CHECK_THROWS_AS(analysis::make_grid(a, b, 1'000'000), InputError);
  // Exact ends that overflow a double.
  const auto huge = *solvers::parse_exact("1e400");
  CHECK_THROWS_AS(analysis::make_grid(huge, huge * 2, 3), InputError);
  // Finite ends whose width hi - lo overflows a double (the fit scales slopes
  // by it): rejected, where -1e300,1e300 is a usable domain.
  CHECK_THROWS_WITH_AS(analysis::parse_domain("-1e308,1e308"), doctest::Contains("overflows a double"), InputError);
  const auto wide = *solvers::parse_exact("1e308");
  CHECK_THROWS_WITH_AS(analysis::make_grid(-wide, wide, 3), doctest::Contains("overflows a double"), InputError);
  const auto [wlo, whi] = analysis::parse_domain("-1e300,1e300");
  CHECK(analysis::make_grid(wlo, whi, 3).h[1] == 0.0);
}

TEST_CASE("read_samples / read_weights: values outside double range name the file and line") {
  const auto big = write_input("big.txt", "0\n1\n1e400\n");
  try {
    analysis::read_samples(big);
    FAIL("no throw");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("line 3") != std::string::npos);
  }
  const auto s = write_input("s.txt", "0\n0.5\n1\n");
  auto d = analysis::read_samples(s);
  CHECK_THROWS_AS(analysis::read_weights(d, write_input("wbig.txt", "1\n1e400\n1\n")), InputError);
  CHECK_THROWS_AS(analysis::read_weights(d, write_input("wtiny.txt", "1e-400\n1e-400\n1e-400\n")), InputError);
  CHECK_THROWS_AS(analysis::read_weights(d, write_input("wsum.txt", "1e308\n1e308\n1e308\n")), InputError);
  analysis::read_weights(d, write_input("wok.txt", "1\n2\n1\n"));
  CHECK(d.w.size() == 3);
  // A bad line is quoted cut short (a 400 KB line made a 400 KB message).
  try {
    analysis::read_samples(write_input("long.txt", "0\n1\n" + std::string(400000, 'x') + "\n"));
    FAIL("no throw");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("line 3: 'xxx") != std::string::npos);
    CHECK(what.size() < 200);
  }
  // Each sample a finite double, their range not.
  CHECK_THROWS_WITH_AS(analysis::read_samples(write_input("wide.txt", "-1e308\n0\n1e308\n")),
                       doctest::Contains("wider than a double holds"), InputError);
}

TEST_CASE("read_weights: one weight per sample in file order, filtered with the samples by --domain") {
  // Values 0..3 in file order (comments and blank lines are not values);
  // --domain [0, 1] keeps 1/2 and 1/3 (values 1 and 3), so the kept weights
  // are the file's second and fourth: 20 and 40.
  const auto s = write_input("filter.txt", "# h\n-1\n0.5\n\n2\n1/3\n");
  const Rational lo(0), hi(1);
  auto d = analysis::read_samples(s, &lo, &hi);
  REQUIRE(d.h_exact == std::vector<Rational>{Rational(1, 2), Rational(1, 3)});
  analysis::read_weights(d, write_input("filter.w", "10\n20\n# w\n30\n40\n"));
  CHECK(d.w_exact == std::vector<Rational>{Rational(20), Rational(40)});
  CHECK(d.w == std::vector<double>{20.0, 40.0});
  // One weight per kept sample is the wrong count (the file has 4 values).
  auto d2 = analysis::read_samples(s, &lo, &hi);
  CHECK_THROWS_WITH_AS(analysis::read_weights(d2, write_input("filter2.w", "20\n40\n")),
                       doctest::Contains("2 weights for the 4 values of the samples file"), InputError);
  // A negative weight is an error even where its sample is dropped; the kept
  // weights summing to 0 is one too.
  CHECK_THROWS_WITH_AS(analysis::read_weights(d2, write_input("filter3.w", "-1\n20\n30\n40\n")),
                       doctest::Contains("line 1: weight -1 is negative"), InputError);
  CHECK_THROWS_WITH_AS(analysis::read_weights(d2, write_input("filter4.w", "1\n0\n1\n0\n")),
                       doctest::Contains("weights of the samples inside the domain sum to 0"), InputError);
}

TEST_CASE("model_of throws InputError on a non-finite parameter instead of trapping") {
  const auto f = analysis::parse_family("two-state", 2);
  CHECK_NOTHROW(analysis::model_of(f, {1.0, 0.5, 2.0}));
  CHECK_THROWS_AS(analysis::model_of(f, {std::numeric_limits<double>::infinity(), 0.5, 2.0}), InputError);
  CHECK_THROWS_AS(analysis::model_of(f, {1.0, std::nan(""), 2.0}), InputError);
  CHECK_THROWS_AS(analysis::model_of(f, {1.0, 0.5}), InputError);
}

namespace {
// A three-state chain written by hand, transitions in no particular order:
// B->G a(H) = 1/2 + H/4, G->B b = 3, G->R c(H) = -1 + 2H (spike), R->B d = 5/4.
std::string three_state_json(const std::string& states, const std::string& b, const std::string& g,
                             const std::string& r, const std::string& extra = "") {
  return "{\"states\": [" + states + "], \"transitions\": [" +
         "{\"from\": \"" + r + "\", \"to\": \"" + b + "\", \"offset\": \"5/4\", \"slope\": \"0\", \"spike\": false}," +
         "{\"from\": \"" + g + "\", \"to\": \"" + r + "\", \"offset\": -1, \"slope\": 2, \"spike\": true}," +
         "{\"from\": \"" + b + "\", \"to\": \"" + g + "\", \"offset\": 0.5, \"slope\": 0.25, \"spike\": false}," +
         "{\"from\": \"" + g + "\", \"to\": \"" + b + "\", \"offset\": 3, \"slope\": 0, \"spike\": false}" + extra +
         "]}";
}
}  // namespace

TEST_CASE("theta_of: the parameters of a model file, by the family's names or by position") {
  const auto f = analysis::parse_family("three-state", 3);
  const auto params = analysis::family_parameters(f);
  // Expected by parameter name, independently of model_of's layout.
  auto expect = [&](const std::vector<double>& theta) {
    REQUIRE(theta.size() == params.size());
    const std::map<std::string, double> want = {{"a.p", 0.5}, {"a.s", 0.25}, {"b", 3.0},
                                                {"c.p", -1.0}, {"c.s", 2.0}, {"d", 1.25}};
    for (std::size_t i = 0; i < params.size(); ++i) {
      INFO(params[i].name);
      CHECK(theta[i] == want.at(params[i].name));
    }
  };
  const auto named = solvers::model_from_json_text(three_state_json("\"B\", \"G\", \"R\"", "B", "G", "R"), "named");
  expect(analysis::theta_of(f, named, "named"));
  // The family's names in another order: matched by name.
  const auto shuffled =
      solvers::model_from_json_text(three_state_json("\"R\", \"B\", \"G\"", "B", "G", "R"), "shuffled");
  expect(analysis::theta_of(f, shuffled, "shuffled"));
  // Other names: by position (X, Y, Z = B, G, R).
  const auto positional =
      solvers::model_from_json_text(three_state_json("\"X\", \"Y\", \"Z\"", "X", "Y", "Z"), "positional");
  expect(analysis::theta_of(f, positional, "positional"));

  auto rejects = [&](const analysis::FamilySpec& fam, const std::string& text, const std::string& needle) {
    const auto m = solvers::model_from_json_text(text, "bad.json");
    CHECK_THROWS_WITH_AS(analysis::theta_of(fam, m, "bad.json"), doctest::Contains(needle.c_str()), InputError);
    CHECK_THROWS_WITH_AS(analysis::theta_of(fam, m, "bad.json"), doctest::Contains("bad.json"), InputError);
  };
  const std::string bgr = "\"B\", \"G\", \"R\"";
  rejects(analysis::parse_family("two-state", 2), three_state_json(bgr, "B", "G", "R"), "the two-state family has 2");
  // Same states, other spikes: full-three-state spikes on G->B and R->B.
  rejects(analysis::parse_family("full-three-state", 3), three_state_json(bgr, "B", "G", "R"),
          "transition 'R' -> 'B' is a spike transition");
  rejects(f, three_state_json(bgr, "B", "G", "R",
                              ", {\"from\": \"R\", \"to\": \"G\", \"offset\": 1, \"slope\": 0, \"spike\": false}"),
          "transition 'R' -> 'G' is not in the three-state family");
  auto with_b_slope = three_state_json(bgr, "B", "G", "R");
  const std::string b_rate = "\"offset\": 3, \"slope\": 0";
  with_b_slope.replace(with_b_slope.find(b_rate), b_rate.size(), "\"offset\": 3, \"slope\": 1");
  rejects(f, with_b_slope, "its rate b is constant");
  // The reader refuses values beyond double range; a model built in code
  // can still hold one.
  auto huge = named;
  huge.transitions[2].offset = solvers::ExactValue(*solvers::parse_exact("1" + std::string(400, '0')));
  CHECK_THROWS_WITH_AS(analysis::theta_of(f, huge, "huge"), doctest::Contains("outside the range of a double"),
                       InputError);
}

TEST_CASE("theta_of inverts model_of for the general family; omitted transitions have rate 0") {
  const analysis::FamilySpec f{analysis::FitFamily::General, 4};
  std::vector<double> theta;
  for (std::size_t k = 0; k < analysis::parameter_count(f); ++k)
    theta.push_back(std::ldexp(static_cast<double>((k * 7919) % 1001) - 500.0, -7) + 1e-3 * static_cast<double>(k));
  const auto text = solvers::model_to_json(analysis::model_of(f, theta)).dump();
  const auto back = analysis::theta_of(f, solvers::model_from_json_text(text, "g4.json"), "g4.json");
  CHECK(back == theta);  // exact: each double is written as its exact rational
  // Only 1 -> 0 (spike) and 0 -> 1 given: every other rate 0.
  const std::string sparse =
      "{\"states\": [\"S0\", \"S1\", \"S2\", \"S3\"], \"transitions\": ["
      "{\"from\": \"S1\", \"to\": \"S0\", \"offset\": 2, \"slope\": 0, \"spike\": true},"
      "{\"from\": \"S0\", \"to\": \"S1\", \"offset\": 1, \"slope\": 0.5, \"spike\": false}]}";
  const auto t = analysis::theta_of(f, solvers::model_from_json_text(sparse, "sparse.json"), "sparse.json");
  const auto params = analysis::family_parameters(f);
  for (std::size_t i = 0; i < params.size(); ++i) {
    INFO(params[i].name);
    const double want = params[i].name == "0->1.p" ? 1.0 : params[i].name == "0->1.s" ? 0.5
                        : params[i].name == "1->0.p" ? 2.0 : 0.0;
    CHECK(t[i] == want);
  }
}

TEST_CASE("activation tables: strict rows, BOM, header only without digits") {
  auto rejects = [](const std::string& name, const std::string& body, const std::string& needle) {
    const auto path = write_input(name, body);
    try {
      activations::parse_activation("table:" + path);
      FAIL("accepted " << name);
    } catch (const InputError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(path + ": " + needle) != std::string::npos);
    }
  };
  rejects("junk.csv", "-5,0\n0,0xyz\n5,5\n", "row 2");
  rejects("junk3.csv", "-5,0\n0,0\n5,5 junk\n", "row 3");
  rejects("nan.csv", "nan,3\n0,0\n5,5\n", "row 1");
  rejects("semi.csv", "-5;3\n0,0\n5,5\n", "row 1");
  rejects("three.csv", "-5,0\n0,0,1\n5,5\n", "row 2");
  rejects("empty_field.csv", "-5,0\n0,\n5,5\n", "row 2");
  rejects("inf.csv", "-5,0\n0,inf\n5,5\n", "row 2");
  rejects("hex.csv", "-5,0\n0x1,0\n5,5\n", "row 2");
  // A BOM is stripped: the first row is then data, not a header.
  const auto bom = activations::parse_activation("table:" + write_input("bom.csv", "\xEF\xBB\xBF-5,3\n0,0\n5,5\n"));
  CHECK(bom.xs.size() == 3);
  CHECK(bom.ys[0] == 3);
  const auto hdr =
      activations::parse_activation("table:" + write_input("hdr.csv", "\xEF\xBB\xBF# c\r\nx, phi\r\n-1, 0\r\n 2 ,1.5\r\n"));
  CHECK(hdr.xs.size() == 2);
  CHECK(hdr.xs[1] == 2);
}

TEST_CASE("activation parameters: plain finite decimals in a sane range") {
  for (const char* bad : {"cliprelu_ 2", "cliprelu_2 ", "cliprelu_0x2", "cliprelu_1e-320", "cliprelu_inf",
                          "cliprelu_nan", "cliprelu_0", "cliprelu_-1", "cliprelu_1e7", "cliprelu_", "cliprelu_1e",
                          "sigmoid_shift_1e400", "sigmoid_shift_ 1", "sigmoid_shift_1e-300"}) {
    INFO(bad);
    CHECK_THROWS_AS(activations::parse_activation(bad), InputError);
  }
  CHECK(activations::parse_activation("cliprelu_2.5").param == 2.5);
  CHECK(activations::parse_activation("cliprelu_1e1").param == 10);
  CHECK(activations::parse_activation("sigmoid_shift_-1.5").param == -1.5);
  CHECK(activations::parse_activation("sigmoid_shift_0").param == 0);
}

TEST_CASE("fit rejects options it cannot honour before any solve") {
  analysis::FitTarget sigmoid;
  for (const auto& t : analysis::fit_table_targets())
    if (t.slug == "sigmoid") sigmoid = t;
  const auto p = analysis::make_fit_problem(sigmoid, {analysis::FitFamily::TwoState, 2}, 41);
  analysis::FitOptions o;
  o.starts = 2;
  o.basin_rounds = 0;
  o.widen_on_bound = false;
  o.mpfr_bits = 52;  // less than the double fit it re-evaluates
  CHECK_THROWS_WITH_AS(analysis::fit(p, o), "mpfr_bits: the MSE re-evaluation needs at least 53 MPFR bits, got 52",
                       InputError);
  o.mpfr_bits = 0;
  CHECK_THROWS_AS(analysis::fit(p, o), InputError);
  o.mpfr_bits = 53;
  CHECK(analysis::fit(p, o).mse > 0);  // the smallest precision allowed works
  o.starts = 0;
  CHECK_THROWS_WITH_AS(analysis::fit(p, o), "starts: need at least 1 start, got 0", InputError);
  o.starts = 2;
  o.warm_start = {1.0, 0.5};  // two-state has 3 parameters
  CHECK_THROWS_WITH_AS(analysis::fit(p, o), "fit: warm start has the wrong number of parameters", InputError);
  o.warm_start.clear();
  // A target scale whose square leaves the normal doubles: alpha = 1e300
  // failed as 'every start failed', alpha = 1e-300 reported an MSE of 0
  // (max |sigmoid| on [-6, 6] is 0.9975). 1e-99 and 1e99 still fit.
  for (const char* alpha : {"1e300", "1e-300"}) {
    auto q = p;
    q.alpha = *solvers::parse_exact(alpha);
    CHECK_THROWS_WITH_AS(analysis::fit(q, o), doctest::Contains("alpha: max |alpha * sigmoid| on the data is"),
                         InputError);
  }
  for (const char* alpha : {"1e99", "1e-99"}) {
    auto q = p;
    q.alpha = *solvers::parse_exact(alpha);
    const auto r = analysis::fit(q, o);
    CHECK(r.mse > 0);
    CHECK(std::isfinite(r.mse));
  }
}
