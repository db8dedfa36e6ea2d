// The fitter's search moves (analysis/src/fit/moves/): the list the driver
// runs per family, and, move by move, properties every move must keep: it
// never raises the MSE of the point it starts from, the MSE it records is
// that of the parameters it records, and the moves run in the driver's order
// give fit()'s answer.
#include <doctest/doctest.h>

#include <cmath>
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <set>
#include <string>
#include <vector>

#include "ctmc/analysis/fit.hpp"
#include "ctmc/analysis/fit_tables.hpp"
#include "fit/fit_internal.hpp"
#include "fit_targets.hpp"

using namespace ctmc::analysis;
using ctmc::analysis::testing::table_target;
using namespace ctmc::analysis::fit_search;

namespace {

std::vector<std::string> names(const FamilySpec& f) {
  std::vector<std::string> out;
  for (const auto& m : search_moves(f)) out.push_back(m.name);
  return out;
}

// Two doubles of the same computation: an MSE recomputed from the recorded
// parameters must be the recorded one to the last bit (same points, same
// order of operations).
bool same_bits(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// The driver's setup (analysis/src/fit/fit.cpp) without its checks: the full problem, its
// exploration subsample (a stage of its own where it has fewer points) and
// a Search over them. run(name) runs one move as the driver does.
struct Harness {
  Harness(FitProblem p, const FitOptions& o) : problem(std::move(p)), options(o), explore(problem), full(problem) {
    explore.data = exploration_data(problem.data, options.explore_points);
    if (explore.data.h.size() < problem.data.h.size()) coarse_stage.emplace(explore);
    s.emplace(problem, options, full, coarse_stage ? *coarse_stage : full, std::vector<double>{}, options.starts);
    s->result.family = problem.family;
    s->result.params = s->params;
    s->result.bounds = problem.bounds;
  }
  void run(const std::string& name) {
    for (const auto& m : all_moves())
      if (name == m.name) {
        REQUIRE(m.runs_for(problem.family));
        m.run(*s);
        REQUIRE_FALSE(s->restart_on_full);
        return;
      }
    FAIL("no move " << name);
  }
  const Stage& ex() const { return s->ex; }
  // The search's current fit on the full problem (after transfer).
  double mse() const { return s->result.mse_double; }
  void check_recorded_mse() const {
    CHECK(std::isfinite(mse()));
    CHECK(same_bits(weighted_mse(problem, *full.targets, s->result.theta), mse()));
  }

  FitProblem problem;
  FitOptions options;
  FitProblem explore;
  Stage full;
  std::optional<Stage> coarse_stage;
  std::optional<Search> s;
};

// Small options: a few starts and rounds, so each move runs but the test stays fast.
FitOptions small_options(std::uint64_t seed) {
  FitOptions o;
  o.starts = 8;
  o.seed = seed;
  o.threads = 2;
  o.basin_rounds = 1;
  o.basin_chains = 2;
  o.local_rounds = 2;
  o.widen_on_bound = false;
  return o;
}

// Runs the moves of the family one by one, checking after each that it
// kept its properties; returns the harness for the caller's checks.
void run_and_check_every_move(Harness& h) {
  const auto moves = names(h.problem.family);
  REQUIRE(moves.size() >= 4);
  REQUIRE(moves[0] == "multistart");
  REQUIRE(moves[1] == "polish");
  REQUIRE(moves[2] == "basin_hop");
  REQUIRE(moves[3] == "transfer");

  h.run("multistart");
  // One outcome per start, each scored on the exploration problem.
  REQUIRE(h.s->outcomes.size() == static_cast<std::size_t>(h.options.starts));
  for (const auto& o : h.s->outcomes)
    if (std::isfinite(o.mse)) CHECK(same_bits(weighted_mse(*h.ex().problem, *h.ex().targets, o.theta), o.mse));
  const auto before_polish = h.s->outcomes;

  h.run("polish");
  // A polish replaces a start only by a lower point; the best start is the
  // smallest (MSE, index).
  for (std::size_t k = 0; k < before_polish.size(); ++k)
    CHECK(!(h.s->outcomes[k].mse > before_polish[k].mse));
  REQUIRE(h.s->best >= 0);
  for (std::size_t k = 0; k < h.s->outcomes.size(); ++k) {
    CHECK(!(h.s->outcomes[k].mse < h.s->outcomes[static_cast<std::size_t>(h.s->best)].mse));
    if (h.s->outcomes[k].mse == h.s->outcomes[static_cast<std::size_t>(h.s->best)].mse)
      CHECK(static_cast<int>(k) >= h.s->best);
  }

  h.run("basin_hop");
  // Monotonic basin hopping: no chain ends above the best start.
  REQUIRE_FALSE(h.s->ends.empty());
  CHECK(h.s->ends.size() == h.s->end_hops.size());
  const double best_start = h.s->outcomes[static_cast<std::size_t>(h.s->best)].mse;
  CHECK(h.s->explore_best <= best_start);
  CHECK(h.s->ends[0].mse <= best_start);  // the first chain continues the best start
  for (const auto& e : h.s->ends) CHECK(same_bits(weighted_mse(*h.ex().problem, *h.ex().targets, e.theta), e.mse));

  h.run("transfer");
  h.check_recorded_mse();
  // The full problem's fit is at least as good as the best chain end as it
  // scores on the full problem before its polish there (up to the rounding
  // of Ceres' cost, summed in another order than weighted_mse's, where a
  // polish accepts a step of almost no decrease).
  constexpr double kCostRounding = 1e-12;
  double end_on_full = kInf;
  for (const auto& e : h.s->ends) end_on_full = std::min(end_on_full, weighted_mse(h.problem, *h.full.targets, e.theta));
  CHECK(h.mse() <= end_on_full * (1 + kCostRounding));

  for (std::size_t i = 4; i < moves.size(); ++i) {
    CAPTURE(moves[i]);
    const double before = h.mse();
    h.run(moves[i]);
    CHECK(h.mse() <= before);
    h.check_recorded_mse();
  }
}

}  // namespace

TEST_CASE("search_moves: the driver's moves per family, in order") {
  using V = std::vector<std::string>;
  const V closed = {"multistart", "polish", "basin_hop", "transfer", "kink_hop", "local_phase"};
  CHECK(names({FitFamily::TwoState, 2}) == closed);
  CHECK(names({FitFamily::ThreeState, 3}) == closed);
  CHECK(names({FitFamily::FullThreeState, 3}) ==
        V{"multistart", "polish", "basin_hop", "transfer", "kink_hop", "local_phase", "time_scale", "relay_rescale"});
  for (std::size_t n : {2, 4, 5})
    CHECK(names({FitFamily::General, n}) ==
          V{"multistart", "polish", "basin_hop", "transfer", "general_repolish", "time_scale"});
}

TEST_CASE("search_moves: every move has a unique name and a one-line description") {
  std::set<std::string> seen;
  for (const auto& m : all_moves()) {
    CAPTURE(m.name);
    CHECK(seen.insert(m.name).second);
    for (const FamilySpec f : {FamilySpec{FitFamily::TwoState, 2}, FamilySpec{FitFamily::FullThreeState, 3},
                               FamilySpec{FitFamily::General, 4}}) {
      const std::string d = m.description(f);
      CHECK_FALSE(d.empty());
      CHECK(d.find('\n') == std::string::npos);
    }
  }
  // The public list is the internal one, filtered by family.
  for (const auto& info : search_moves({FitFamily::FullThreeState, 3})) CHECK(seen.count(info.name) == 1);
}

TEST_CASE("search moves, full-three-state: no move raises the MSE; in order they give fit()'s answer") {
  // softplus: many local minima, so basin hops, exchanges and the local
  // phase have work to do.
  const auto p = make_fit_problem(table_target("softplus"), {FitFamily::FullThreeState, 3});
  const auto o = small_options(3);
  Harness h(p, o);
  run_and_check_every_move(h);
  const auto r = fit(p, o);
  CHECK(nudge_kinks_off_points(h.s->params, h.s->result.theta, p.data, p.bounds) == r.theta);
  CHECK(h.s->result.kink_hops == r.kink_hops);
  CHECK(h.s->result.local_hops == r.local_hops);
  CHECK(h.s->result.time_scale_moves == r.time_scale_moves);
}

TEST_CASE("search moves, general-4: no move raises the MSE; in order they give fit()'s answer") {
  const auto p = make_fit_problem(table_target("sigmoid"), {FitFamily::General, 4});
  auto o = small_options(2);
  o.starts = 4;
  o.basin_candidates = 4;
  o.max_iterations = 50;
  o.general_repolish = 2;
  Harness h(p, o);
  run_and_check_every_move(h);
  const auto r = fit(p, o);
  CHECK(nudge_kinks_off_points(h.s->params, h.s->result.theta, p.data, p.bounds) == r.theta);
}

TEST_CASE("search moves, two-state: no move raises the MSE") {
  // cliprelu_1: the kink of a(H) sits between grid points (kink hops).
  const auto p = make_fit_problem(table_target("cliprelu_1"), {FitFamily::TwoState, 2});
  Harness h(p, small_options(7));
  run_and_check_every_move(h);
}

TEST_CASE("kink_hop: from any polished start, never raises the MSE and records that of its parameters") {
  const auto p = make_fit_problem(table_target("softplus"), {FitFamily::ThreeState, 3});
  auto o = small_options(5);
  o.explore_points = 0;  // the starts are solved on the full problem
  Harness h(p, o);
  REQUIRE_FALSE(h.s->coarse);
  h.run("multistart");
  h.run("polish");
  for (const auto& start : h.s->outcomes) {
    if (!std::isfinite(start.mse)) continue;
    auto theta = start.theta;
    double mse = weighted_mse(p, *h.full.targets, theta);
    const double before = mse;
    kink_hop(*h.s, theta, mse);
    CHECK(mse <= before);
    CHECK(same_bits(weighted_mse(p, *h.full.targets, theta), mse));
  }
}
