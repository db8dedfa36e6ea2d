// The bodies of the computing subcommands (cli/cmd_*.cpp), shared with the
// Python module (python/src/core_*.cpp) so that both give the same numbers
// bit for bit: each takes the command's options, checks what the CLI's
// parser alone would not, runs the library calls and returns the document
// that `ctmc-snn <command> --json` prints (the CLI prints it with dump(2),
// or turns it into text). Errors are InputError: the checks here name the
// CLI's options ("--H: ..."); the libraries' errors name their parameters
// ("trials: ..."), which option_message (command_text.hpp) shows under the
// option ("--trials: ...").
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ctmc/analysis/fit.hpp"
#include "ctmc/proofs_check/chain_sup.hpp"
#include "ctmc/proofs_check/fit_optimality.hpp"
#include "ctmc/reports/limits.hpp"
#include "ctmc/sim/dataset.hpp"
#include "ctmc/sim/manifest.hpp"
#include "ctmc/sim/network_sim.hpp"
#include "ctmc/solvers/model.hpp"

namespace ctmc::reports {

// A model given as a file path (read as MODEL.json is, messages naming the
// path) or as JSON text (`source` names it in messages and output).
struct ModelInput {
  std::string text;    // path when is_path, else JSON text
  std::string source;  // name in messages and output
  bool is_path = false;
};
solvers::Model load_model(const ModelInput& in);
inline ModelInput model_file(const std::string& path) { return ModelInput{path, path, true}; }

// The scalar a command computes in: MPFR at a precision (the default),
// exact rationals, or IEEE double.
enum class Arithmetic { Mpfr, Exact, Double };

// CLI11's Range(53, 100000) on --precision, for callers without that parser.
unsigned checked_precision(unsigned precision);

// flux MODEL --H LIST [--precision BITS | --exact | --double] --json
struct FluxOptions {
  std::string h_list;  // comma-separated, exact decimals or p/q
  Arithmetic arithmetic = Arithmetic::Mpfr;
  unsigned precision = 256;
};
// One row per H. Every H is solved before the document is returned: a bad H
// throws with nothing half-built.
nlohmann::ordered_json flux_json(const solvers::Model& model, const std::string& source, const FluxOptions& o);

// counting MODEL --H h --T t [--from S] [--precision BITS | --double | --exact] --json
// (--exact: the asymptotic quantities exact, the finite horizon in MPFR).
struct CountingOptions {
  std::string h_text, t_text, from;
  Arithmetic arithmetic = Arithmetic::Mpfr;
  unsigned precision = 256;
};
nlohmann::ordered_json counting_json(const solvers::Model& model, const std::string& source,
                                     const CountingOptions& o);

// formula MODEL --json
nlohmann::ordered_json formula_json(const solvers::Model& model, const std::string& source);

// bernstein --activation NAME --domain LO,HI [--rho R | --rho-factor F]
//           (--N N | --eps E) [--precision BITS] [--cap N] [--bracket R] --json
struct BernsteinOptions {
  std::string activation, domain, rho, rho_factor, eps;
  std::optional<std::int64_t> n;
  unsigned precision = 128;
  std::int64_t cap = 1000000;
  double bracket = 0;
};
// "refuted" counts the claims found false (the CLI then exits 1).
nlohmann::ordered_json bernstein_json(const BernsteinOptions& o);

// fit and fit --score: the options of `ctmc-snn fit`, defaults as there.
struct FitCommandOptions {
  std::string activation, domain, family = "three-state", samples, weights, alpha = "1", output;
  std::optional<ModelInput> warm_start, score;
  std::size_t states = 0, points = 401;
  int starts = 64, threads = 0, max_iterations = 200, basin_rounds = analysis::FitOptions{}.basin_rounds;
  std::string gradient = "analytic";
  unsigned long long seed = 1;
  double rate_bound = 1000, min_rate = 1e-6;
  unsigned precision = 128;
  bool no_widen = false;
  // --certify: the certificates of the scored or fitted chain.
  // family_given: --family was on the command line (with --score, the
  // chain must then be of that family).
  bool certify = false, family_given = false;
};
// Every numeric option, before anything is read or fitted.
void check_fit_options(const FitCommandOptions& o);
// The fit's target and data (checks the options first).
analysis::FitProblem fit_problem(const FitCommandOptions& o);

// A fit as run: its options (with the warm start's seeded starts), result
// and the warm start's own MSE, as given.
struct FitRun {
  analysis::FitOptions options;
  analysis::FitResult result;
  std::optional<double> warm_mse;
  std::size_t warm_states = 0;
};
// Fits (writing the model to o.output when given).
FitRun run_fit(const FitCommandOptions& o, const analysis::FitProblem& p);
// The fitted model JSON (with its meta) under "model", and under "result"
// the figures the CLI prints in text mode (parameters, MSE, hops, ...).
nlohmann::ordered_json fit_json(const FitCommandOptions& o, const analysis::FitProblem& p, const FitRun& r);
nlohmann::ordered_json fit_json(const FitCommandOptions& o);

// fit --score MODEL: the model's MSE and max error against the target on the
// fit's data (MPFR at --precision bits on the exact model), without fitting.
struct ScoreRun {
  solvers::Model model;
  analysis::ExactErrors errors;
};
ScoreRun run_score(const FitCommandOptions& o, const analysis::FitProblem& p);
nlohmann::ordered_json score_json(const FitCommandOptions& o, const analysis::FitProblem& p, const ScoreRun& s);
nlohmann::ordered_json score_json(const FitCommandOptions& o);

// fit --certify: the certified sup |nu - alpha phi| over the domain, and for
// a two- or three-state chain the certified lower bound on that family's
// least-squares optimum within the bounds. `fitted`: the chain is the fit of
// o.family (else a scored chain: with o.family_given it must be of that
// family, InputError naming --certify otherwise; without, the family is
// recognised from its transitions). `mse`: the chain's MSE on the data.
// A fitted chain whose flux is not defined somewhere on the domain (several
// closed classes between the data points) gets sup_error instead of sup; a
// scored one is an InputError.
struct CertifyRun {
  std::optional<proofs_check::ChainSupResult> sup;
  std::string sup_error;
  std::optional<analysis::FamilySpec> family;  // the closed family certified, if any
  std::optional<proofs_check::OptimalityResult> optimum;
};
CertifyRun run_certify(const FitCommandOptions& o, const analysis::FitProblem& p, const solvers::Model& model,
                       double mse, bool fitted);
nlohmann::ordered_json certify_json(const CertifyRun& c);

// simulate neuron MODEL --H h --T t --trials n [--seed s] [--threads k]
//                 [--start stationary|STATE] [--alpha a] --json
struct NeuronSimOptions {
  std::string h, start = "stationary";
  double T = 0, alpha = 1;
  std::size_t trials = 1000;
  unsigned long long seed = 1;
  int threads = 0;
  // Refused before anything is allocated when the trials' counts and
  // per-block tallies (neuron_sim_memory_bytes) need more than this.
  std::uint64_t max_memory_bytes = std::uint64_t(4) << 30;
};
// The memory a simulation of `trials` trials of an n-state chain holds: a
// count per trial (and its JSON number with_counts) and a tally per block of
// 256 trials.
std::uint64_t neuron_sim_memory_bytes(std::size_t trials, std::size_t states, bool with_counts);
// The agreement of the simulated mean and variance of N(T) with the exact
// values is judged (agreement.ok) with at least this many trials, at |z| <
// agreement.threshold.
inline constexpr std::size_t kMinCheckedTrials = 100;
// with_counts: also "counts", each trial's N(T) (beyond the CLI's document).
nlohmann::ordered_json simulate_neuron_json(const ModelInput& model, const NeuronSimOptions& o,
                                            bool with_counts = false);

// simulate network ... [--if p99.9|p100 [--v0 V] [--if-steps N]] --json
struct NetworkCommandOptions {
  sim::NetworkSimOptions opt;  // the numbers: T, tau, dt, rate, trials, seed, threads, limit
  std::string sampler = "exact", readout = "spike", scale = "q99", trace_weight = "integral",
              output_scale = "logits", subset = "all", layer_alpha;
  std::string if_norm;  // empty: no IF baseline
  double v0 = 0;
  int if_steps = 32;
};
// What the network runs on, each read when the command gets to it (after the
// options are checked), and the names the document gives them.
struct NetworkInputs {
  std::function<std::vector<sim::NeuronModel>()> neurons;
  std::function<sim::Mlp()> net;
  // The same manifest as a layer graph (load_net), for a net that `net`
  // refuses for its convolutions or pooling; unset: dense nets only.
  std::function<sim::Net()> graph;
  std::function<sim::DatasetSplit()> data;
  std::string net_name, data_name;
};
// with_runs: also "predictions" and "synops" per (trial, sample),
// trial-major (beyond the CLI's document).
nlohmann::ordered_json simulate_network_json(const NetworkCommandOptions& o, const NetworkInputs& in,
                                             bool with_runs = false);

}  // namespace ctmc::reports
