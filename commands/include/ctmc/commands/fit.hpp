// fit --activation NAME --domain LO,HI --family F ... [--json]: least-squares
// fit of a family's stationary flux to alpha * phi (paper eq. 3; the method,
// bounds and every figure: analysis/fit.hpp);
// fit --score MODEL: a given chain's errors on the same data, no fit;
// --certify with either: the certificates of the chain (fit_certificates.hpp).
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ctmc/analysis/fit.hpp"
#include "ctmc/commands/document.hpp"
#include "ctmc/commands/model_input.hpp"
#include "ctmc/proofs_check/chain_sup.hpp"
#include "ctmc/proofs_check/fit_optimality.hpp"

namespace ctmc::commands {

// --gradient's names of analysis::GradientMethod.
const char* gradient_name(analysis::GradientMethod g);

struct FitCommandOptions {
  std::string activation, domain, family = "three-state", samples, weights, alpha = "1", output;
  std::optional<ModelInput> warm_start, score;
  std::size_t states = 0;  // 0: the family's own (4 for general)
  std::size_t points = 401;
  // The search as the library takes it, defaults there: starts, seed,
  // threads, max_iterations, basin_rounds, mpfr_bits (--precision, also the
  // certificates' MPFI bits), widen_on_bound (off: --no-widen). Its
  // gradient is set from `gradient` by run_fit.
  analysis::FitOptions search;
  std::string gradient = gradient_name(analysis::FitOptions{}.gradient);  // analytic or jet
  // --rate-bound (rate_bound) and --min-rate (min_const_rate).
  analysis::FitBounds bounds;
  // --certify: the certificates of the scored or fitted chain.
  // family_given: --family was on the command line (with --score, the
  // chain must then be of that family).
  bool certify = false, family_given = false;
};
// Every numeric option, before anything is read or fitted.
void check_fit_options(const FitCommandOptions& o);
// The fit's target and data (checks the options first).
analysis::FitProblem fit_problem(const FitCommandOptions& o);

// fit --certify: the certified sup |nu - alpha phi| over the domain, and for
// a two- or three-state chain the certified lower bound on that family's
// least-squares optimum within the bounds. A fitted chain whose flux is not
// defined somewhere on the domain (several closed classes between the data
// points) gets sup_error instead of sup; a scored one is an InputError.
struct CertifyRun {
  std::optional<proofs_check::ChainSupResult> sup;
  std::string sup_error;
  std::optional<analysis::FamilySpec> family;  // the closed family certified, if any
  std::optional<proofs_check::OptimalityResult> optimum;
};
// `fitted`: the chain is the fit of o.family (else a scored chain: with
// o.family_given it must be of that family, InputError naming --certify
// otherwise; without, the family is recognised from its transitions).
// `mse`: the chain's MSE on the data.
CertifyRun run_certify(const FitCommandOptions& o, const analysis::FitProblem& p, const solvers::Model& model,
                       double mse, bool fitted);
void write(DocumentWriter& w, const CertifyRun& c);
nlohmann::ordered_json to_json(const CertifyRun& c);

// A fit as run: its options (with the warm start's seeded starts), result
// and the warm start's own MSE, as given.
struct FitRun {
  analysis::FitOptions options;
  analysis::FitResult result;
  std::optional<double> warm_mse;
  std::size_t warm_states = 0;
};
struct FitCommandResult {
  analysis::FitProblem problem;
  FitRun run;
  std::optional<CertifyRun> certificates;  // with --certify
};
// Fits (writing the model to o.output when given), then certifies with
// o.certify. Nothing is printed or returned half-done: a bad --certify
// throws after the fit.
FitCommandResult run_fit(const FitCommandOptions& o);
// `fit --json`: the fitted model JSON, its meta with "certificates" under --certify.
nlohmann::ordered_json to_json(const FitCommandResult& r);
// The fit as one document for the Python module: {"model": the fitted model
// JSON, "result": the figures the CLI prints in text mode (parameters, MSE,
// hops, ...), "certificates" under --certify}.
void write(DocumentWriter& w, const FitCommandOptions& o, const FitCommandResult& r);

// fit --score MODEL: the model's MSE and max error against the target on the
// fit's data (MPFR at --precision bits on the exact model), without fitting.
struct ScoreResult {
  analysis::FitProblem problem;
  solvers::Model model;
  analysis::ExactErrors errors;
  std::optional<CertifyRun> certificates;  // with --certify
};
ScoreResult run_score(const FitCommandOptions& o);
void write(DocumentWriter& w, const FitCommandOptions& o, const ScoreResult& r);
nlohmann::ordered_json to_json(const FitCommandOptions& o, const ScoreResult& r);

}  // namespace ctmc::commands
