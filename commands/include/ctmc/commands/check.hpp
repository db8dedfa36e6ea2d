// The claims checker (`ctmc-snn check CLAIMS.json`, `ctmc_snn.check`):
// values another implementation computed, each checked against this
// toolkit and answered Pass, Fail or Not checkable with the evidence.
//
// CLAIMS.json: {"claims": [CLAIM, ...], "meta": {...}} (meta free-form).
// Every claim has "id" (unique string), "kind" and optional "note"; numbers
// are exact decimal or p/q strings, or JSON numbers read from their decimal
// text; "model" is a model file (relative to the claims file's folder) or an
// inline model object (README "Model files"). Kinds:
//   flux        model, H, value                 stationary spike flux F(H)
//   stationary  model, H, pi {state: value}     stationary distribution
//   counting    model, H, T, [start], any of mean, variance, fano_T (finite T
//               from the start, default the stationary law), rate,
//               variance_rate, fano (asymptotic)
//   fit         model, activation, domain, [points 401], [alpha 1], any of
//               mse, max_error                  the chain's errors against alpha phi
//               (ctmc-snn fit --score: MPFR re-evaluation on the grid);
//               with "family" instead of "model" (a published MSE without its
//               chain): our fit of that family (64 starts, --seed) reaching
//               the claimed value is Pass (attainable), staying above it is
//               Not checkable (it refutes nothing)
//   simulation  model, H, T, trials, mean, [variance], [start], [alpha 1],
//               [false_alarm 1e-3]              an empirical N(T) mean and
//               variance from `trials` runs, tested against the exact E N(T)
//               and Var N(T): two-sided z tests at false_alarm / 2 each, the
//               variance's standard error from the fourth moment of our own
//               simulation (max(trials, 20000) runs at --seed)
//   network     net (manifest), data (folder) and/or test_images, test_labels,
//               train_images, train_labels (.npy or FILE.safetensors:NAME),
//               [normalize], neurons (a model file or an array of them), the
//               configuration as `simulate network` (T, dt, tau, rate, scale,
//               limit, subset, layer_alpha) with the conversion study's
//               conventions (sampler, readout, trace_weight, output_scale;
//               defaults as the CLI's), [trials 1], [false_alarm 1e-3], any
//               of A_ANN, A_MF (percent; deterministic, compared like fit
//               values), A_SNN (percent) and SynOps (per sample), means over
//               the claim's trials, t-tested against our own run of the same
//               configuration (max(trials, 10) trials at --seed): se^2 =
//               sd^2 (1/n_claim + 1/n_ours) with sd our per-trial spread,
//               Student t with n_ours - 1 degrees of freedom, two-sided at
//               false_alarm / (values tested) each
// "tolerance" (optional): "exact" (the default for flux, stationary and the
// asymptotic counting values, compared in exact rationals), "digits" (right
// to the last digit written: |claimed - ours| <= half a unit there; the
// default for fit and the finite-T counting values), {"relative": r} or
// {"absolute": a}. Finite-T counting values are MPFR at --precision bits:
// "exact" there means within 2^-(precision - 16) relative.
//
// Paths (model, net, neurons, data, test_images ..., "subset": "index:FILE",
// "activation": "table:FILE") resolve against the claims file's folder
// (CheckOptions::base_dir when given) and must lie inside it, symbolic links
// followed, unless CheckOptions::allow_outside_paths; a path holding a NUL
// byte, or naming anything but a regular file (a folder for "data"), is
// refused before it is opened, so a FIFO never blocks the check.
//
// Verdicts and the exit status: Pass, Fail, or Not checkable (the claim is
// well formed but this toolkit cannot answer it: a chain with several closed
// classes at H, a Fano factor of a chain that never spikes, a family's MSE
// our fit does not reach, a reference run beyond its budget). A claim that
// was not checked is never a pass: check_exit_status is 1 when a claim
// failed, and also when one is Not checkable unless
// CheckOptions::allow_unchecked.
//
// Errors: a malformed claims file is an InputError naming the file, the claim
// (by id, or by index) and the field, before anything is computed. A network
// claim's configuration (T, dt, tau, rate, layer_alpha, neurons, subset,
// limit, trials against the work budgets of simulate_network) is part of
// that: an invalid one is malformed, never Not checkable.
//
// Output: claim ids and every other text from the file are escaped wherever
// they are printed: Markdown (report.md, md_text), CSV (claims.csv: RFC 4180
// quoting and a leading ' before a text that a spreadsheet would take for a
// formula, claims_csv_field), the terminal (claims_terminal_text: control
// characters as \n, \xNN) and error messages (quote_excerpt).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "ctmc/commands/document.hpp"
#include "ctmc/commands/verdict.hpp"

namespace ctmc::commands {

// The verdicts of a claim and of its rows are the tool's one verdict type
// (verdict.hpp); the checker names them as a test does: Pass (Reproduced),
// Fail (Not reproduced), Not checkable (Not comparable), Inconclusive.
const char* check_verdict_name(Verdict v);

struct CheckOptions {
  // Our side's computations: the seed of the reference simulations (and of
  // the family fits), their threads (0: all cores; no result depends on
  // it), and the MPFR precision of finite-T counting values and fit errors.
  unsigned long long seed = 1;
  int threads = 0;
  unsigned precision = 256;
  // The folder relative paths resolve against and are confined to; empty:
  // the claims file's folder (the Python module passes the current folder
  // for a dict of claims, whose file is a temporary one).
  std::string base_dir;
  // Paths may name files outside base_dir (`check --allow-outside-paths`).
  bool allow_outside_paths = false;
  // Not checkable claims leave the exit status 0 (`check --allow-unchecked`).
  bool allow_unchecked = false;
  // The folder the report replaces whole (<out>/check;
  // check_claims_report sets it): neither the claims file nor a
  // path it names may lie in it.
  std::string replaced_folder;
  // A network claim whose reference run would take longer than this
  // (estimated from its neuron-steps at the engine's measured speed,
  // sim::estimated_network_seconds) is refused before anything runs
  // (`check --max-seconds`), in [kMinMaxSeconds, kMaxMaxSeconds].
  double max_seconds = 600;
};
inline constexpr double kMinMaxSeconds = 1e-3, kMaxMaxSeconds = 1e9;
// The one check of --max-seconds, for the CLI and the Python module alike
// (run_check makes it): InputError naming --max-seconds outside the range.
void check_max_seconds(double max_seconds);

// Reads and validates a claims file as run_check does before it computes
// anything (model, network and data files named by the claims are read too);
// returns the number of claims. InputError as run_check.
std::size_t validate_claims(const std::string& claims_path, const CheckOptions& options = {});

// One result row per claim and quantity, its texts as the claims file and
// our computation give them (escaped only where they are printed).
struct CheckRow {
  std::string id, kind, quantity, claimed, ours, difference, tolerance;
  Verdict verdict = Verdict::NotComparable;
  std::string evidence;
};
struct CheckResult {
  std::string claims_file;
  std::vector<CheckRow> results;
  // The verdict of each claim (Pass, Fail or Not checkable), by id in the
  // file's order.
  std::vector<std::pair<std::string, Verdict>> verdicts;
  int passed = 0, failed = 0, not_checkable = 0;
};

// Checks every claim of the file.
CheckResult run_check(const std::string& claims_path, const CheckOptions& options = {});
// The exit status of a check: 0 when every claim passed (or was Not
// checkable, with allow_unchecked), 1 otherwise.
int check_exit_status(const CheckResult& r, const CheckOptions& options);

// The results document: {"claims_file", "results": [one row per claim and
// quantity: id, kind, quantity, claimed, ours, difference, tolerance,
// verdict, evidence], "verdicts": {id: verdict}, "passed", "failed",
// "not_checkable"} (results.json, check --json).
void write(commands::DocumentWriter& w, const CheckResult& r);
nlohmann::ordered_json to_json(const CheckResult& r);

}  // namespace ctmc::commands
