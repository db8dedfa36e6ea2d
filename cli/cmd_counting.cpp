// ctmc-snn counting MODEL.json --H h --T t [--from STATE] [--precision BITS | --double | --exact] [--json]
//
// Spike-count statistics of a model at a constant input H (DESIGN.md
// section 5): E[N(T)] and Var N(T) at the finite horizon T from the
// stationary distribution (or from a given state), by the Van Loan block
// exponential; the asymptotic rate lambda, variance rate lim Var N(T)/T and
// Fano factor from the Markovian-arrival-process formulas. --exact gives the
// asymptotic quantities exactly (the finite-T part then runs in MPFR at
// --precision bits).
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>

#include "command.hpp"
#include "scalar_text.hpp"
#include "ctmc/solvers/counting.hpp"
#include "ctmc/solvers/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/model.hpp"

namespace ctmc::cli {
namespace {

struct CountingOptions {
  std::string model_path;
  std::string h_text;
  std::string t_text;
  std::string from;
  unsigned precision = 256;
  bool use_double = false;
  bool exact = false;
  bool json = false;
};

// Finite-horizon moments in T (double or Mpfr), from pi0 given in exact or T values.
template <class T>
solvers::CountingMoments<T> finite_moments(const solvers::Model& m, const CountingOptions& o, const solvers::Rational& h,
                                           const solvers::Rational& horizon, const std::vector<T>& pi0) {
  return solvers::counting_moments<T>(m, h, pi0, solvers::from_rational<T>(horizon), o.model_path);
}

template <class A, class F>
void run_counting(const CountingOptions& o) {
  const auto model = solvers::read_model_file(o.model_path);
  const auto h = solvers::parse_input_value(o.h_text, "--H");
  const auto horizon = solvers::parse_input_value(o.t_text, "--T");
  if (horizon <= 0) throw InputError(fmt::format("--T: '{}' must be > 0", o.t_text));
  {
    // Every mode runs the matrix exponential of (rates x T), whose scaling
    // step is planned in double: T must be finite (and, in --double, nonzero)
    // there.
    const double t_double = solvers::from_rational<double>(horizon);
    if (!std::isfinite(t_double))
      throw InputError(fmt::format("--T: '{}' is beyond the range of double (at most about 1.8e308)", o.t_text));
    if (std::is_same_v<F, double> && !(t_double > 0))
      throw InputError(fmt::format("--T: '{}' rounds to 0 in double arithmetic (use the default MPFR mode)", o.t_text));
  }
  const auto as = solvers::asymptotic_counting<A>(model, h, o.model_path);
  std::vector<F> pi0(model.size(), F(0));
  std::string start = "stationary";
  if (!o.from.empty()) {
    std::size_t idx;
    try {
      idx = model.state_index(o.from);
    } catch (const std::out_of_range&) {
      throw InputError(fmt::format("--from: unknown state '{}' in {}", o.from, o.model_path));
    }
    pi0[idx] = F(1);
    start = o.from;
  } else {
    for (std::size_t i = 0; i < model.size(); ++i) {
      if constexpr (std::is_same_v<A, F>)
        pi0[i] = as.theta[i];
      else
        pi0[i] = solvers::from_rational<F>(as.theta[i]);
    }
  }
  const auto mom = finite_moments<F>(model, o, h, horizon, pi0);
  const unsigned p = o.precision;
  nlohmann::ordered_json j;
  j["model"] = o.model_path;
  j["H"] = solvers::exact_text(h);
  j["T"] = solvers::exact_text(horizon);
  j["start"] = start;
  j["mean"] = show(mom.mean, p);
  j["variance"] = show(mom.variance, p);
  j["fano_T"] = mom.mean > 0 ? show(F(mom.variance / mom.mean), p) : std::string("undefined (no spikes)");
  j["rate"] = show(as.rate, p);
  j["variance_rate"] = show(as.variance_rate, p);
  j["fano"] = as.rate > 0 ? show(as.fano(), p) : std::string("undefined (no spikes)");
  if (o.json) {
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("model {} at H = {}, T = {}, start: {}\n", o.model_path, j["H"].get<std::string>(),
             j["T"].get<std::string>(), start);
  fmt::print("  E[N(T)]            = {}\n", j["mean"].get<std::string>());
  fmt::print("  Var N(T)           = {}\n", j["variance"].get<std::string>());
  fmt::print("  Var N(T) / E[N(T)] = {}\n", j["fano_T"].get<std::string>());
  fmt::print("  rate lambda        = {}\n", j["rate"].get<std::string>());
  fmt::print("  variance rate      = {}\n", j["variance_rate"].get<std::string>());
  fmt::print("  Fano factor        = {}\n", j["fano"].get<std::string>());
}

Register reg([](CLI::App& root) {
  auto o = std::make_shared<CountingOptions>();
  auto* cmd = root.add_subcommand("counting", "Spike-count mean, variance and Fano factor of a model at input H");
  cmd->add_option("model", o->model_path, "Model JSON file")->required();
  cmd->add_option("--H", o->h_text, "Input value (exact decimal or p/q)")->required();
  cmd->add_option("--T", o->t_text, "Time horizon T > 0 (exact decimal or p/q)")->required();
  cmd->add_option("--from", o->from, "Start in this state (default: the stationary distribution)");
  auto* prec = cmd->add_option("--precision", o->precision, "MPFR precision in bits")->capture_default_str()
                   ->check(CLI::Range(53u, 100000u));
  auto* dbl = cmd->add_flag("--double", o->use_double, "IEEE double arithmetic")->excludes(prec);
  cmd->add_flag("--exact", o->exact, "Exact rational asymptotic rate/variance rate (finite T in MPFR)")->excludes(dbl);
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o] {
    if (o->use_double) {
      run_counting<double, double>(*o);
    } else {
      solvers::set_precision_bits(o->precision);
      if (o->exact)
        run_counting<solvers::Rational, solvers::Mpfr>(*o);
      else
        run_counting<solvers::Mpfr, solvers::Mpfr>(*o);
    }
  });
});

}  // namespace
}  // namespace ctmc::cli
