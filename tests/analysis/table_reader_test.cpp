// The table:FILE and --samples/--weights readers: bounded by a
// size cap naming the file, bad rows quoted short, and tables whose x (or
// phi) rows span more than a double's range interpolated right.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include "../test_temp_files.hpp"
#include "ctmc/activations/activation.hpp"
#include "ctmc/analysis/fit.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/scalar.hpp"

using namespace ctmc;

namespace {

std::string write_input(const std::string& name, const std::string& body) {
  return ctmc::testing::write_temp_file("table_reader_test_" + name, body);
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Independent reference: the two-point interpolation in long double, whose
// 15-bit exponent holds x1 - x0 = 2e308 (and y1 - y0) without overflow.
double reference(double x, double x0, double y0, double x1, double y1) {
  const long double t = (static_cast<long double>(x) - x0) / (static_cast<long double>(x1) - x0);
  return static_cast<double>(y0 + t * (static_cast<long double>(y1) - y0));
}

}  // namespace

TEST_CASE("a table with rows at -1e308 and 1e308 interpolates between them") {
  // Unscaled, x1 - x0 overflows to inf, t = 0 and phi would be 0 everywhere
  // (fit --score MSE 0.25 against a chain of flux 1/2).
  const double xs[] = {-1e308, -1e300, -1.5, 0.0, 1e-300, 0.75, 3e200, 9e307, 1e308};
  struct Case {
    const char* body;
    double x0, y0, x1, y1;
  };
  const Case cases[] = {{"x,phi\n-1e308,0\n1e308,1\n", -1e308, 0, 1e308, 1},
                        // phi rows spanning the whole range too
                        {"-1e308,-1e308\n1e308,1e308\n", -1e308, -1e308, 1e308, 1e308},
                        {"-1.7e308,1.7e308\n1.7e308,-1.7e308\n", -1.7e308, 1.7e308, 1.7e308, -1.7e308}};
  int k = 0;
  for (const auto& c : cases) {
    const auto a = activations::parse_activation("table:" + write_input("wide" + std::to_string(k++) + ".csv", c.body));
    for (double x : xs) {
      if (x < c.x0 || x > c.x1) continue;
      const double want = reference(x, c.x0, c.y0, c.x1, c.y1);
      const double got = a.eval(x);
      INFO("x = " << x << ", table " << c.body);
      // Within the rounding-error bound of y0 + t (y1 - y0) in double,
      // 4 eps (|y0| + |t (y1 - y0)|): tight where phi does not cancel
      // (1/2 at x = 0 in the first table), and it catches phi read as 0.
      const double scale = std::abs(c.y0) + std::abs(want - c.y0);
      CHECK(std::isfinite(got));
      CHECK(std::abs(got - want) <= 4 * std::numeric_limits<double>::epsilon() * scale);
      const double got_mp = static_cast<double>(a.eval(solvers::Mpfr(x)));
      CHECK(std::abs(got_mp - want) <= 4 * std::numeric_limits<double>::epsilon() * scale);
    }
  }
  // The first table at 0 is exactly 1/2.
  const auto half = activations::parse_activation("table:" + write_input("half.csv", "-1e308,0\n1e308,1\n"));
  CHECK(half.eval(0.0) == 0.5);
  CHECK(half.eval(-1.0) == doctest::Approx(0.5));
  // Ordinary rows are unchanged (no halving): exact at the knots and midpoints.
  const auto ok = activations::parse_activation("table:" + write_input("ok.csv", "-1,0\n0,0.5\n2,1.5\n"));
  CHECK(ok.eval(-0.5) == 0.25);
  CHECK(ok.eval(1.0) == 1.0);
}

TEST_CASE("a bad table row is quoted short, on one line") {
  // A 200 KB row made a 200 KB message.
  const auto path = write_input("long_row.csv", "x,phi\n0,0\n1," + std::string(200000, 'x') + "\n");
  const auto e = error_of([&] { activations::parse_activation("table:" + path); });
  CHECK(e == path + ": row 3: expected two finite numbers 'x,phi(x)', got '1," + std::string(55, 'x') + "...' (200002 bytes)");
  const auto ctl = write_input("ctl_row.csv", "0,0\n1,\x1b[2J\n");
  CHECK(error_of([&] { activations::parse_activation("table:" + ctl); }) == ctl + ": row 2: expected two finite numbers 'x,phi(x)', got '1,\\x1b[2J'");
}

TEST_CASE("table, samples and weights readers refuse /dev/zero before reading") {
  // Each read /dev/zero until memory ran out.
  if (!std::filesystem::exists("/dev/zero")) return;
  CHECK(error_of([] { activations::parse_activation("table:/dev/zero"); }) ==
        "/dev/zero: not a regular file (a character device); a device, pipe or socket is never read as input");
  CHECK(error_of([] { analysis::read_samples("/dev/zero"); }) ==
        "/dev/zero: not a regular file (a character device); a device, pipe or socket is never read as input");
  auto d = analysis::read_samples(write_input("s.txt", "0\n1\n"));
  CHECK(error_of([&] { analysis::read_weights(d, "/dev/zero"); }) ==
        "/dev/zero: not a regular file (a character device); a device, pipe or socket is never read as input");
}
