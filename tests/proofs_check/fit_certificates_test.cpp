// The fit certificates against independent references: the certified sup
// error of a chain against dense MPFR evaluations (GTH on the exact model, a
// different algorithm from the tree-theorem enclosure), and the branch and
// bound's lower bound against objectives evaluated in MPFR at feasible
// parameters (random and, where the optimum is known by construction, the
// optimum itself).
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <random>

#include "ctmc/activations/activation.hpp"
#include "ctmc/proofs_check/chain_sup.hpp"
#include "ctmc/proofs_check/fit_optimality.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/solvers/stationary.hpp"
#include "../test_temp_files.hpp"

using namespace ctmc;
using solvers::Mpfr;
using solvers::Rational;

namespace {

// 128-bit MPFR for the references, the previous default restored after.
struct Bits128 {
  ctmc::PrecisionScope scope{128};
};

// max over `points` equally spaced H in [lo, hi] of |F(H) - alpha phi(H)|,
// F by GTH in MPFR (128 bits) on the exact model.
double dense_max_error(const solvers::Model& m, const activations::Activation& act, const Rational& alpha,
                       const Rational& lo, const Rational& hi, int points) {
  const Bits128 bits;
  Mpfr best = 0;
  for (int k = 0; k <= points; ++k) {
    const Rational H = lo + (hi - lo) * Rational(k, points);
    const Mpfr F = solvers::solve_stationary<Mpfr>(m, H).flux;
    const Mpfr e = abs(F - Mpfr(alpha) * act.eval(Mpfr(H)));
    if (e > best) best = e;
  }
  return best.convert_to<double>();
}

solvers::Affine affine(Rational p, Rational s = 0) { return {p, s}; }

// f(theta) = mean (F_theta(H_m) - y_m)^2 in MPFR, F by GTH on the model.
double objective(proofs_check::ClosedFamily f, const std::vector<double>& th, const std::vector<Rational>& h,
                 const std::vector<Rational>& y) {
  const Bits128 bits;
  const solvers::Model m =
      f == proofs_check::ClosedFamily::TwoState
          ? solvers::two_state_model(affine(Rational(th[0]), Rational(th[1])), affine(Rational(th[2])))
          : solvers::three_state_model(affine(Rational(th[0]), Rational(th[1])), affine(Rational(th[2])),
                                       affine(Rational(th[3]), Rational(th[4])), affine(Rational(th[5])));
  Mpfr s = 0;
  for (std::size_t k = 0; k < h.size(); ++k) {
    const Mpfr r = solvers::solve_stationary<Mpfr>(m, h[k]).flux - Mpfr(y[k]);
    s += r * r;
  }
  return (s / Mpfr(h.size())).convert_to<double>();
}

}  // namespace

TEST_CASE("certified sup error encloses a dense MPFR evaluation at 1e5 points") {
  // A three-state chain whose G -> R rate crosses 0 inside the domain (a
  // kink of the flux) against the sigmoid, and a four-state chain against
  // ReLU (a kink of the target).
  const auto three = solvers::three_state_model(affine(Rational(3, 5), Rational(3, 10)), affine(Rational(1, 2)),
                                                affine(Rational(5), Rational(-1, 2)), affine(Rational(2)));
  solvers::Model four;
  four.states = {"A", "B", "C", "D"};
  auto add = [&](std::size_t i, std::size_t j, Rational p, Rational s, bool spike) {
    solvers::Transition t;
    t.from = i;
    t.to = j;
    t.offset = solvers::ExactValue(p);
    t.slope = solvers::ExactValue(s);
    t.spike = spike;
    four.transitions.push_back(t);
  };
  add(0, 1, Rational(1, 4), Rational(2), false);
  add(1, 2, Rational(3), Rational(1, 3), false);
  add(2, 0, Rational(7, 2), 0, true);
  add(1, 0, Rational(1, 5), Rational(-1, 10), false);
  add(2, 3, Rational(1, 2), Rational(1, 4), false);
  add(3, 0, Rational(4), 0, true);
  struct Case {
    const solvers::Model* m;
    const char* act;
    Rational alpha, lo, hi;
  };
  for (const Case& c : {Case{&three, "sigmoid", 1, -6, 6}, Case{&four, "relu", Rational(1, 2), -1, 5}}) {
    CAPTURE(c.act);
    const auto act = activations::parse_activation(c.act);
    const auto r = proofs_check::certified_chain_sup(*c.m, act, c.alpha, c.lo, c.hi);
    CHECK(r.converged);
    CHECK(r.lower <= r.upper);
    CHECK(r.upper <= r.lower * 1.01 + 1e-12);
    const double dense = dense_max_error(*c.m, act, c.alpha, c.lo, c.hi, 100000);
    CHECK(dense <= r.upper);
    // The dense grid comes within its own resolution of the sup.
    CHECK(dense >= r.lower * 0.999);
  }
}

TEST_CASE("certified sup error: bad input") {
  const auto two = solvers::two_state_model(affine(1, 1), affine(2));
  const auto sig = activations::parse_activation("sigmoid");
  CHECK_THROWS_AS(proofs_check::certified_chain_sup(two, sig, 1, 1, 1), InputError);
  solvers::Model big;
  for (int k = 0; k < 8; ++k) big.states.push_back("S" + std::to_string(k));
  for (std::size_t k = 0; k < 8; ++k) {
    solvers::Transition t;
    t.from = k;
    t.to = (k + 1) % 8;
    t.offset = solvers::ExactValue(Rational(1));
    t.spike = k == 0;
    big.transitions.push_back(t);
  }
  CHECK_THROWS_AS(proofs_check::certified_chain_sup(big, sig, 1, -1, 1), InputError);
  const auto tab = activations::parse_activation("table:" + testing::write_temp_file("cert_table.csv", "0,0\n1,1\n"));
  CHECK_NOTHROW(proofs_check::certified_chain_sup(two, tab, 1, Rational(1, 10), Rational(9, 10)));
  CHECK_THROWS_AS(proofs_check::certified_chain_sup(two, tab, 1, -1, 2), InputError);
}

TEST_CASE("branch and bound certifies a known optimum of the two-state family") {
  // Targets generated by the family at theta* = (1/2, 4/5, 2) on 41 points,
  // one point doubled with targets y +- delta: for any theta that pair adds
  // 2 (F - y)^2 + 2 delta^2 >= 2 delta^2, so the minimum is exactly
  // 2 delta^2 / 42, reached at theta* (and only the pair contributes).
  const std::vector<double> star = {0.5, 0.8, 2.0};
  proofs_check::OptimalityProblem p;
  p.family = proofs_check::ClosedFamily::TwoState;
  const Rational delta(1, 100);
  for (int k = 0; k <= 40; ++k) {
    const Rational H = Rational(-3) + Rational(6 * k, 40);
    Rational a = Rational(1, 2) + Rational(4, 5) * H;
    if (a < 0) a = 0;
    const Rational F = a * 2 / (a + 2);
    if (k == 20) {
      p.h.insert(p.h.end(), {H, H});
      p.y.insert(p.y.end(), {F + delta, F - delta});
    } else {
      p.h.push_back(H);
      p.y.push_back(F);
    }
  }
  p.lower = {-10, -10, 1e-3};
  p.upper = {10, 10, 10};
  const double fstar = (Rational(2) * delta * delta / 42).convert_to<double>();
  CHECK(objective(p.family, star, p.h, p.y) == doctest::Approx(fstar).epsilon(1e-12));
  SUBCASE("from the optimum: certified within 0.1%") {
    const auto r = proofs_check::certify_optimality(p, fstar);
    CHECK(r.certified);
    CHECK(r.lower_bound <= fstar);
    CHECK(r.gap <= 1e-3 * (1 + 1e-9));
  }
  SUBCASE("from a worse fit: the bound stays below the optimum, the search finds it") {
    const auto r = proofs_check::certify_optimality(p, 3 * fstar);
    CHECK(r.lower_bound <= fstar);
    CHECK(r.incumbent <= fstar * 1.001);
    CHECK_FALSE(r.certified);
    REQUIRE(r.best_centre.size() == 3);
    CHECK(objective(p.family, r.best_centre, p.h, p.y) <= fstar * 1.001);
  }
}

namespace {

// roots + 2 split = pruned + split + unsplittable + open: every box accounted
// for; every box is bounded once plus once per shrinking, except the mirror
// images, which are discarded unbounded.
void check_accounting(const proofs_check::OptimalityResult& r) {
  CHECK(r.roots + 2 * r.split == r.pruned + r.split + r.unsplittable + r.open);
  CHECK(r.boxes == r.roots + 2 * r.split + r.shrunk - r.mirrored);
  CHECK(r.mirrored <= r.pruned);
}

// The same search result, box for box.
void check_same(const proofs_check::OptimalityResult& x, const proofs_check::OptimalityResult& y) {
  CHECK(x.lower_bound == y.lower_bound);
  CHECK(x.incumbent == y.incumbent);
  CHECK(x.best_centre == y.best_centre);
  CHECK(x.boxes == y.boxes);
  CHECK(x.split == y.split);
  CHECK(x.pruned == y.pruned);
  CHECK(x.open == y.open);
  CHECK(x.shrunk == y.shrunk);
  CHECK(x.discarded == y.discarded);
  CHECK(x.mirrored == y.mirrored);
}

// As for the two-state family: targets of the family at theta* on 41
// points, one point doubled with targets F +- delta, so the minimum is
// exactly 2 delta^2 / 42, reached on the curve of theta*. b is fixed (the
// family is not identifiable with it free), the rest within 30% of theta*.
std::pair<proofs_check::OptimalityProblem, double> known_three_state_optimum() {
  const std::vector<Rational> star = {Rational(3, 5), Rational(2, 5), Rational(7, 10), Rational(2), Rational(3, 10),
                                      Rational(3, 2)};
  proofs_check::OptimalityProblem p;
  p.family = proofs_check::ClosedFamily::ThreeState;
  const Rational delta(1, 100);
  for (int k = 0; k <= 40; ++k) {
    const Rational H = Rational(-3) + Rational(6 * k, 40);
    Rational a = star[0] + star[1] * H, c = star[3] + star[4] * H;
    if (a < 0) a = 0;
    if (c < 0) c = 0;
    const Rational F = a * c * star[5] / (star[5] * (a + star[2] + c) + a * c);
    if (k == 20) {
      p.h.insert(p.h.end(), {H, H});
      p.y.insert(p.y.end(), {F + delta, F - delta});
    } else {
      p.h.push_back(H);
      p.y.push_back(F);
    }
  }
  for (std::size_t k = 0; k < 6; ++k) {
    const double v = solvers::to_double(star[k]);
    p.lower.push_back(k == 2 ? v : 0.7 * v);
    p.upper.push_back(k == 2 ? v : 1.3 * v);
  }
  return {p, (Rational(2) * delta * delta / 42).convert_to<double>()};
}

// A sigmoid-like target whose grid holds H = 0 (where a.p < 0 the rate a
// vanishes at H = 0 and that point's term is forced), on the faces of a
// wide box; and the MSE of a feasible point.
std::pair<proofs_check::OptimalityProblem, double> sigmoid_like_problem() {
  proofs_check::OptimalityProblem p;
  p.family = proofs_check::ClosedFamily::ThreeState;
  for (int k = -10; k <= 10; ++k) {
    p.h.push_back(Rational(k, 5));
    p.y.push_back(Rational(1) / (Rational(1) + Rational(std::exp(-k / 5.0))));
  }
  p.lower = {-50, -50, 1e-3, -50, -50, 1e-3};
  p.upper = {50, 50, 50, 50, 50, 50};
  const std::vector<double> theta{1.2, 0.6, 20, 30, -3, 50};
  return {p, objective(p.family, theta, p.h, p.y)};
}

}  // namespace

TEST_CASE("three-state branch and bound with the Taylor-model and reciprocal bounds certifies a known optimum") {
  const auto [p, fstar] = known_three_state_optimum();
  proofs_check::OptimalityOptions o;
  o.rel_gap = 1e-2;
  o.max_boxes = 100000;
  o.faces = false;
  const auto r = proofs_check::certify_optimality(p, fstar, o);
  CHECK(r.certified);
  CHECK(r.lower_bound <= fstar);
  check_accounting(r);
  // Without the reciprocal relaxation, the same budget does not close it.
  o.reciprocal = false;
  o.max_boxes = r.boxes;
  const auto no_rec = proofs_check::certify_optimality(p, fstar, o);
  CHECK(no_rec.lower_bound <= fstar);
  CHECK_FALSE(no_rec.certified);
  check_accounting(no_rec);
  // Without either (the mean-value bound), 4x the boxes do not close the gap.
  o.taylor = false;
  o.max_boxes = 4 * r.boxes;
  const auto base = proofs_check::certify_optimality(p, fstar, o);
  CHECK(base.lower_bound <= fstar);
  CHECK_FALSE(base.certified);
  check_accounting(base);
  MESSAGE("Taylor-model and reciprocal bounds: ", r.boxes, " boxes; Taylor-model bound alone: gap ", no_rec.gap,
          " at that budget; mean-value bound: ", base.boxes, " boxes, gap ", base.gap);
}

TEST_CASE("branch and bound never bounds above a feasible objective (random targets)") {
  for (auto family : {proofs_check::ClosedFamily::TwoState, proofs_check::ClosedFamily::ThreeState}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      CAPTURE(seed);
      std::mt19937_64 rng(seed);
      std::uniform_real_distribution<double> unit(0, 1);
      proofs_check::OptimalityProblem p;
      p.family = family;
      for (int k = 0; k <= 20; ++k) {
        p.h.push_back(Rational(-2) + Rational(4 * k, 20));
        p.y.push_back(Rational(unit(rng)) * Rational(k, 20));  // a noisy increasing target
      }
      const std::size_t n = proofs_check::parameter_count(family);
      const double R = 5;
      p.lower.assign(n, -R);
      p.upper.assign(n, R);
      for (std::size_t k : family == proofs_check::ClosedFamily::TwoState ? std::vector<std::size_t>{2}
                                                                         : std::vector<std::size_t>{2, 5})
        p.lower[k] = 1e-3;
      // The best of 50 random feasible points is a feasible MSE.
      double best = INFINITY;
      std::vector<std::vector<double>> thetas;
      for (int j = 0; j < 50; ++j) {
        std::vector<double> th(n);
        for (std::size_t k = 0; k < n; ++k) th[k] = p.lower[k] + (p.upper[k] - p.lower[k]) * unit(rng);
        best = std::min(best, objective(family, th, p.h, p.y));
        thetas.push_back(th);
      }
      proofs_check::OptimalityOptions o;
      o.max_boxes = 4000;
      const auto r = proofs_check::certify_optimality(p, best, o);
      check_accounting(r);
      CHECK(r.lower_bound <= best);
      CHECK(r.lower_bound <= r.incumbent);
      if (!r.best_centre.empty()) CHECK(r.lower_bound <= objective(family, r.best_centre, p.h, p.y));
      if (family == proofs_check::ClosedFamily::ThreeState) {
        // The faces bound the same minimum as the whole box: neither
        // search's bound may exceed what the other one found.
        o.faces = false;
        const auto whole = proofs_check::certify_optimality(p, best, o);
        CHECK(whole.lower_bound <= r.incumbent);
        CHECK(r.lower_bound <= whole.incumbent);
        if (!whole.best_centre.empty())
          CHECK(r.lower_bound <= objective(family, whole.best_centre, p.h, p.y));
        MESSAGE("three-state bound, faces ", r.lower_bound, ", whole box ", whole.lower_bound, ", best known ",
                std::min(r.incumbent, whole.incumbent));
      }
    }
  }
}

TEST_CASE("three-state branch and bound: the budget, the threads and the straddle split") {
  const auto [p, known] = sigmoid_like_problem();
  proofs_check::OptimalityOptions o;
  o.rel_gap = 1e-2;
  o.max_boxes = 600;
  const auto short_run = proofs_check::certify_optimality(p, known, o);
  check_accounting(short_run);
  CHECK(short_run.exhausted);
  CHECK_FALSE(short_run.certified);
  // The budget is checked between batches: it stops within one batch's
  // halves, each bounded at most once per coordinate and once more.
  CHECK(short_run.boxes >= o.max_boxes);
  CHECK(short_run.boxes < o.max_boxes + 2 * o.batch * 7);
  // On the faces with their mirror halves, the same search on 2 and 3
  // threads, box for box.
  for (int threads : {2, 3}) {
    o.threads = threads;
    check_same(proofs_check::certify_optimality(p, known, o), short_run);
  }
  o.threads = 1;
  // With or without the straddle split, the bound stays below the known fit.
  for (bool straddle : {true, false}) {
    o.straddle_split = straddle;
    o.max_boxes = 2400;
    const auto r = proofs_check::certify_optimality(p, known, o);
    check_accounting(r);
    CHECK(r.lower_bound <= known);
    CHECK(r.lower_bound <= r.incumbent);
    if (!r.best_centre.empty()) CHECK(r.lower_bound <= objective(p.family, r.best_centre, p.h, p.y));
    MESSAGE("straddle split ", straddle, ": bound ", r.lower_bound, " for ", known, " in ", r.boxes, " boxes");
  }
}

TEST_CASE("three-state branch and bound: a certified search splits the same boxes in any batch, on any threads") {
  // Every box whose bound is below the threshold is split, in whatever
  // order, so a batch of one box (the strict best-first order) on one thread
  // splits the same boxes as batches of 32 on two.
  const auto [p, fstar] = known_three_state_optimum();
  proofs_check::OptimalityOptions o;
  o.rel_gap = 1e-2;
  o.faces = false;
  o.threads = 2;
  const auto batched = proofs_check::certify_optimality(p, fstar, o);
  CHECK(batched.certified);
  o.batch = 1;
  o.threads = 1;
  check_same(proofs_check::certify_optimality(p, fstar, o), batched);
  o.batch = 0;
  CHECK_THROWS_AS(proofs_check::certify_optimality(p, fstar, o), InputError);
}

namespace {

// The faces theorem behind the three-state branch and bound
// (fit_optimality.hpp): for theta in the box, the path
//   a -> lam a, c -> mu c, b -> nu b
// that keeps every F(H) leaves the box, so it crosses the box's boundary at a
// point of the same curve where one of a.p, a.s, b, c.p, c.s is at an end.
// Here the path is followed in MPFR (256 bits) and the crossing found by
// bisection between 0 (inside) and the end of the path (outside), the end
// being where the header says.
using Theta = std::array<Mpfr, 6>;  // a.p, a.s, b, c.p, c.s, d

Mpfr three_state_flux(const Theta& th, const Mpfr& H) {
  Mpfr a = th[0] + th[1] * H, c = th[3] + th[4] * H;
  if (a < 0) a = 0;
  if (c < 0) c = 0;
  const Mpfr &b = th[2], &d = th[5];
  return a * c * d / (d * (a + b + c) + a * c);  // paper eq. 2
}

bool inside(const Theta& th, const std::array<double, 6>& lo, const std::array<double, 6>& hi) {
  for (int k = 0; k < 6; ++k)
    if (th[k] < lo[k] || th[k] > hi[k]) return false;
  return true;
}

// The path of the header: t in (t_end, 0] (independent a, c) or u in
// (t_end, 1] (c = kappa a, kappa > 0), theta at t = 0 (u = 1).
struct Path {
  Theta th;
  bool dependent = false;
  Mpfr xi, zeta, kappa;
  Mpfr start() const { return dependent ? Mpfr(1) : Mpfr(0); }
  Mpfr end() const {
    if (dependent) return Mpfr(0);
    const Mpfr& b = th[2];
    Mpfr e = -1;
    if (zeta < 0 && 1 / (b * zeta) > e) e = 1 / (b * zeta);
    if (xi < 0 && 1 / (b * xi) > e) e = 1 / (b * xi);
    return e;
  }
  Theta at(const Mpfr& t) const {
    Mpfr lam, mu, nu;
    if (dependent) {
      lam = 1 / t;
      mu = 1 / (kappa + 1 - kappa * t);
      nu = lam * mu;
    } else {
      lam = 1 / (1 - t * th[2] * zeta);
      mu = 1 / (1 - t * th[2] * xi);
      nu = (1 + t) * lam * mu;
    }
    return {lam * th[0], lam * th[1], nu * th[2], mu * th[3], mu * th[4], th[5]};
  }
};

}  // namespace

TEST_CASE("three-state faces theorem: every curve of the box is realized on a face") {
  const ctmc::PrecisionScope bits(256);
  const std::array<double, 6> lo = {-5, -5, 1e-3, -5, -5, 1e-3}, hi = {5, 5, 5, 5, 5, 5};
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> num(-500, 500), pos(1, 500);
  std::vector<Theta> cases;
  for (int j = 0; j < 300; ++j)
    cases.push_back({Mpfr(num(rng)) / 100, Mpfr(num(rng)) / 100, Mpfr(pos(rng)) / 100, Mpfr(num(rng)) / 100,
                     Mpfr(num(rng)) / 100, Mpfr(pos(rng)) / 100});
  // c = kappa a (kappa > 0): same root, or both constant.
  cases.push_back({Mpfr(1), Mpfr(2), Mpfr(1), Mpfr(3, 2), Mpfr(3), Mpfr(2)});
  cases.push_back({Mpfr(2), Mpfr(0), Mpfr(1, 2), Mpfr(1), Mpfr(0), Mpfr(3)});
  // F = 0 everywhere: a = 0, or c = kappa a with kappa < 0.
  cases.push_back({Mpfr(0), Mpfr(0), Mpfr(1), Mpfr(1), Mpfr(1), Mpfr(1)});
  cases.push_back({Mpfr(1), Mpfr(1), Mpfr(2), Mpfr(-2), Mpfr(-2), Mpfr(1)});
  std::vector<Mpfr> hs;
  for (int k = 0; k <= 24; ++k) hs.push_back(Mpfr(-3) + Mpfr(k) / 4);
  const Mpfr tol = pow(Mpfr(2), -200);
  int crossings = 0, zero_curves = 0;
  for (const Theta& th : cases) {
    CAPTURE(th[0].str());
    CAPTURE(th[1].str());
    CAPTURE(th[3].str());
    CAPTURE(th[4].str());
    const Mpfr det = th[0] * th[4] - th[3] * th[1];
    const bool a_zero = th[0] == 0 && th[1] == 0, c_zero = th[3] == 0 && th[4] == 0;
    Theta rep = th;
    if (!a_zero && !c_zero && det == 0 && (th[0] != 0 ? th[3] / th[0] : th[4] / th[1]) < 0) {
      ++zero_curves;  // a c <= 0 at every H: F = 0 whatever b
      rep[2] = lo[2];
    } else if (a_zero || c_zero) {
      ++zero_curves;
      rep[2] = lo[2];
    } else {
      Path path{th};
      if (det == 0) {
        path.dependent = true;
        path.kappa = th[0] != 0 ? th[3] / th[0] : th[4] / th[1];
      } else {  // 1 = xi a + zeta c as affine functions of H
        path.xi = th[4] / det;
        path.zeta = -th[1] / det;
      }
      // The end of the path lies outside the box.
      Mpfr in = path.start(), out = path.end();
      const Mpfr near_end = out + (in - out) * pow(Mpfr(2), -100);
      REQUIRE_FALSE(inside(path.at(near_end), lo, hi));
      out = near_end;
      for (int it = 0; it < 400; ++it) {
        const Mpfr mid = (in + out) / 2;
        (inside(path.at(mid), lo, hi) ? in : out) = mid;
      }
      rep = path.at(in);
      ++crossings;
    }
    REQUIRE(inside(rep, lo, hi));
    CHECK(rep[5] == th[5]);
    // One of a.p, a.s, b, c.p, c.s is at an end of its range.
    bool on_face = false;
    for (int k = 0; k < 5; ++k) on_face = on_face || abs(rep[k] - lo[k]) < tol || abs(rep[k] - hi[k]) < tol;
    CHECK(on_face);
    // The same curve: F agrees at every H (relative 2^-190; exactly 0 where it is 0).
    for (const Mpfr& H : hs) {
      const Mpfr f0 = three_state_flux(th, H), f1 = three_state_flux(rep, H);
      if (f0 == 0) CHECK(f1 == 0);
      else CHECK(abs(f1 - f0) <= pow(Mpfr(2), -190) * f0);
    }
  }
  CHECK(crossings >= 290);
  CHECK(zero_curves >= 2);
}

namespace {

// A clipped-ReLU target min(max(0, H), 1) on 25 points of [-2, 3] (the
// clipped rows of the fit table in small).
proofs_check::OptimalityProblem clipped_relu_problem() {
  proofs_check::OptimalityProblem p;
  p.family = proofs_check::ClosedFamily::ThreeState;
  for (int k = 0; k <= 24; ++k) {
    const Rational H = Rational(-2) + Rational(5 * k, 24);
    p.h.push_back(H);
    p.y.push_back(H < 0 ? Rational(0) : H > 1 ? Rational(1) : H);
  }
  p.lower = {-20, -20, 1e-3, -20, -20, 1e-3};
  p.upper = {20, 20, 20, 20, 20, 20};
  return p;
}

}  // namespace

TEST_CASE("monotonicity discard: a planted optimum on a face is kept, the bound certifies it") {
  // Three-state targets generated at theta* on 41 points, one point doubled
  // with targets F +- delta: the minimum is exactly 2 delta^2 / 42, on the
  // curve of theta*. b is fixed (the family is not identifiable with it
  // free), d's upper end is d* (the optimum on a face of the box), the
  // rest within 30% of theta*. Boxes whose derivative points at a face
  // inside the box are discarded; those holding theta* never are.
  const std::vector<Rational> star = {Rational(3, 5), Rational(2, 5), Rational(7, 10), Rational(2), Rational(3, 10),
                                      Rational(3, 2)};
  proofs_check::OptimalityProblem p;
  p.family = proofs_check::ClosedFamily::ThreeState;
  const Rational delta(1, 100);
  for (int k = 0; k <= 40; ++k) {
    const Rational H = Rational(-3) + Rational(6 * k, 40);
    Rational a = star[0] + star[1] * H, c = star[3] + star[4] * H;
    if (a < 0) a = 0;
    if (c < 0) c = 0;
    const Rational F = a * c * star[5] / (star[5] * (a + star[2] + c) + a * c);
    if (k == 20) {
      p.h.insert(p.h.end(), {H, H});
      p.y.insert(p.y.end(), {F + delta, F - delta});
    } else {
      p.h.push_back(H);
      p.y.push_back(F);
    }
  }
  std::vector<double> th;
  for (std::size_t k = 0; k < 6; ++k) {
    const double v = solvers::to_double(star[k]);
    th.push_back(v);
    p.lower.push_back(k == 2 ? v : 0.7 * v);
    p.upper.push_back(k == 2 || k == 5 ? v : 1.3 * v);
  }
  const double fstar = (Rational(2) * delta * delta / 42).convert_to<double>();
  CHECK(objective(p.family, th, p.h, p.y) == doctest::Approx(fstar).epsilon(1e-12));
  proofs_check::OptimalityOptions o;
  o.rel_gap = 1e-2;
  o.max_boxes = 100000;
  o.faces = false;
  // The full method: the reciprocal relaxation prunes the boxes beside
  // theta* before the monotonicity test sees them.
  const auto full = proofs_check::certify_optimality(p, 4 * fstar, o);
  check_accounting(full);
  CHECK(full.lower_bound <= fstar);
  CHECK(full.lower_bound >= fstar / 1.01);
  // Without the relaxation the discard meets those boxes. From 4x the
  // optimum: the search must reach theta* (its boxes are never discarded)
  // and bound below it.
  o.reciprocal = false;
  const auto r = proofs_check::certify_optimality(p, 4 * fstar, o);
  check_accounting(r);
  CHECK(r.lower_bound <= fstar);
  CHECK(r.incumbent <= fstar * 1.01);
  CHECK(r.lower_bound >= fstar / 1.01);
  CHECK(r.discarded > 0);
  CHECK(r.discarded <= r.pruned);
  REQUIRE(r.best_centre.size() == 6);
  CHECK(objective(p.family, r.best_centre, p.h, p.y) <= fstar * 1.01);
  o.monotone_discard = false;
  const auto before = proofs_check::certify_optimality(p, 4 * fstar, o);
  check_accounting(before);
  CHECK(before.lower_bound <= fstar);
  CHECK(before.discarded == 0);
  MESSAGE("planted face optimum: ", full.boxes, " boxes, bound ", full.lower_bound,
          "; without the reciprocal relaxation ", r.boxes, " boxes (", r.discarded, " discarded), bound ",
          r.lower_bound, "; nor the discard ", before.boxes, " boxes, bound ", before.lower_bound, "; optimum ", fstar);
}

TEST_CASE("reciprocal edge terms: a planted optimum whose rate c vanishes at a data point H = 0 is certified") {
  // Three-state targets generated at theta* with c.p* = 0 on 41 points of
  // [-2, 6], H = 0 among them, one point doubled with targets F +- delta:
  // the minimum is exactly 2 delta^2 / 42. The box has c.p in [-1/2, 0], so
  // that at H = 0 c's range is [-1/2, 0] x 0 up to rounding on every box at
  // c.p's upper end, theta*'s among them; b is fixed, the rest within 30%.
  // The bound must stay below the optimum and reach it within 1%.
  const std::vector<Rational> star = {Rational(30), Rational(-3), Rational(1, 2), Rational(0), Rational(3, 2),
                                      Rational(50)};
  proofs_check::OptimalityProblem p;
  p.family = proofs_check::ClosedFamily::ThreeState;
  const Rational delta(1, 100);
  for (int k = 0; k <= 40; ++k) {
    const Rational H = Rational(-2) + Rational(k, 5);
    Rational a = star[0] + star[1] * H, c = star[3] + star[4] * H;
    if (a < 0) a = 0;
    if (c < 0) c = 0;
    const Rational F = a * c == 0 ? Rational(0) : a * c * star[5] / (star[5] * (a + star[2] + c) + a * c);
    if (k == 20) {
      p.h.insert(p.h.end(), {H, H});
      p.y.insert(p.y.end(), {F + delta, F - delta});
    } else {
      p.h.push_back(H);
      p.y.push_back(F);
    }
  }
  std::vector<double> th;
  for (std::size_t k = 0; k < 6; ++k) {
    const double v = solvers::to_double(star[k]);
    th.push_back(v);
    p.lower.push_back(k == 2 ? v : k == 3 ? -0.5 : std::min(0.7 * v, 1.3 * v));
    p.upper.push_back(k == 2 ? v : k == 3 ? 0.0 : std::max(0.7 * v, 1.3 * v));
  }
  const double fstar = (Rational(2) * delta * delta / 42).convert_to<double>();
  CHECK(objective(p.family, th, p.h, p.y) == doctest::Approx(fstar).epsilon(1e-12));
  proofs_check::OptimalityOptions o;
  o.rel_gap = 1e-2;
  o.max_boxes = 20000;
  o.faces = false;
  const auto r = proofs_check::certify_optimality(p, fstar, o);
  check_accounting(r);
  CHECK(r.lower_bound <= fstar);
  CHECK(r.certified);
  o.reciprocal_edge_terms = false;
  const auto before = proofs_check::certify_optimality(p, fstar, o);
  check_accounting(before);
  CHECK(before.lower_bound <= fstar);
  MESSAGE("planted optimum with c's kink at H = 0: ", r.boxes, " boxes, bound ", r.lower_bound,
          "; the relaxation zeroed at the edge: ", before.boxes, " boxes, bound ", before.lower_bound, "; optimum ",
          fstar);
}

TEST_CASE("monotonicity discard and corner split: the bound stays below a sampled MPFR objective (clipped ReLU)") {
  const auto p = clipped_relu_problem();
  // The best of random feasible points and of points near a good fit
  // (a steep a with its kink at 0, c large, d at the clip level) is a known
  // value; every sampled objective must stay above the bound.
  std::mt19937_64 rng(47);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<std::vector<double>> thetas;
  for (int j = 0; j < 200; ++j) {
    std::vector<double> th(6);
    for (std::size_t k = 0; k < 6; ++k) th[k] = p.lower[k] + (p.upper[k] - p.lower[k]) * unit(rng);
    thetas.push_back(th);
  }
  for (int j = 0; j < 100; ++j)
    thetas.push_back({0.2 * unit(rng), 15 + 5 * unit(rng), 1e-3 + 0.1 * unit(rng), 15 + 5 * unit(rng),
                      20 * unit(rng), 1 + 0.3 * unit(rng)});
  double best = INFINITY;
  std::vector<double> sampled;
  for (const auto& th : thetas) sampled.push_back(objective(p.family, th, p.h, p.y));
  for (double v : sampled) best = std::min(best, v);
  proofs_check::OptimalityOptions o;
  o.rel_gap = 1e-2;
  o.max_boxes = 6000;
  for (int variant = 0; variant < 3; ++variant) {
    CAPTURE(variant);
    o.monotone_discard = variant != 1;
    o.corner_split = variant != 2;
    const auto r = proofs_check::certify_optimality(p, best, o);
    check_accounting(r);
    for (double v : sampled) CHECK(r.lower_bound <= v);
    CHECK(r.lower_bound <= r.incumbent);
    if (!r.best_centre.empty()) CHECK(r.lower_bound <= objective(p.family, r.best_centre, p.h, p.y));
    if (o.monotone_discard) CHECK(r.discarded <= r.pruned);
    else CHECK(r.discarded == 0);
    MESSAGE("clipped ReLU, discard ", o.monotone_discard, ", corner split ", o.corner_split, ": bound ",
            r.lower_bound, " for ", best, " (search found ", r.incumbent, "), ", r.boxes, " boxes, ", r.discarded,
            " discarded");
  }
}

TEST_CASE("branch and bound: bad input") {
  proofs_check::OptimalityProblem p;
  p.h = {0, 1};
  p.y = {Rational(1, 2), Rational(1, 3)};
  p.lower = {-1, -1, 1e-3};
  p.upper = {1, 1};
  CHECK_THROWS_AS(proofs_check::certify_optimality(p, 1), InputError);
  p.upper = {1, 1, 1};
  p.lower[2] = 0;
  CHECK_THROWS_AS(proofs_check::certify_optimality(p, 1), InputError);
  p.lower[2] = 1e-3;
  p.y.pop_back();
  CHECK_THROWS_AS(proofs_check::certify_optimality(p, 1), InputError);
}
