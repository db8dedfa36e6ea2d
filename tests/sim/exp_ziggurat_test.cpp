// The ziggurat's unit exponentials (exp_ziggurat.hpp) against the Exp(1)
// law: its tables close (the last layer has the common area V), and 10^6
// variates pass a one-sample Kolmogorov-Smirnov test against 1 - e^-x at
// alpha = 1e-5 (critical distance 2.47 / sqrt(n) = 0.0025; a true CDF gap of
// (2.47 + 2.33 / 2) / sqrt(n) = 0.0036 is detected with probability >= 0.99)
// and z-tests (4.4 standard errors) of the mean, the variance and the tail
// beyond R (the base layer's tail branch) and beyond the last layer edges;
// the same for the method on 32-bit words (sample32, the fast kernel's).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "exp_ziggurat.hpp"  // sim/src (internal)

using ctmc::sim::ExpZiggurat;

TEST_CASE("ziggurat tables close: every layer has area V, the last one ends at x = 0") {
  const ExpZiggurat& z = ExpZiggurat::get();
  CHECK(z.x(1) == ExpZiggurat::kR);
  CHECK(z.x(0) * std::exp(-ExpZiggurat::kR) == doctest::Approx(ExpZiggurat::kV).epsilon(1e-12));
  // Base layer: rectangle R e^-R plus the tail e^-R.
  CHECK((ExpZiggurat::kR + 1) * std::exp(-ExpZiggurat::kR) == doctest::Approx(ExpZiggurat::kV).epsilon(1e-9));
  for (std::size_t i = 1; i < 255; ++i) CHECK(z.x(i + 1) < z.x(i));
  CHECK(z.x(255) * (1 - std::exp(-z.x(255))) == doctest::Approx(ExpZiggurat::kV).epsilon(1e-6));
}

namespace {

// The checks of one method's variates x (n of them) against Exp(1).
void check_exp1_law(std::vector<double> x) {
  const ExpZiggurat& z = ExpZiggurat::get();
  const std::size_t n = x.size();
  std::sort(x.begin(), x.end());
  double d = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double F = -std::expm1(-x[i]);
    d = std::max({d, std::abs(F - static_cast<double>(i) / n), std::abs(F - static_cast<double>(i + 1) / n)});
  }
  CHECK(x.front() >= 0);
  CHECK(d < 2.47 / std::sqrt(static_cast<double>(n)));
  double m = 0, m2 = 0;
  for (double v : x) {
    m += v;
    m2 += v * v;
  }
  m /= n;
  m2 /= n;
  // Exp(1): mean 1 (sd 1), E X^2 = 2 (sd of X^2 is sqrt(24 - 4) = sqrt 20).
  CHECK(std::abs(m - 1) < 4.4 / std::sqrt(static_cast<double>(n)));
  CHECK(std::abs(m2 - 2) < 4.4 * std::sqrt(20.0 / n));
  for (double edge : {ExpZiggurat::kR, 3.0, z.x(200), z.x(254)}) {
    CAPTURE(edge);
    const double p = std::exp(-edge);
    const double beyond = static_cast<double>(x.end() - std::upper_bound(x.begin(), x.end(), edge));
    CHECK(std::abs(beyond - n * p) < 4.4 * std::sqrt(n * p * (1 - p)));
  }
}

}  // namespace

TEST_CASE("ziggurat variates have the Exp(1) law") {
  const ExpZiggurat& z = ExpZiggurat::get();
  std::mt19937_64 g(2024);
  std::vector<double> x(1000000);
  for (double& v : x) v = z.sample([&] { return g(); });
  check_exp1_law(std::move(x));
}

TEST_CASE("ziggurat variates from 32-bit words have the Exp(1) law") {
  const ExpZiggurat& z = ExpZiggurat::get();
  std::mt19937 g(2025);  // 32-bit words
  std::vector<double> x(1000000);
  for (double& v : x) v = z.sample32([&] { return static_cast<std::uint32_t>(g()); });
  check_exp1_law(std::move(x));
}
