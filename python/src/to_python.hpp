// The command layer's Result structs as Python objects: the command's
// document (commands/document.hpp, written by the command's write()) as
// dicts and lists, with the values json.loads would give for its --json
// text (a NaN or an infinity, null there, is None), and numpy arrays for the
// per-trial and per-sample data beyond the document.
#pragma once
#include <pybind11/pybind11.h>

#include "ctmc/commands/bernstein.hpp"
#include "ctmc/commands/counting.hpp"
#include "ctmc/commands/fit.hpp"
#include "ctmc/commands/flux.hpp"
#include "ctmc/commands/formula.hpp"
#include "ctmc/commands/simulate_network.hpp"
#include "ctmc/commands/simulate_neuron.hpp"
#include "ctmc/commands/train.hpp"
#include "ctmc/commands/convert.hpp"
#include "ctmc/commands/check_report.hpp"

namespace ctmc::python {

// flux (a list of rows), counting, formula, bernstein, train, evaluate (a
// list of rows), convert.
template <class Result>
pybind11::object to_python(const Result& r);
// fit: {"model", "result", "certificates" with --certify}; fit --score.
pybind11::object to_python(const commands::FitCommandOptions& o, const commands::FitCommandResult& r);
pybind11::object to_python(const commands::FitCommandOptions& o, const commands::ScoreResult& r);
// With "counts", every trial's N(T) (uint64).
pybind11::object to_python(const commands::NeuronSimResult& r);
// With "predictions" (int64) and "synops" (float64) per (trial, sample), trial-major.
pybind11::object to_python(const commands::NetworkCommandResult& r);
pybind11::object to_python(const commands::ConvertResult& r);
// check: the results document.
pybind11::object to_python(const commands::CheckResult& r);

}  // namespace ctmc::python
