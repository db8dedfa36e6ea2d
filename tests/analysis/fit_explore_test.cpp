// The exploration subsample of a fit, the state exchanges of its chains, and
// the two-stage fit (exploration problem, then the full problem).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "ctmc/analysis/fit.hpp"
#include "fit/fit_internal.hpp"
#include "ctmc/analysis/fit_flux.hpp"
#include "ctmc/analysis/fit_tables.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/gth.hpp"
#include "fit_targets.hpp"

using namespace ctmc::analysis;
using ctmc::analysis::testing::table_target;
using ctmc::solvers::Rational;

TEST_CASE("exploration_data: every 4th point of a 401-point grid, carrying its neighbours' weights") {
  const auto g = make_grid(Rational(-6), Rational(6), 401);
  const auto e = exploration_data(g, 101);
  REQUIRE(e.h.size() == 101);
  REQUIRE(e.w.size() == 101);
  double total = 0;
  for (std::size_t j = 0; j < 101; ++j) {
    CHECK(e.h[j] == g.h[4 * j]);
    CHECK(e.h_exact[j] == g.h_exact[4 * j]);
    // Points 4j +- 1 are nearest to 4j; 4j +- 2 lie halfway and are shared.
    CHECK(e.w[j] == (j == 0 || j == 100 ? 2.5 : 4.0));
    total += e.w[j];
  }
  CHECK(total == 401.0);
  CHECK(e.lo == g.lo);
  CHECK(e.hi == g.hi);
  // At most max_points points, or max_points = 0: the data itself.
  CHECK(exploration_data(g, 401).h.size() == 401);
  CHECK(exploration_data(g, 0).h.size() == 401);
  CHECK(exploration_data(g, 401).w.empty());
  CHECK_THROWS_AS(exploration_data(g, 1), ctmc::InputError);
}

TEST_CASE("exploration_data: unsorted weighted samples keep their quantiles and total weight") {
  // Values 0..6 in shuffled order, weight v + 1. max_points 3: k = ceil(6 / 2)
  // = 3, representatives at sorted positions 0, 3, 6 (values 0, 3, 6);
  // position 1 is nearer 0, positions 2 and 4 nearer 3, position 5 nearer 6:
  // weights 1 + 2, 3 + 4 + 5, 6 + 7.
  FitData d;
  for (int v : {5, 1, 3, 0, 6, 2, 4}) {
    d.h.push_back(v);
    d.h_exact.push_back(Rational(v));
    d.w.push_back(v + 1.0);
  }
  d.lo = Rational(0);
  d.hi = Rational(6);
  const auto e = exploration_data(d, 3);
  REQUIRE(e.h.size() == 3);
  CHECK(e.h == std::vector<double>{0, 3, 6});
  CHECK(e.w == std::vector<double>{3, 12, 13});
}

namespace {

// The generator of the chain theta (every transition between n states,
// rectified affine, the family's parameter order) at H.
ctmc::solvers::DenseMatrix<double> generator(const std::vector<double>& theta, std::size_t n, double h) {
  ctmc::solvers::DenseMatrix<double> q(n);
  std::size_t t = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (i != j) {
        q(i, j) = std::max(0.0, theta[2 * t] + theta[2 * t + 1] * h);
        ++t;
      }
  return q;
}

// Flux into state k of the chain theta at H: pi from GTH on the generator,
// independent of the family's closed form, of exchange_states and of
// scale_state_exits.
double flux_into(const std::vector<double>& theta, std::size_t n, std::size_t k, double h) {
  const auto q = generator(theta, n, h);
  const auto pi = ctmc::solvers::gth_dense(q);
  double f = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (i != k) f += pi[i] * q(i, k);
  return f;
}

// The family with n states whose parameters are every transition's
// (offset, slope): full-three-state for n = 3, else general-n.
FamilySpec complete_graph_family(std::size_t n) {
  return n == 3 ? FamilySpec{FitFamily::FullThreeState, 3} : FamilySpec{FitFamily::General, n};
}

// A chain with every rate positive near H in [-1.5, 2]: offsets in
// [0.1, 2], slopes in [-0.2, 0.2].
std::vector<double> random_chain(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.1, 2.0), s(-0.2, 0.2);
  std::vector<double> theta(2 * n * (n - 1));
  for (std::size_t i = 0; i < theta.size(); i += 2) {
    theta[i] = u(rng);
    theta[i + 1] = s(rng);
  }
  return theta;
}
}  // namespace

TEST_CASE("exchange_states: the exchanged chain's spike flux is the original's flux into state k") {
  std::mt19937_64 rng(7);
  for (std::size_t n : {3, 4, 5}) {
    const FamilySpec f = complete_graph_family(n);
    const auto theta = random_chain(n, rng);
    for (std::size_t k = 1; k < n; ++k) {
      const auto x = exchange_states(theta, n, k);
      CHECK(exchange_states(x, n, k) == theta);  // an involution
      for (double h : {-1.5, 0.0, 0.7, 2.0}) {
        const double ours = family_flux<double>(f, x.data(), h);
        const double ref = flux_into(theta, n, k, h);
        CHECK(std::abs(ours - ref) <= 1e-13 * std::abs(ref));
      }
    }
  }
  CHECK_THROWS_AS(exchange_states(std::vector<double>(12), 3, 0), ctmc::InputError);
  CHECK_THROWS_AS(exchange_states(std::vector<double>(12), 3, 3), ctmc::InputError);
  CHECK_THROWS_AS(exchange_states(std::vector<double>(10), 3, 1), ctmc::InputError);
}

TEST_CASE("scale_state_exits: only the scaled state's occupation changes, F' = F / (1 + pi_k (1/f - 1))") {
  // Reference: pi from GTH on the unscaled generator (flux_into), the
  // scaled chain's flux from the family's own formula (closed form for
  // n = 3, GTH adjoint path for general-n).
  std::mt19937_64 rng(11);
  for (std::size_t n : {3, 4, 5}) {
    const FamilySpec f = complete_graph_family(n);
    const auto theta = random_chain(n, rng);
    for (double h : {-1.5, 0.0, 0.7, 2.0}) {
      const auto pi = ctmc::solvers::gth_dense(generator(theta, n, h));
      const double flux = flux_into(theta, n, 0, h);
      for (std::size_t k = 0; k < n; ++k)
        for (double factor : {0.1, 3.0, 1000.0}) {
          const auto x = scale_state_exits(theta, n, k, factor);
          const double ours = family_flux<double>(f, x.data(), h);
          const double ref = flux / (1 + pi[k] * (1 / factor - 1));
          CHECK(std::abs(ours - ref) <= 1e-13 * std::abs(ref));
        }
      // Every state's exits x f: time runs f times faster, F' = f F.
      auto all = theta;
      for (std::size_t k = 0; k < n; ++k) all = scale_state_exits(all, n, k, 2.5);
      CHECK(std::abs(family_flux<double>(f, all.data(), h) - 2.5 * flux) <= 1e-13 * flux);
    }
  }
  CHECK_THROWS_AS(scale_state_exits(std::vector<double>(12), 3, 3, 2.0), ctmc::InputError);
  CHECK_THROWS_AS(scale_state_exits(std::vector<double>(12), 3, 1, 0.0), ctmc::InputError);
  CHECK_THROWS_AS(scale_state_exits(std::vector<double>(12), 3, 1, std::nan("")), ctmc::InputError);
  CHECK_THROWS_AS(scale_state_exits(std::vector<double>(10), 3, 1, 2.0), ctmc::InputError);
}

TEST_CASE("split_state: the split chain lumps to the original; pi_k is shared and the spike flux kept") {
  // Reference: GTH on the unsplit generator. The split chain's flux and pi
  // from its own generator (and its family's formula, closed form for
  // n + 1 = 3).
  std::mt19937_64 rng(13);
  for (std::size_t n : {2, 3, 4}) {
    const auto theta = random_chain(n, rng);
    for (std::size_t k = 1; k < n; ++k)
      for (double share : {0.5, 0.2}) {
        const auto x = split_state(theta, n, k, share, 0.7);
        REQUIRE(x.size() == 2 * (n + 1) * n);
        for (double h : {-1.5, 0.0, 0.7, 2.0}) {
          const auto pi = ctmc::solvers::gth_dense(generator(theta, n, h));
          const auto pis = ctmc::solvers::gth_dense(generator(x, n + 1, h));
          for (std::size_t i = 0; i < n; ++i)
            if (i != k) CHECK(std::abs(pis[i] - pi[i]) <= 1e-14);
          CHECK(std::abs(pis[k] + pis[n] - pi[k]) <= 1e-14);
          const double ref = flux_into(theta, n, 0, h);
          CHECK(std::abs(flux_into(x, n + 1, 0, h) - ref) <= 1e-13 * ref);
          if (n + 1 >= 3)
            CHECK(std::abs(family_flux<double>(complete_graph_family(n + 1), x.data(), h) - ref) <= 1e-13 * ref);
        }
      }
  }
  CHECK_THROWS_AS(split_state(std::vector<double>(12), 3, 0, 0.5, 1.0), ctmc::InputError);
  CHECK_THROWS_AS(split_state(std::vector<double>(12), 3, 3, 0.5, 1.0), ctmc::InputError);
  CHECK_THROWS_AS(split_state(std::vector<double>(12), 3, 1, 1.0, 1.0), ctmc::InputError);
  CHECK_THROWS_AS(split_state(std::vector<double>(12), 3, 1, 0.5, 0.0), ctmc::InputError);
  CHECK_THROWS_AS(split_state(std::vector<double>(12), 3, 1, 0.5, std::nan("")), ctmc::InputError);
  CHECK_THROWS_AS(split_state(std::vector<double>(10), 3, 1, 0.5, 1.0), ctmc::InputError);
}

TEST_CASE("two-stage fit: the result is a minimum of the full problem, never worse than its warm start") {
  FitOptions o;
  o.threads = 2;
  o.starts = 16;
  o.widen_on_bound = false;
  // Three-state sigmoid: explored on 101 points, reported on 401.
  const auto p = make_fit_problem(table_target("sigmoid"), {FitFamily::ThreeState, 3});
  const auto r = fit(p, o);
  CHECK(r.explore_points == 101);
  CHECK(r.model.meta.at("exploration_points") == 101);
  CHECK(r.mse == doctest::Approx(mse_double(p, r.theta)).epsilon(1e-10));
  // Polishing the reported fit on the full problem does not lower it: it is
  // a minimum there, not the exploration grid's.
  FitOptions again = o;
  again.starts = 1;
  again.basin_rounds = 0;
  again.explore_points = 0;
  again.warm_start = r.theta;
  const auto polished = fit(p, again);
  CHECK(polished.mse >= r.mse * (1 - 1e-6));
  // A warm start is a candidate on the full problem as given: the fit from
  // it is never worse, even when the exploration's minima are.
  FitOptions warm = o;
  warm.basin_rounds = 0;
  warm.starts = 2;
  warm.warm_start = r.theta;
  CHECK(fit(p, warm).mse <= r.mse * (1 + 1e-12));
  // ReLU full-three-state (the report's row): exact on the full grid,
  // although exact fits on 101 points can leave every rate 0 at full-grid
  // points between them (no closed class: the flux is undefined there).
  FitOptions relu_options = o;
  relu_options.starts = 64;
  const auto relu = fit(make_fit_problem(table_target("relu"), {FitFamily::FullThreeState, 3}), relu_options);
  CHECK(relu.mse < 1e-25);
  // The general family explores on the subsample too, and ends within 0.1%
  // of a minimum of the full problem: repolished there while that improves.
  // Seed 5 of these 4 starts and 1 round is an instance where that matters:
  // without the repolishes the fit ends at 2.2827e-8, 0.9% above where a
  // further polish goes; with them at 1.4422e-8, which a polish keeps. The
  // further polish runs without time-scale moves: those leave a minimum for
  // another (their own test below), and stop after kTimeScaleRounds rounds,
  // so a refit with them can go on where the fit's own rounds stopped
  // (seed 1: 1.7794e-8 after 4 rounds, 1.6831e-8 after 4 more).
  FitOptions g = o;
  g.starts = 4;
  g.basin_rounds = 1;
  g.seed = 5;
  const auto pg = make_fit_problem(table_target("sigmoid"), {FitFamily::General, 4});
  auto polished_from = [&](const FitResult& r) {
    FitOptions polish = again;
    polish.time_scale_moves = false;
    polish.warm_start = r.theta;
    return fit(pg, polish).mse;
  };
  const auto gen = fit(pg, g);
  CHECK(gen.explore_points == 101);
  CHECK(polished_from(gen) >= gen.mse * (1 - 1e-3));
  FitOptions no_repolish = g;
  no_repolish.general_repolish = 0;
  const auto crawling = fit(pg, no_repolish);
  CHECK(polished_from(crawling) < crawling.mse * (1 - 1e-3));  // the instance needs the repolishes
  MESSAGE("general-4, seed 5: ", crawling.mse, " without the repolishes, ", gen.mse, " with them");
}

TEST_CASE("slow_fast_rates: the fast rates share one factor that brings the fastest to the target, kinks kept") {
  const FamilySpec f{FitFamily::FullThreeState, 3};
  const auto params = family_parameters(f);
  const double lo = -2, hi = 3;
  // Rates BG, BR, GB, GR, RB, RG: (p, s). GB peaks at 2000 (at hi), RG at
  // 500 (at lo), the others below 100.
  const std::vector<double> theta = {0.5, 0.1, 1.0, -0.2, -400.0, 800.0, 3.0, 1.0, 0.2, 0.0, 100.0, -200.0};
  const auto out = slow_fast_rates(params, theta, lo, hi, 100.0, 4.0);
  REQUIRE(out.size() == theta.size());
  const double factor = 4.0 / 2000.0;
  for (std::size_t i : {4, 5, 10, 11}) CHECK(out[i] == doctest::Approx(theta[i] * factor).epsilon(1e-15));
  for (std::size_t i : {0, 1, 2, 3, 6, 7, 8, 9}) CHECK(out[i] == theta[i]);
  CHECK(std::max(out[4] + out[5] * lo, out[4] + out[5] * hi) == doctest::Approx(4.0).epsilon(1e-15));
  CHECK(-out[4] / out[5] == doctest::Approx(-theta[4] / theta[5]).epsilon(1e-15));  // kink H0 = 0.5
  CHECK(-out[10] / out[11] == doctest::Approx(-theta[10] / theta[11]).epsilon(1e-15));
  // Nothing above `fast`: unchanged.
  CHECK(slow_fast_rates(params, theta, lo, hi, 5000.0, 4.0) == theta);
  CHECK_THROWS_AS(slow_fast_rates(params, std::vector<double>(10), lo, hi, 100.0, 4.0), ctmc::InputError);
  CHECK_THROWS_AS(slow_fast_rates(params, theta, lo, hi, 100.0, 0.0), ctmc::InputError);
  CHECK_THROWS_AS(slow_fast_rates(params, theta, lo, hi, std::nan(""), 4.0), ctmc::InputError);
  CHECK_THROWS_AS(slow_fast_rates(params, theta, hi, lo, 100.0, 4.0), ctmc::InputError);
}

TEST_CASE("fast_rate_headroom: the common speed-up of the fast rates that keeps their parameters within bounds") {
  const FamilySpec f{FitFamily::FullThreeState, 3};
  const auto params = family_parameters(f);
  const double lo = -2, hi = 3;
  // As above: GB = -400 + 800 H and RG = 100 - 200 H are the fast rates.
  std::vector<double> theta = {0.5, 0.1, 1.0, -0.2, -400.0, 800.0, 3.0, 1.0, 0.2, 0.0, 100.0, -200.0};
  FitBounds b;  // offsets and slopes in [-1000, 1000]
  // Limits 1000/800 (GB.s), -1000/-400 (GB.p), 1000/100, -1000/-200: the
  // smallest, 1.25, is the headroom; the slow rates (BR.p = 1) do not count.
  CHECK(fast_rate_headroom(params, theta, lo, hi, 100.0, b) == 1.25);
  b.widen = 10;
  CHECK(fast_rate_headroom(params, theta, lo, hi, 100.0, b) == 12.5);
  CHECK(fast_rate_headroom(params, theta, lo, hi, 5000.0, b) == 1.0);  // no fast rate
  theta[5] = 1000;  // GB.s on its bound
  CHECK(fast_rate_headroom(params, theta, lo, hi, 100.0, FitBounds{}) == 1.0);
  CHECK_THROWS_AS(fast_rate_headroom(params, std::vector<double>(10), lo, hi, 100.0, b), ctmc::InputError);
}

namespace {
// One start at `warm`, no chains or time-scale moves (the full-problem
// stages still run), no widened refits: what the fit does from a known point.
FitOptions from_warm_start(const std::vector<double>& warm) {
  FitOptions o;
  o.threads = 2;
  o.starts = 1;
  o.basin_rounds = 0;
  o.widen_on_bound = false;
  o.time_scale_moves = false;
  o.warm_start = warm;
  return o;
}

// Optimality within the bounds, checked by evaluation alone: the largest
// relative MSE decrease (mse_double, an evaluation independent of the
// optimizer) found by moving one parameter at a time by +-kProbeStep x
// max(|theta_i|, 1) while staying within the bounds. At a strict local
// minimum every such move raises the MSE. Fits that end in the nearly flat
// valleys of fast rates keep up to ~3e-8 of such decrease (Levenberg-Marquardt
// stops when a step gains less than 1e-14, polish_tolerance, which ends a
// crawl along the valley), so kDescentTol allows 1e-6: far below the 1e-3
// and larger gains between the minima these tests compare, which polishing
// therefore cannot produce.
constexpr double kProbeStep = 1e-4;
constexpr double kDescentTol = 1e-6;

double coordinate_descent(const FitProblem& p, const std::vector<double>& theta) {
  const auto params = family_parameters(p.family);
  const double at = mse_double(p, theta);
  double best = 0;
  for (std::size_t i = 0; i < theta.size(); ++i)
    for (double sign : {-1.0, 1.0}) {
      auto x = theta;
      x[i] += sign * kProbeStep * std::max(std::abs(theta[i]), 1.0);
      if (x[i] < p.bounds.lower(params[i].kind) || x[i] > p.bounds.upper(params[i].kind)) continue;
      best = std::max(best, (at - mse_double(p, x)) / at);
    }
  return best;
}

// The largest rate of the chain theta (the family's (offset, slope) pairs)
// on [lo, hi]: at an end of the domain, rates being affine before rectifying.
double peak_rate(const std::vector<double>& theta, std::size_t offset, double lo, double hi) {
  return std::max({0.0, theta[offset] + theta[offset + 1] * lo, theta[offset] + theta[offset + 1] * hi});
}
double max_rate(const std::vector<double>& theta, double lo, double hi) {
  double m = 0;
  for (std::size_t k = 0; k < theta.size(); k += 2) m = std::max(m, peak_rate(theta, k, lo, hi));
  return m;
}
}  // namespace

TEST_CASE("fit: speeding up a loop relay's fast rates to the bound, where Levenberg-Marquardt stalls") {
  const auto p = make_fit_problem(table_target("softplus_x_1_14"), {FitFamily::FullThreeState, 3});
  const double lo = -26, hi = 14;  // the report's domain for this target
  REQUIRE(p.data.lo == Rational(lo));
  REQUIRE(p.data.hi == Rational(hi));
  // A start (rates BG, BR, GB, GR, RB, RG: (offset, slope)) where G relays
  // B -> G -> B spikes (BG = H/14 for H > 0) with GB and GR fast: their
  // common speed is a nearly flat direction that descends to the bound
  // (GR.s -> -1000). The start is a test input (where the fitter stopped at
  // seed 18 without the speed-up); the premises the test relies on are
  // checked, not assumed.
  const std::vector<double> loop = {0.000520696585, 0.0714283743, 0.0811566883, -0.0175835261,
                                    403.060965,     74.3231147,   -38.7655646,  -834.265168,
                                    -0.0412969041,  0.0327281704, 0.120209211,  0.0223336233};
  REQUIRE(peak_rate(loop, 4, lo, hi) > kFastRate);  // GB and GR fast
  REQUIRE(peak_rate(loop, 6, lo, hi) > kFastRate);
  FitOptions o = from_warm_start(loop);
  o.rescale_relays = false;
  const auto stalls = fit(p, o);
  CHECK(stalls.mse <= mse_double(p, loop) * (1 + 1e-9));  // never worse than its start
  CHECK(stalls.on_bound.empty());
  // Levenberg-Marquardt has stopped: no single-parameter move gains more
  // than kDescentTol here, while the speed-up to the bound gains 1e-3 and more.
  CHECK(coordinate_descent(p, stalls.theta) <= kDescentTol);
  o.rescale_relays = true;
  const auto sped = fit(p, o);
  CHECK(sped.relay_speedups == 1);
  CHECK(sped.relay_slowdowns == 0);
  CHECK(sped.mse < stalls.mse * (1 - 1e-3));
  REQUIRE(sped.on_bound.size() == 1);
  CHECK(sped.on_bound[0] == "GR.s=-1000 (lower bound)");
  CHECK(sped.model.meta.at("relay_speedups") == 1);
  // The sped-up fit is a minimum within the bounds, and its MSE (MPFR) is
  // that of its parameters (double).
  CHECK(coordinate_descent(p, sped.theta) <= kDescentTol);
  CHECK(sped.mse == doctest::Approx(mse_double(p, sped.theta)).epsilon(1e-9));
  MESSAGE("loop relay ", stalls.mse, " -> ", sped.mse, "; descent at the stall ", coordinate_descent(p, stalls.theta),
          ", at the bound ", coordinate_descent(p, sped.theta));
}

TEST_CASE("fit: slowing the fast rates bridges softplus x 1/14's fast-relay minimum to a slow one") {
  const auto p = make_fit_problem(table_target("softplus_x_1_14"), {FitFamily::FullThreeState, 3});
  const double lo = -26, hi = 14;
  REQUIRE(p.data.lo == Rational(lo));
  REQUIRE(p.data.hi == Rational(hi));
  // A start in a "fast relay" minimum: state G a fast relay (GB 1012, GR 345
  // and RG 6929 at their peaks; the report's row at seed 1 without the
  // bridge). The start is a test input; the test checks that the fit without
  // the bridge stays in a minimum there.
  const std::vector<double> relay = {-0.016242400595471544, 0.1273162358857429, 0.081820206605662221,
                                     -0.022160254705922831, -56.376062267769484, 76.298285417428801,
                                     100.89844722142175,    17.448458599788751, 0.1567117714497587,
                                     0.030783684385679744,  22.61098247036287,  -265.649121547172};
  REQUIRE(max_rate(relay, lo, hi) > 10 * kFastRate);
  FitOptions o = from_warm_start(relay);
  o.rescale_relays = false;
  const auto stays = fit(p, o);
  CHECK(stays.relay_slowdowns == 0);
  CHECK(stays.mse <= mse_double(p, relay) * (1 + 1e-9));
  CHECK(max_rate(stays.theta, lo, hi) > kFastRate);          // still a fast relay
  CHECK(coordinate_descent(p, stays.theta) <= kDescentTol);  // and a minimum: polishing cannot leave it
  o.rescale_relays = true;
  const auto bridged = fit(p, o);
  CHECK(bridged.relay_slowdowns == 1);
  CHECK(bridged.model.meta.at("relay_slowdowns") == 1);
  // Another, lower minimum, whose rates are slow.
  CHECK(bridged.mse < stays.mse * (1 - 1e-3));
  CHECK(max_rate(bridged.theta, lo, hi) <= kFastRate);
  CHECK(coordinate_descent(p, bridged.theta) <= kDescentTol);
  CHECK(bridged.mse == doctest::Approx(mse_double(p, bridged.theta)).epsilon(1e-9));
  MESSAGE("relay minimum ", stays.mse, " (fastest rate ", max_rate(stays.theta, lo, hi), ") -> ", bridged.mse,
          " (fastest rate ", max_rate(bridged.theta, lo, hi), ")");
}

TEST_CASE("fit: time-scale moves carry a general fit out of its minimum to a lower one") {
  // Sigmoid general-4 from 4 starts and 1 basin round (the two-stage test's
  // general fit, seed 1) ends in a minimum of the full problem before the
  // time-scale moves (4.7982e-8; no polish improves it). Scaling a state's
  // exits crosses to a lower minimum (1.7794e-8 in 4 moves). Which candidate
  // polishes into the better funnel depends on the exact point, so the
  // instance is one where that happens: the report's softplus
  // full-three-state row reaches its lower funnel (1.0054e-5) without the
  // move at seed 1, and the move finds no lower one at seeds 2-8 (1.1205e-5,
  // 1.1216e-5, 1.4720e-5).
  const auto p = make_fit_problem(table_target("sigmoid"), {FitFamily::General, 4});
  FitOptions o;
  o.threads = 2;
  o.starts = 4;
  o.basin_rounds = 1;
  o.widen_on_bound = false;
  o.time_scale_moves = false;
  const auto before = fit(p, o);
  CHECK(before.time_scale_moves == 0);
  CHECK(coordinate_descent(p, before.theta) <= kDescentTol);  // a minimum: no polish improves it
  o.time_scale_moves = true;
  const auto moved = fit(p, o);
  CHECK(moved.time_scale_moves >= 1);
  CHECK(moved.model.meta.at("time_scale_moves") == moved.time_scale_moves);
  CHECK(moved.mse < before.mse * (1 - 1e-3));  // a different, lower minimum
  CHECK(coordinate_descent(p, moved.theta) <= kDescentTol);
  CHECK(moved.mse == doctest::Approx(mse_double(p, moved.theta)).epsilon(1e-9));
  MESSAGE("time-scale moves: ", before.mse, " -> ", moved.mse, " in ", moved.time_scale_moves, " moves");
}

namespace {
// A full-three-state chain (rates BG, BR, GB, GR, RB, RG: (offset, slope))
// whose BG has its kink at H = -7/5 to the last bit: BG's offset is the
// largest double <= 7/5 x its slope, so the exact rate at H = -7/5 is <= 0,
// and the slope is chosen so that the rate evaluated in double at
// double(-1.4) is > 0. At H = -7/5, G has no exits (GB, GR <= 0) and R no
// rate into G (RG <= 0): the exact chain has closed classes {B, R} and {G}.
// At every other grid point of [-26, 14] (step 1/10) one class is closed.
std::vector<double> kink_on_point(double h_double) {
  for (double slope = 10.5; slope < 10.6; slope = std::nextafter(slope, 11.0)) {
    double offset = std::nextafter(1.4 * slope, 1e300);
    while (Rational(offset) - Rational(7, 5) * Rational(slope) > 0) offset = std::nextafter(offset, -1e300);
    if (offset + slope * h_double > 0)
      return {offset, slope, 4.3, -0.37, 0.07, 0.065, -0.025, -0.0011, 0.026, 0.012, -0.0065, -0.0045};
  }
  throw std::runtime_error("no slope in [10.5, 10.6) puts BG's kink on H = -7/5 to the last bit");
}
}  // namespace

TEST_CASE("nudge_kinks_off_points: a kink on a data point to the last bit leaves the exact chain as the optimizer saw it") {
  // BG = p + s H positive at the grid point H = -1.4 by rounding in double
  // (G reachable) but 0 at the exact H = -7/5 (kink_on_point).
  const auto p = make_fit_problem(table_target("softplus_x_1_14"), {FitFamily::FullThreeState, 3});
  const std::size_t at = 246;  // H = -26 + 0.1 * 246 = -1.4
  REQUIRE(p.data.h_exact[at] == Rational(-7, 5));
  const auto theta = kink_on_point(p.data.h[at]);
  const auto params = family_parameters(p.family);
  REQUIRE(theta[0] + theta[1] * p.data.h[at] > 0);
  REQUIRE(!(Rational(theta[0]) + Rational(theta[1]) * p.data.h_exact[at] > 0));
  CHECK_THROWS_AS(evaluate_exactly(model_of(p.family, theta), p, 128), ctmc::InputError);

  const auto nudged = nudge_kinks_off_points(params, theta, p.data, p.bounds);
  CHECK(nudged[0] > theta[0]);
  CHECK(nudged[0] - theta[0] <= 64 * (std::nextafter(theta[0], 1e300) - theta[0]));  // a few ulps
  for (std::size_t i = 1; i < theta.size(); ++i) CHECK(nudged[i] == theta[i]);
  CHECK(Rational(nudged[0]) + Rational(nudged[1]) * p.data.h_exact[at] > 0);
  // The exact model now evaluates, to the double MSE of the same chain.
  const auto exact = evaluate_exactly(model_of(p.family, nudged), p, 128);
  CHECK(exact.mse == doctest::Approx(mse_double(p, theta)).epsilon(1e-9));
  // A theta with no such kink is returned unchanged.
  auto away = theta;
  away[0] += 0.05;
  CHECK(nudge_kinks_off_points(params, away, p.data, p.bounds) == away);
}
