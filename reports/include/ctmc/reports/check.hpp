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
// Errors: a malformed claims file is an InputError naming the file, the claim
// (by id, or by index) and the field, before anything is computed.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "ctmc/reports/registry.hpp"

namespace ctmc::reports {

// Reads and validates a claims file as check_claims does before it computes
// anything (model, network and data files named by the claims are read too);
// returns the number of claims. InputError as check_claims.
std::size_t validate_claims(const std::string& claims_path);

// Checks every claim of the file; returns {"claims_file", "results": [one
// row per claim and quantity: id, kind, quantity, claimed, ours, difference,
// tolerance, verdict, evidence], "verdicts": {id: verdict}, "passed",
// "failed", "not_checkable"}. ctx: seed, threads and precision.
nlohmann::ordered_json check_claims(const std::string& claims_path, const ReportContext& ctx);

// check_claims, then the report folder <ctx.out_root>/check/ (report.md,
// results.json, claims.csv, meta.json). Returns the exit status: 0 when no
// claim failed, 1 otherwise.
int check_claims_report(const std::string& claims_path, const ReportContext& ctx, nlohmann::ordered_json* out = nullptr);

}  // namespace ctmc::reports
