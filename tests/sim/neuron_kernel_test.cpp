// NeuronKernel on large chains: its stationary solve (the solvers' GTH) and
// the end-state sampler's reachability rule (EndStateRule), against closed
// forms and a breadth-first search.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "ctmc/sim/neurons/neuron_kernel.hpp"
#include "ctmc/sim/neurons/sampler.hpp"
#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/solvers/stationary.hpp"

using namespace ctmc;
using namespace ctmc::sim;
using solvers::Rational;

namespace {

// Bernstein chain of 2 (N + 1) states with kappa_i = i / N, rho = 4, gamma = 1
// on [0, 1]: M(u) = sum_i (i/N) C(N,i) u^i (1-u)^(N-i) = u, so the flux is
// 4 u / (4 + u) with u = H clamped to [0, 1] (families.hpp).
solvers::Model bernstein_identity(std::size_t N) {
  std::vector<Rational> kappa;
  for (std::size_t i = 0; i <= N; ++i) kappa.emplace_back(static_cast<long>(i), static_cast<long>(N));
  return solvers::bernstein_model(kappa, 4, 1, 0, 1);
}

double identity_flux(double H) {
  const double u = std::min(1.0, std::max(0.0, H));
  return 4 * u / (4 + u);
}

// j reachable from i through non-spike transitions not identically zero.
std::vector<std::vector<char>> reach_by_bfs(const solvers::Model& m) {
  const std::size_t n = m.size();
  std::vector<std::vector<char>> r(n, std::vector<char>(n, 0));
  for (std::size_t i = 0; i < n; ++i) {
    std::deque<std::size_t> queue{i};
    r[i][i] = 1;
    while (!queue.empty()) {
      const std::size_t u = queue.front();
      queue.pop_front();
      for (const auto& t : m.transitions)
        if (t.from == u && !t.spike && (t.offset.value != 0 || t.slope.value != 0) && !r[i][t.to]) {
          r[i][t.to] = 1;
          queue.push_back(t.to);
        }
    }
  }
  return r;
}

}  // namespace

TEST_CASE("502-state Bernstein kernel: the flux is finite and the closed form's at every H, near u = 1 too") {
  // The unnormalized GTH back-substitution grows like C(N, i) (u/(1-u))^i:
  // beyond 1e308 for u > 0.95 at N = 250. Without rescaling, pi is NaN at
  // H = 0.99 and the mean field would use the NaN (a wrong A_MF with exit 0).
  const auto model = bernstein_identity(250);
  const NeuronKernel k(model, 1.0, "bernstein-250");
  const NeuronKernel k3(model, 3.0, "bernstein-250 x3");
  for (double H : {-0.5, 0.0, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0, 2.0}) {
    CAPTURE(H);
    const double f = k.flux(H);
    REQUIRE(std::isfinite(f));
    CHECK(f == doctest::Approx(identity_flux(H)).epsilon(1e-12));
    CHECK(f == doctest::Approx(solvers::solve_stationary<double>(model, Rational(H)).flux).epsilon(1e-12));
    CHECK(k3.flux(H) == doctest::Approx(3 * identity_flux(H)).epsilon(1e-12));
    const auto pi = k.stationary(H);
    double total = 0, jumps = 0;
    for (std::size_t i = 0; i < pi.size(); ++i) {
      REQUIRE(std::isfinite(pi[i]));
      total += pi[i];
      jumps += pi[i] * k.exit_rate(i, H);
    }
    CHECK(total == doctest::Approx(1.0).epsilon(1e-13));
    const double jr = k.jump_rate(H);
    REQUIRE(std::isfinite(jr));
    CHECK(jr == doctest::Approx(jumps).epsilon(1e-13));
  }
}

TEST_CASE("small kernels solve with dense GTH exactly as the solvers do") {
  // At most solvers::kDenseGthLimit states: gth_dense on the kernel's rates,
  // the same arithmetic as solve_stationary<double> when the rates round alike.
  const auto model = bernstein_identity(3);  // 8 states
  REQUIRE(model.size() <= solvers::kDenseGthLimit);
  const NeuronKernel k(model, 1.0, "bernstein-3");
  for (double H : {0.125, 0.5, 0.75}) {  // rates exact in double
    CAPTURE(H);
    CHECK(k.stationary(H) == solvers::solve_stationary<double>(model, Rational(H)).pi);
  }
}

TEST_CASE("EndStateRule: reachability through non-spike transitions equals a breadth-first search") {
  std::mt19937_64 rng(23);
  for (int rep = 0; rep < 200; ++rep) {
    const std::size_t n = 1 + rng() % 12;
    solvers::Model m;
    for (std::size_t i = 0; i < n; ++i) m.states.push_back("S" + std::to_string(i));
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        if (i == j || rng() % 4 != 0) continue;
        solvers::Transition t;
        t.from = i;
        t.to = j;
        // Some transitions identically zero (they never fire): not edges.
        const int kind = static_cast<int>(rng() % 4);
        t.offset.value = kind == 0 ? Rational(0) : Rational(1);
        t.slope.value = kind == 1 ? Rational(1) : Rational(0);
        t.spike = rng() % 3 == 0;
        m.transitions.push_back(t);
      }
    const NeuronKernel k(m, 1.0, "random");
    const EndStateRule rule(k);
    const auto reach = reach_by_bfs(m);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        CAPTURE(rep);
        CAPTURE(i);
        CAPTURE(j);
        CHECK(rule.implies_spike(i, j) == !reach[i][j]);
      }
  }
}

TEST_CASE("EndStateRule on the 502-state Bernstein chain, and the end-state sampler built on it") {
  // Non-spike transitions: A_i <-> A_{i+1} and R_i -> A_i; spikes A_i -> R_i.
  const std::size_t N = 250;
  const auto model = bernstein_identity(N);
  const NeuronKernel k(model, 1.0, "bernstein-250");
  const EndStateRule rule(k);
  CHECK(rule.components() == N + 2);  // {A_0..A_N} and each R_i alone
  const auto A = [](std::size_t i) { return i; };
  const auto R = [N](std::size_t i) { return N + 1 + i; };
  for (std::size_t i = 0; i <= N; i += 7)
    for (std::size_t j = 0; j <= N; j += 5) {
      CAPTURE(i);
      CAPTURE(j);
      CHECK(!rule.implies_spike(A(i), A(j)));
      CHECK(rule.implies_spike(A(i), R(j)));
      CHECK(!rule.implies_spike(R(i), A(j)));
      CHECK(rule.implies_spike(R(i), R(j)) == (i != j));
    }
  const StepSampler s(k, SamplerKind::EndState, 0.01);
  CHECK(s.end_state_implies_spike(static_cast<std::uint32_t>(A(3)), static_cast<std::uint32_t>(R(3))));
  CHECK(!s.end_state_implies_spike(static_cast<std::uint32_t>(R(3)), static_cast<std::uint32_t>(A(200))));
}

TEST_CASE("EndStateRule refuses a table beyond its memory limit, naming the model") {
  // 24000 states without transitions: 24000 components, 24000^2 bits = 69 MB.
  solvers::Model m;
  for (std::size_t i = 0; i < 24000; ++i) m.states.push_back("S" + std::to_string(i));
  const NeuronKernel k(m, 1.0, "wide.json");
  try {
    const EndStateRule rule(k);
    FAIL("no InputError");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("wide.json") != std::string::npos);
    CHECK(what.find("use the exact sampler") != std::string::npos);
  }
  CHECK_NOTHROW(StepSampler(k, SamplerKind::Exact, 0.01));  // only the end-state sampler needs it
}
