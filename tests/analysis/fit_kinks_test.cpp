// Kink hopping (analysis/src/fit/moves/kink_hop.cpp) and the rounding-floor rule for widened refits.
#include <doctest/doctest.h>

#include <cmath>

#include "ctmc/analysis/fit.hpp"
#include "fit/fit_internal.hpp"
#include "fit_targets.hpp"
#include "ctmc/analysis/fit_tables.hpp"

using namespace ctmc::analysis;
using ctmc::analysis::testing::table_target;

namespace {
// A stage of the fit switched off, then on with 1 and with 2 threads (same
// options otherwise): the three results the stage tests compare.
struct OffOn {
  FitResult off, on1, on2;
};
template <class SwitchOn>
OffOn off_and_on(const FitProblem& p, FitOptions o, SwitchOn switch_on) {
  OffOn r;
  r.off = fit(p, o);
  switch_on(o);
  o.threads = 1;
  r.on1 = fit(p, o);
  o.threads = 2;
  r.on2 = fit(p, o);
  return r;
}
}  // namespace

TEST_CASE("kink hopping never worsens a fit, and is identical for any thread count") {
  // cliprelu_1 with two states: the kink of a(H) = max(0, p + s H) sits between
  // two grid points; the neighbouring placements are separate smooth pieces.
  const auto p = make_fit_problem(table_target("cliprelu_1"), {FitFamily::TwoState, 2});
  FitOptions o;
  o.starts = 16;
  o.seed = 7;
  o.widen_on_bound = false;
  o.kink_hops = false;
  const auto [plain, hop1, hop2] = off_and_on(p, o, [](FitOptions& x) { x.kink_hops = true; });
  CHECK(hop1.mse <= plain.mse * (1 + 1e-12));
  CHECK(hop1.theta == hop2.theta);
  CHECK(hop1.kink_hops == hop2.kink_hops);
  // The MSE reported is that of the returned parameters (independent double
  // evaluation), and the hopped start counts towards the within-1% figure.
  CHECK(std::abs(mse_double(p, hop1.theta) - hop1.mse) <= 1e-9 * hop1.mse);
  CHECK(hop1.within_1pct >= 1);
}

TEST_CASE("widened refits are skipped only at the rounding floor") {
  // ReLU with two states: the best fit sits on the rate bound and its MSE
  // (~3e-6) is far above the floor, so both widened refits run.
  const auto p = make_fit_problem(table_target("relu"), {FitFamily::TwoState, 2});
  FitOptions o;
  o.starts = 8;
  const auto r = fit(p, o);
  REQUIRE_FALSE(r.on_bound.empty());
  CHECK_FALSE(r.mse_at_rounding_floor);
  CHECK(r.widened.size() == 2);
  // Warm-started from the bounded optimum: wider bounds can only lower the MSE.
  for (const auto& w : r.widened) CHECK(w.mse <= r.mse * (1 + 1e-9));
}

TEST_CASE("basin hopping never worsens a fit, and is identical for any thread count") {
  // softplus with the full three-state family: many local minima.
  const auto p = make_fit_problem(table_target("softplus"), {FitFamily::FullThreeState, 3});
  FitOptions o;
  o.starts = 8;
  o.seed = 3;
  o.widen_on_bound = false;
  o.basin_rounds = 0;
  const auto [plain, hop1, hop2] = off_and_on(p, o, [](FitOptions& x) {
    x.basin_rounds = 2;
    x.basin_chains = 2;
  });
  CHECK(plain.basin_hops == 0);
  CHECK(hop1.mse <= plain.mse * (1 + 1e-12));
  CHECK(hop1.theta == hop2.theta);
  CHECK(hop1.basin_hops == hop2.basin_hops);
  CHECK(std::abs(mse_double(p, hop1.theta) - hop1.mse) <= 1e-9 * hop1.mse);
}

TEST_CASE("the local phase never worsens a fit, and is identical for any thread count") {
  const auto p = make_fit_problem(table_target("softplus"), {FitFamily::FullThreeState, 3});
  FitOptions o;
  o.starts = 8;
  o.seed = 1;  // a start set where the chain's end is not the best minimum nearby
  o.widen_on_bound = false;
  o.basin_rounds = 1;
  o.local_rounds = 0;
  const auto [chains_only, local1, local2] = off_and_on(p, o, [](FitOptions& x) { x.local_rounds = 6; });
  CHECK(chains_only.local_hops == 0);
  // Same starts and chains (its streams follow theirs), then only improvements.
  CHECK(local1.basin_hops == chains_only.basin_hops);
  CHECK(local1.mse <= chains_only.mse * (1 + 1e-12));
  CHECK(local1.theta == local2.theta);
  CHECK(local1.local_hops == local2.local_hops);
  CHECK(local1.local_hops >= 1);  // the acceptance path is exercised
  MESSAGE("local phase: ", local1.local_hops, " moves accepted, MSE ", chains_only.mse, " -> ", local1.mse);
}

TEST_CASE("an exact warm start skips the random starts; an inexact one does not") {
  // cliprelu_2 is fitted exactly by full-three-state; embedded into general-4
  // it is still exact, so general-4 keeps it without random starts.
  const auto full = fit(make_fit_problem(table_target("cliprelu_2"), {FitFamily::FullThreeState, 3}), FitOptions{});
  REQUIRE(full.mse_at_rounding_floor);
  FitOptions o;
  o.starts = 8;
  o.warm_start = embed_general(full.theta, 3);
  const auto g4 = fit(make_fit_problem(table_target("cliprelu_2"), {FitFamily::General, 4}), o);
  CHECK(g4.exact_warm_start);
  CHECK(g4.starts_run == 1);
  CHECK(g4.mse_at_rounding_floor);
  CHECK(g4.mse <= full.mse * 2 + 1e-30);
  // sigmoid is not fitted exactly by full-three-state: all starts run.
  const auto fs = fit(make_fit_problem(table_target("sigmoid"), {FitFamily::FullThreeState, 3}), o = FitOptions{.starts = 8});
  o.warm_start = embed_general(fs.theta, 3);
  const auto s4 = fit(make_fit_problem(table_target("sigmoid"), {FitFamily::General, 4}), o);
  CHECK_FALSE(s4.exact_warm_start);
  CHECK(s4.starts_run == 8);
  CHECK(s4.mse <= fs.mse * (1 + 1e-12));
}
