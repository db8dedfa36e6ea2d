// No public entry point leaves a numeric setting changed: Boost's default
// precision of Mpfr and Interval values (the thread's and the process's),
// OpenMP's thread count, and Eigen's thread count
// (ctmc/core/numeric_context.hpp). Each entry point
// runs on a small input with a precision and a thread count other than the
// current ones, and the settings are compared with those before the call.
#include <doctest/doctest.h>
#include <omp.h>

#include <Eigen/Core>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ctmc/proofs_check/flux_identities.hpp"
#include "ctmc/commands/bernstein.hpp"
#include "ctmc/commands/counting.hpp"
#include "ctmc/commands/flux.hpp"
#include "ctmc/sim/engines/if_baseline.hpp"
#include "ctmc/sim/engines/network_sim.hpp"
#include "ctmc/sim/nets/train.hpp"
#include "ctmc/solvers/counting.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/core/numeric_context.hpp"
#include "ctmc/solvers/scalar.hpp"

using namespace ctmc;
using solvers::Affine;
using solvers::Interval;
using solvers::Mpfr;
using solvers::Rational;

namespace {

struct Settings {
  unsigned mpfr_digits10 = Mpfr::thread_default_precision();
  unsigned interval_digits10 = Interval::thread_default_precision();
  unsigned mpfr_process_digits10 = Mpfr::default_precision();
  unsigned interval_process_digits10 = Interval::default_precision();
  int threads = omp_get_max_threads();
  int eigen_threads = Eigen::nbThreads();
  int eigen_setting = ctmc::eigen_thread_setting();  // 0: Eigen follows OpenMP's count
  bool operator==(const Settings&) const = default;
};

// Runs f and checks that the settings afterwards are those before.
void check_restores(const std::string& name, const std::function<void()>& f) {
  CAPTURE(name);
  const Settings before;
  f();
  const Settings after;
  CHECK(after.mpfr_digits10 == before.mpfr_digits10);
  CHECK(after.interval_digits10 == before.interval_digits10);
  CHECK(after.mpfr_process_digits10 == before.mpfr_process_digits10);
  CHECK(after.interval_process_digits10 == before.interval_process_digits10);
  CHECK(after.threads == before.threads);
  CHECK(after.eigen_threads == before.eigen_threads);
  CHECK(after.eigen_setting == before.eigen_setting);
}

solvers::Model three_state() {
  return solvers::three_state_model(Affine{Rational(1), Rational(2)}, Affine{Rational(1), 0},
                                    Affine{Rational(1, 2), Rational(1)}, Affine{Rational(2), 0});
}

// A threshold task on two features: class 1 when x0 > x1.
sim::Dataset threshold_data(int n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  sim::Dataset d;
  d.images = Eigen::MatrixXf(2, n);
  d.labels.resize(n);
  for (int i = 0; i < n; ++i) {
    d.images(0, i) = u(g);
    d.images(1, i) = u(g);
    d.labels[i] = d.images(0, i) > d.images(1, i);
  }
  return d;
}

}  // namespace

TEST_CASE("PrecisionScope and ThreadScope restore the exact previous settings, also when nested") {
  const Settings before;
  {
    const ctmc::PrecisionScope outer(300);
    CHECK(ctmc::precision_bits() >= 300);
    {
      const ctmc::PrecisionScope inner(64);
      CHECK(ctmc::precision_bits() >= 64);
      CHECK(ctmc::precision_bits() < 300);
    }
    CHECK(ctmc::precision_bits() >= 300);
    const ctmc::ThreadScope threads(before.threads + 1);
    CHECK(omp_get_max_threads() == before.threads + 1);
    const ctmc::ThreadScope keep(0);  // 0: the current count
    CHECK(omp_get_max_threads() == before.threads + 1);
  }
  CHECK(Settings() == before);
  CHECK(ctmc::scoped_precision_bits(300) >= 300);
  CHECK(Settings() == before);
}

TEST_CASE("EigenThreadScope restores Eigen's setting: following OpenMP's count, or a fixed count") {
  const Settings before;
  REQUIRE(before.eigen_setting == 0);  // the process's default: Eigen follows OpenMP
  {
    const ctmc::EigenThreadScope serial(1);
    CHECK(Eigen::nbThreads() == 1);
    CHECK(ctmc::eigen_thread_setting() == 1);
    {
      const ctmc::EigenThreadScope keep(0);  // 0: the current setting
      CHECK(Eigen::nbThreads() == 1);
    }
    CHECK(Eigen::nbThreads() == 1);
  }
  CHECK(Settings() == before);
  {
    // Following OpenMP again: a later change of OpenMP's count reaches Eigen.
    const ctmc::ThreadScope more(before.threads + 1);
    CHECK(Eigen::nbThreads() == before.threads + 1);
  }
  // A fixed count, even one equal to OpenMP's, comes back as a fixed count.
  Eigen::setNbThreads(before.threads);
  {
    const ctmc::EigenThreadScope serial(1);
    CHECK(Eigen::nbThreads() == 1);
  }
  CHECK(ctmc::eigen_thread_setting() == before.threads);
  Eigen::setNbThreads(0);  // back to following OpenMP
  CHECK(Settings() == before);
}

TEST_CASE("the solvers' and commands' entry points leave precision and threads as they found them") {
  const auto model = three_state();
  check_restores("run_flux mpfr", [&] {
    commands::FluxOptions o;
    o.h_list = "0,1/2";
    o.precision = 300;
    commands::run_flux(model, "three-state", o);
  });
  for (auto a : {commands::Arithmetic::Mpfr, commands::Arithmetic::Exact}) {
    check_restores("run_counting", [&] {
      commands::CountingOptions o;
      o.h_text = "1/2";
      o.t_text = "3";
      o.arithmetic = a;
      o.precision = 200;
      commands::run_counting(model, "three-state", o);
    });
  }
  check_restores("counting_moments<Mpfr>", [&] {
    const ctmc::PrecisionScope precision(128);  // the caller's precision: the guard bits are added to it
    const std::vector<Mpfr> pi0{Mpfr(1), Mpfr(0), Mpfr(0)};
    solvers::counting_moments<Mpfr>(model, Rational(1, 2), pi0, Mpfr(2), "three-state");
  });
  check_restores("run_bernstein", [&] {
    commands::BernsteinOptions o;
    o.activation = "sigmoid";
    o.domain = "-2,2";
    o.n = 8;
    o.precision = 100;
    commands::run_bernstein(o);
  });
  check_restores("check_family", [&] {
    proofs_check::FluxCheckOptions o;
    o.rational_points = 4;
    o.mpfr_random_points = 2;
    o.stiff_random_points = 2;
    o.precisions = {96, 160};
    o.threads = 1;
    proofs_check::check_family(proofs_check::family_case(proofs_check::FluxFamily::ThreeState), o);
  });
}

TEST_CASE("the simulator's entry points leave the thread counts as they found them") {
  // train_mlp, simulate_network and simulate_if run the dense kernels
  // (sim/nets/src/dense_kernels.hpp), which keep Eigen single-threaded inside;
  // with OpenMP at 2 threads or more, Eigen's count before differs from 1.
  const ctmc::ThreadScope at_least_two(omp_get_max_threads() + 1);
  const sim::Dataset train = threshold_data(64, 1), test = threshold_data(16, 2);
  sim::TrainConfig cfg;
  cfg.hidden = {4};
  cfg.epochs = 1;
  cfg.batch_size = 16;
  cfg.threads = omp_get_max_threads() + 1;
  sim::Mlp net;
  check_restores("train_mlp", [&] { net = sim::train_mlp(train, cfg, 2).net; });
  check_restores("simulate_network", [&] {
    sim::NetworkSimOptions opt;
    opt.snn.T = 0.2;
    opt.snn.dt = 0.01;
    opt.snn.tau = 0.05;
    opt.rate = 20;
    opt.trials = 1;
    opt.threads = omp_get_max_threads() + 1;
    sim::simulate_network(net, train, test, {{three_state(), "three-state"}}, opt);
  });
  check_restores("simulate_if", [&] {
    sim::IfOptions opt;
    opt.steps = 4;
    opt.threads = omp_get_max_threads() + 1;
    sim::simulate_if(net, train, test, opt);
  });
}
