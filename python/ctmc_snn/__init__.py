"""ctmc_snn: the ctmc-snn toolkit from Python (README "Python module").

Thin over the C++ libraries: every function runs the same library code as the
matching ``ctmc-snn`` command and returns the document that command prints with
``--json``, as a dict, with exact values as ``fractions.Fraction``, MPFR values
as decimal strings (``float()`` reads them; a ``*_float`` key beside them where
useful) and arrays as numpy arrays. For the same inputs and seed the numbers
are the CLI's, bit for bit.

Inputs
  model   a path to a model JSON file, a JSON string, or a dict of the same
          schema (README "Model files"); offsets and slopes may be strings
          ("5/48"), ints, ``Fraction`` or floats.
  H, T, rates: ``Fraction``, int, str ("0.1" is 1/10, "1/3") or float. A float
          is read from its shortest decimal text, ``repr(x)``: 0.1 means 1/10,
          as a JSON number or the CLI's ``--H 0.1`` does.

Units: a model's rates are per unit of time and H is the neurons' input in
the units of the model's slopes; every time (T, tau, dt) is in that unit of
time, so a flux or a rate r is in spikes per unit time. SynOps are counts per
test image, accuracies percentages.

Errors: bad input raises ``ValueError`` with the CLI's one-line message (the
CLI prints it after ``ctmc-snn: ``); nothing a user passes crashes the
interpreter.
"""

import decimal as _decimal
import fractions as _fractions
import json as _json
import numbers as _numbers
import os as _os
import tempfile as _tempfile
from typing import Any as _Any, Optional as _Optional, Sequence as _Sequence, Union as _Union

import numpy as _np

from . import _core

# Keyword defaults, read once from the C++ commands' default option values
# (written there once; tests/python/test_ctmc_snn.py compares every keyword).
_D = _core.defaults()

# Argument types of the public functions.
Number = _Union[int, float, str, _fractions.Fraction, _decimal.Decimal]
Model = _Union[str, "_os.PathLike[str]", dict]

__all__ = ["flux", "stationary", "counting", "formula", "bernstein", "fit", "score", "simulate_neuron",
           "simulate_network", "train", "evaluate", "convert", "check", "exact_text", "Number", "Model"]


# ---------------------------------------------------------------- conversions

def exact_text(x: _Any, what: str = "value") -> str:
    """The exact text of a number as the toolkit reads it ("1/3", "0.1", "-2")."""
    if isinstance(x, bool):
        raise ValueError(f"{what}: expected a number, got a bool")
    if isinstance(x, _fractions.Fraction):
        return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
    if isinstance(x, _numbers.Integral):
        return str(int(x))
    if isinstance(x, _decimal.Decimal):
        if not x.is_finite():
            raise ValueError(f"{what}: '{x}' is not a finite number")
        return str(x)
    if isinstance(x, _numbers.Real):
        v = float(x)
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError(f"{what}: '{v}' is not a finite number")
        return repr(v)
    if isinstance(x, str):
        return x
    if hasattr(x, "__array__") and _np.ndim(_np.asarray(x)) == 0:
        return exact_text(_np.asarray(x).item(), what)
    raise ValueError(f"{what}: expected a number (int, float, Fraction or str), got {type(x).__name__}")


def _jsonable(obj, path="model"):
    """A model dict made JSON-ready: Fraction and Decimal as exact strings, numpy scalars as _numbers."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if not isinstance(k, str):
                raise ValueError(f"{path}: key {k!r} is not a string")
            out[k] = _jsonable(v, f"{path}.{k}")
        return out
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v, f"{path}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, (_fractions.Fraction, _decimal.Decimal)):
        return exact_text(obj, path)
    if isinstance(obj, _np.generic):
        return _jsonable(obj.item(), path)
    if obj is None or isinstance(obj, (str, bool, int, float)):
        return obj
    raise ValueError(f"{path}: cannot be written as JSON ({type(obj).__name__})")


def _model(model):
    """(text, source, is_path) for _core: a path is read as the CLI reads MODEL.json."""
    if isinstance(model, _os.PathLike):
        model = _os.fspath(model)
    if isinstance(model, str):
        if model.lstrip().startswith("{"):
            return (model, "model", False)
        if not model:
            raise ValueError("model: empty path")
        return (model, model, True)
    if isinstance(model, dict):
        return (_json.dumps(_jsonable(model), allow_nan=True), "model", False)
    raise ValueError(f"model: expected a file path, a JSON string or a dict, got {type(model).__name__}")


def _is_many(h):
    if isinstance(h, (str, bytes, _fractions.Fraction, _decimal.Decimal, _numbers.Number)):
        return False
    if hasattr(h, "__array__"):  # numpy arrays and tensors: a 0-d one is one H
        return _np.ndim(_np.asarray(h)) > 0
    return isinstance(h, (list, tuple))


def _h_items(h, what="H"):
    texts = []
    for x in (_np.asarray(h).ravel().tolist() if hasattr(h, "__array__") else h):
        t = exact_text(x, "--" + what)
        if "," in t:
            raise ValueError(f"--{what}: '{t}' is not one number")
        texts.append(t)
    if not texts:
        raise ValueError(f"--{what}: empty list")
    return texts


def _uint(x, what, bits=32):
    """A whole number in [0, 2^bits) for a C++ unsigned parameter: ValueError otherwise (not a TypeError)."""
    if isinstance(x, bool) or not isinstance(x, _numbers.Integral) or not 0 <= int(x) < 2 ** bits:
        raise ValueError(f"{what}: {x!r} is not a whole number in [0, 2^{bits})")
    return int(x)


def _int(x, what):
    if isinstance(x, bool) or not isinstance(x, _numbers.Integral) or not -2 ** 63 <= int(x) < 2 ** 63:
        raise ValueError(f"{what}: {x!r} is not a whole number")
    return int(x)


def _float(x, what):
    if isinstance(x, bool) or not isinstance(x, (_numbers.Real, str)):
        raise ValueError(f"{what}: {x!r} is not a number")
    try:
        return float(x)
    except ValueError:
        raise ValueError(f"{what}: {x!r} is not a number") from None


def _fraction(text):
    return _fractions.Fraction(text)


def _check_mode(mode):
    if mode not in ("exact", "mpfr", "double"):
        raise ValueError(f"mode: '{mode}' is not one of exact, mpfr, double")


def _domain(domain):
    if domain is None:
        return ""
    if isinstance(domain, str):
        return domain
    try:
        lo, hi = domain
    except (TypeError, ValueError):
        raise ValueError("--domain: expected LO,HI (two numbers)") from None
    return exact_text(lo, "--domain") + "," + exact_text(hi, "--domain")


# ---------------------------------------------------------------- solvers

def _row(row, mode):
    """A flux row of the CLI with the values typed: Fraction (exact), float (double), str + float (mpfr)."""
    keys = ("flux", "closed_form_value", "difference")
    if mode == "exact":
        row["pi"] = {k: _fraction(v) for k, v in row["pi"].items()}
        for k in keys:
            if k in row:
                row[k] = _fraction(row[k])
    elif mode == "double":
        row["pi"] = {k: float(v) for k, v in row["pi"].items()}
        for k in keys:
            if k in row:
                row[k] = float(row[k])
    else:
        row["pi_float"] = {k: float(v) for k, v in row["pi"].items()}
        for k in keys:
            if k in row:
                row[k + "_float"] = float(row[k])
    return row


def stationary(model: Model, H: _Union[Number, _Sequence[Number]], mode: str = _D["stationary"]["mode"],
               precision: int = _D["stationary"]["precision"]) -> _Union[dict, list]:
    """Stationary distribution and spike flux at H (``ctmc-snn flux --json``).

    One H gives a dict {"H", "pi": {state: value}, "flux", and for a known
    meta.family its closed form and the difference}; a list of H a list of them.
    """
    _check_mode(mode)
    many = _is_many(H)
    items = _h_items(H) if many else _h_items([H])
    rows = _core.flux(*_model(model), items, mode, _uint(precision, "--precision"))
    rows = [_row(r, mode) for r in rows]
    return rows if many else rows[0]


def flux(model: Model, H: _Union[Number, _Sequence[Number]], mode: str = _D["flux"]["mode"],
         precision: int = _D["flux"]["precision"]) -> _Any:
    """The stationary spike flux F(H) by GTH (the ``flux`` of ``ctmc-snn flux``).

    mode "exact": a Fraction; "mpfr": the decimal string the CLI prints
    (``float()`` reads it); "double": a float. Many H (a list or an array):
    a list, or in double mode a numpy array of the shape of H.
    """
    _check_mode(mode)
    if mode == "double" and _is_many(H):
        shape = _np.shape(H)
        return _core.flux_double(*_model(model), _h_items(H)).reshape(shape)
    r = stationary(model, H, mode, precision)
    return [x["flux"] for x in r] if isinstance(r, list) else r["flux"]


def counting(model: Model, H: Number, T: Number, start: _Optional[str] = _D["counting"]["start"],
             mode: str = _D["counting"]["mode"], precision: int = _D["counting"]["precision"]) -> dict:
    """Spike-count statistics at input H over [0, T] (``ctmc-snn counting --json``).

    Keys: "mean" E N(T), "variance" Var N(T), "fano_T" their ratio, "rate"
    (the flux), "variance_rate" lim Var N(T)/T, "fano" the asymptotic Fano
    factor. start: a state name (default: the stationary distribution).
    mode "exact": rate, variance_rate and fano as Fractions (finite T in MPFR
    at `precision`, decimal strings); "mpfr": decimal strings with "*_float"
    beside them; "double": floats.
    """
    _check_mode(mode)
    d = _core.counting(*_model(model), exact_text(H, "--H"), exact_text(T, "--T"), "" if start is None else str(start),
                      mode, _uint(precision, "--precision"))
    keys = ("mean", "variance", "fano_T", "rate", "variance_rate", "fano")
    for k in keys:
        v = d[k]
        if v.startswith("undefined"):
            d[k] = None
            d[k + "_note"] = v
        elif mode == "double":
            d[k] = float(v)
        elif mode == "exact" and k in ("rate", "variance_rate", "fano"):
            d[k] = _fraction(v)
        else:
            d[k + "_float"] = float(v)
    return d


def formula(model: Model) -> dict:
    """The stationary-flux formula by the Markov chain tree theorem (``ctmc-snn formula --json``).

    d["flux"]["latex"] is the LaTeX of F = num / den; d["symbols"] the legend.
    """
    return _core.formula(*_model(model))


# ---------------------------------------------------------------- proofs_check

def bernstein(activation: str, domain: _Union[str, _Sequence[Number]], N: _Optional[int] = _D["bernstein"]["N"],
              eps: _Optional[Number] = _D["bernstein"]["eps"], rho: _Optional[Number] = _D["bernstein"]["rho"],
              rho_factor: _Optional[Number] = _D["bernstein"]["rho_factor"],
              precision: int = _D["bernstein"]["precision"], cap: int = _D["bernstein"]["cap"],
              bracket: float = _D["bernstein"]["bracket"]) -> dict:
    """The paper's Bernstein theorem and corollary for one target (``ctmc-snn bernstein --json``).

    Give N (sup error and bounds at N) or eps (smallest N). d["refuted"] counts
    refuted claims (the CLI then exits 1).
    """
    return _core.bernstein(
        str(activation), _domain(domain), "" if rho is None else exact_text(rho, "--rho"),
        "" if rho_factor is None else exact_text(rho_factor, "--rho-factor"), None if N is None else _int(N, "--N"),
        "" if eps is None else exact_text(eps, "--eps"), _uint(precision, "--precision"), _int(cap, "--cap"),
        _float(bracket, "--bracket"))


# ---------------------------------------------------------------- analysis

class _ValuesFile:
    """Samples or weights given as an array: written to a temporary file, one exact value a line, for the
    library's file reader (the same reader as the CLI's --samples / --weights). Its name in messages and
    output is `label`."""

    def __init__(self, values, option, label):
        self.path = None
        self.option = option
        self.label = label
        if values is None or isinstance(values, (str, _os.PathLike)):
            self.spec = "" if values is None else _os.fspath(values)
            return
        lines = [exact_text(v, option) for v in _np.asarray(values, dtype=object).ravel().tolist()]
        fd, self.path = _tempfile.mkstemp(prefix="ctmc_snn_", suffix=".txt")
        with _os.fdopen(fd, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.spec = self.path

    def rename(self, text):
        return text.replace(self.path, self.label) if self.path else text

    def close(self):
        if self.path:
            _os.unlink(self.path)


def _fit_common(activation, domain, samples, weights, kw):
    files = [_ValuesFile(samples, "--samples", "samples"), _ValuesFile(weights, "--weights", "weights")]
    args = {"activation": str(activation), "domain": _domain(domain), "samples": files[0].spec,
            "weights": files[1].spec}
    for k, v in kw.items():
        if v is None:
            continue
        if k == "alpha":
            v = exact_text(v, "--alpha")
        args[k] = v
    return args, files


def _run_with_files(fn, args, files):
    try:
        return fn(args)
    except ValueError as e:
        msg = str(e)
        for f in files:
            msg = f.rename(msg)
        raise ValueError(msg) from None
    finally:
        for f in files:
            f.close()


def _rename_all(d, files):
    for f in files:
        if f.path and isinstance(d.get("data"), str):
            d["data"] = f.rename(d["data"])
    return d


def fit(activation: str, domain: _Optional[_Union[str, _Sequence[Number]]] = _D["fit"]["domain"],
        family: str = _D["fit"]["family"], states: _Optional[int] = _D["fit"]["states"],
        points: int = _D["fit"]["points"], samples: _Any = _D["fit"]["samples"], weights: _Any = _D["fit"]["weights"],
        starts: int = _D["fit"]["starts"], seed: int = _D["fit"]["seed"], threads: int = _D["fit"]["threads"],
        alpha: Number = _D["fit"]["alpha"], rate_bound: float = _D["fit"]["rate_bound"],
        min_rate: float = _D["fit"]["min_rate"], max_iterations: int = _D["fit"]["max_iterations"],
        basin_rounds: _Optional[int] = _D["fit"]["basin_rounds"], gradient: str = _D["fit"]["gradient"],
        precision: int = _D["fit"]["precision"], no_widen: bool = _D["fit"]["no_widen"],
        warm_start: _Optional[Model] = _D["fit"]["warm_start"], output: _Optional[str] = _D["fit"]["output"],
        certify: bool = _D["fit"]["certify"]) -> dict:
    """Least-squares fit of a family's flux to alpha * activation (``ctmc-snn fit --json``).

    Returns {"model": the fitted model dict (as the CLI prints it, with its
    meta), "theta": numpy array of the parameters ("parameter_names" beside
    it), "mse", "max_abs_error", "start_mse" (numpy), hops, bounds, ...}.
    certify: also "certificates" (``--certify``): the certified sup |error|
    over the domain and, for two- and three-state fits, the certified bound
    on the family's optimum. samples / weights: a file path or an array of
    values. Releases the GIL.
    """
    kw = {"family": family, "states": states, "points": points, "starts": starts, "seed": seed, "threads": threads,
          "alpha": alpha, "rate_bound": _float(rate_bound, "--rate-bound"), "min_rate": _float(min_rate, "--min-rate"),
          "max_iterations": max_iterations, "basin_rounds": basin_rounds, "gradient": gradient,
          "precision": precision, "no_widen": bool(no_widen), "certify": bool(certify),
          "warm_start": None if warm_start is None else _model(warm_start),
          "output": None if output is None else _os.fspath(output)}
    args, files = _fit_common(activation, domain, samples, weights, kw)
    d = _run_with_files(_core.fit, args, files)
    res = _rename_all(d["result"], files)
    res["theta"] = _np.array(res["theta"], dtype=_np.float64)
    res["start_mse"] = _np.array(res["start_mse"], dtype=_np.float64)
    res["model"] = d["model"]
    if "certificates" in d:
        res["certificates"] = d["certificates"]
    return res


def score(model: Model, activation: str, domain: _Optional[_Union[str, _Sequence[Number]]] = _D["score"]["domain"],
          samples: _Any = _D["score"]["samples"], weights: _Any = _D["score"]["weights"],
          points: int = _D["score"]["points"], alpha: Number = _D["score"]["alpha"],
          precision: int = _D["score"]["precision"], rate_bound: float = _D["score"]["rate_bound"],
          min_rate: float = _D["score"]["min_rate"], certify: bool = _D["score"]["certify"],
          family: _Optional[str] = _D["score"]["family"]) -> dict:
    """MSE and max |error| of a model against alpha * activation, without fitting (``ctmc-snn fit --score``).

    certify: also "certificates" (``--certify``): the certified sup |error|
    over the domain and, for a two- or three-state chain, the certified
    bound on its family's optimum; with family given, the chain must be of
    that family (ValueError otherwise).
    """
    kw = {"points": points, "alpha": alpha, "precision": precision, "rate_bound": _float(rate_bound, "--rate-bound"),
          "min_rate": _float(min_rate, "--min-rate"), "score": _model(model), "certify": bool(certify)}
    if family is not None:
        kw["family"] = str(family)
        kw["family_given"] = True
    args, files = _fit_common(activation, domain, samples, weights, kw)
    return _rename_all(_run_with_files(_core.score, args, files), files)


# ---------------------------------------------------------------- sim

def simulate_neuron(model: Model, H: Number, T: float, trials: int = _D["simulate_neuron"]["trials"],
                    seed: int = _D["simulate_neuron"]["seed"], threads: int = _D["simulate_neuron"]["threads"],
                    start: str = _D["simulate_neuron"]["start"], alpha: float = _D["simulate_neuron"]["alpha"]) -> dict:
    """Exact Gillespie simulation at a fixed H (``ctmc-snn simulate neuron --json``).

    T is the window in the model's unit of time; alpha multiplies every rate.

    Empirical N(T) statistics beside the exact ones, z-scores and "ok"; also
    "counts", every trial's N(T) (numpy uint64).
    """
    d = _core.simulate_neuron(*_model(model), {
        "H": exact_text(H, "--H"), "T": _float(T, "--T"), "trials": _uint(trials, "--trials", 64),
        "seed": _uint(seed, "--seed", 64), "threads": _int(threads, "--threads"), "start": str(start),
        "alpha": _float(alpha, "--alpha")})
    return d


def _tensor(x, name):
    """(float64 C array, name): every dtype numpy reads (float32, float16, ints, bools) is exact in float64."""
    try:
        a = _np.asarray(x)
    except Exception as e:  # a tensor on a GPU, or no __array__
        raise ValueError(f"{name}: cannot be read as an array ({e})") from None
    if a.dtype == object or not (_np.issubdtype(a.dtype, _np.number) or a.dtype == _np.bool_):
        raise ValueError(f"{name}: expected a numeric array, got dtype {a.dtype}")
    return (_np.ascontiguousarray(a, dtype=_np.float64), name)


def _layers_of_state_dict(sd, activation, name):
    """Dense layers from a state_dict: every 2-d "<prefix>weight" in order, with "<prefix>bias" if present."""
    keys = list(sd.keys())
    weights = [k for k in keys if k.endswith("weight") and _np.ndim(sd[k]) == 2]
    if not weights:
        raise ValueError(f"{name}: no 2-d '*.weight' tensors (nn.Linear layers) in the state_dict")
    if activation is None:
        raise ValueError(f"{name}: give activation= (the hidden layers' activation, or one per layer)")
    acts = [activation] * (len(weights) - 1) + ["linear"] if isinstance(activation, str) else list(activation)
    if len(acts) != len(weights):
        raise ValueError(f"{name}: {len(acts)} activations for {len(weights)} layers")
    layers = []
    for k, act in zip(weights, acts):
        b = k[: -len("weight")] + "bias"
        layers.append({"weight": _tensor(sd[k], k), "bias": _tensor(sd[b], b) if b in sd else None,
                       "activation": str(act)})
    return layers


def simulate_network(net: _Any, data: _Any, neurons: _Union[Model, _Sequence[Model]],
                     T: float = _D["simulate_network"]["T"], tau: float = _D["simulate_network"]["tau"],
                     rate: float = _D["simulate_network"]["rate"], dt: float = _D["simulate_network"]["dt"],
                     trials: int = _D["simulate_network"]["trials"], seed: int = _D["simulate_network"]["seed"],
                     threads: int = _D["simulate_network"]["threads"], sampler: str = _D["simulate_network"]["sampler"],
                     readout: str = _D["simulate_network"]["readout"], scale: str = _D["simulate_network"]["scale"],
                     limit: int = _D["simulate_network"]["limit"], subset: str = _D["simulate_network"]["subset"],
                     trace_weight: str = _D["simulate_network"]["trace_weight"],
                     output_scale: str = _D["simulate_network"]["output_scale"],
                     layer_alpha: _Any = _D["simulate_network"]["layer_alpha"],
                     normalize: _Any = _D["simulate_network"]["normalize"],
                     activation: _Any = _D["simulate_network"]["activation"],
                     if_norm: _Optional[str] = _D["simulate_network"]["if_norm"],
                     v0: float = _D["simulate_network"]["v0"], if_steps: int = _D["simulate_network"]["if_steps"],
                     kernel: str = _D["simulate_network"]["kernel"],
                     conv_path: str = _D["simulate_network"]["conv_path"]) -> dict:
    """ANN vs mean-field vs spiking CTMC network (``ctmc-snn simulate network --json``).

    T (window), tau (trace time constant) and dt (step) are in the neuron
    models' unit of time; rate is r, the layer rate scale in spikes per unit
    time (alpha_l = r / q99_l). Accuracies are in percent, SynOps per image.

    net: a manifest path; a torch-style state_dict (name -> array or tensor,
         nn.Linear weights [out, in]) with activation= the hidden layers'
         activation name (or one per layer, the last "linear"); or a dict
         {"layers": [{"weight": NAME, "bias": NAME, "activation": ...}],
         "state_dict": {...}} naming the tensors as a manifest does.
    data: a data folder, or a dict with "test_images", "test_labels" and
         optionally "train_images", "train_labels" (arrays, anything with
         __array__, or "FILE.npy" / "FILE.safetensors:NAME" specs) and "dir".
         Images (n, features...) or (n, C, H, W), values as given.
    neurons: a model (path, JSON or dict) or a list of them, one per spiking layer.
    if_norm: "p99.9" or "p100" adds the integrate-and-fire baseline (--if, with v0 and if_steps).
    kernel: "auto" (vectorised for the exact and end-state samplers),
         "vectorised" or "reference" (the same law from other random
         numbers); conv_path: "auto", "event" or "dense" (how spikes reach a
         convolution; the same numbers).
    Also returns "predictions" and "synops" per (trial, sample) as numpy arrays.
    """
    args = {"T": _float(T, "--T"), "tau": _float(tau, "--tau"), "rate": _float(rate, "--rate"),
            "dt": _float(dt, "--dt"), "trials": _uint(trials, "--trials", 31), "seed": _uint(seed, "--seed", 64),
            "threads": _int(threads, "--threads"), "sampler": str(sampler), "kernel": str(kernel),
            "conv_path": str(conv_path), "readout": str(readout),
            "scale": str(scale), "limit": _int(limit, "--limit"), "subset": str(subset),
            "trace_weight": str(trace_weight), "output_scale": str(output_scale)}
    if if_norm is not None:
        args.update(if_norm=str(if_norm), v0=_float(v0, "--v0"), if_steps=_int(if_steps, "--if-steps"))
    if layer_alpha is not None:
        args["layer_alpha"] = layer_alpha if isinstance(layer_alpha, str) else ",".join(
            "auto" if a is None or a == "auto" else repr(_float(a, "--layer-alpha")) for a in layer_alpha)
    if normalize is not None:
        args["normalize"] = normalize if isinstance(normalize, str) else "{}/{}".format(
            ",".join(repr(float(v)) for v in _np.atleast_1d(normalize[0])),
            ",".join(repr(float(v)) for v in _np.atleast_1d(normalize[1])))
    if isinstance(net, (str, _os.PathLike)):
        args["net_path"] = _os.fspath(net)
    elif isinstance(net, dict) and "layers" in net and "state_dict" in net:
        sd = net["state_dict"]
        layers = []
        for i, l in enumerate(net["layers"]):
            for key in ("weight", "activation"):
                if key not in l:
                    raise ValueError(f"net: layers[{i}]: missing \"{key}\"")
            for key in ("weight", "bias"):
                if key in l and l[key] not in sd:
                    raise ValueError(f"net: layers[{i}]: tensor '{l[key]}' is not in the state_dict")
            layers.append({"weight": _tensor(sd[l["weight"]], l["weight"]),
                           "bias": _tensor(sd[l["bias"]], l["bias"]) if "bias" in l else None,
                           "activation": str(l["activation"])})
        args["layers"] = layers
    elif hasattr(net, "keys"):
        args["layers"] = _layers_of_state_dict(net, activation, "net")
    else:
        raise ValueError(f"net: expected a manifest path or a state_dict, got {type(net).__name__}")
    if isinstance(data, (str, _os.PathLike)):
        args["dir"] = _os.fspath(data)
    elif isinstance(data, dict):
        known = {"dir", "test_images", "test_labels", "train_images", "train_labels"}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"data: unknown key(s) {sorted(unknown)} (known: {sorted(known)})")
        if data.get("dir") is not None:
            args["dir"] = _os.fspath(data["dir"])
        arrays = False
        for key in ("test_images", "test_labels", "train_images", "train_labels"):
            v = data.get(key)
            if v is None:
                continue
            if isinstance(v, (str, _os.PathLike)):
                args[key + "_spec"] = _os.fspath(v)
            else:
                args[key] = _tensor(v, key)
                arrays = True
        if arrays:
            args["data_name"] = "arrays" + (" + " + _os.fspath(data["dir"]) if data.get("dir") else "")
    else:
        raise ValueError(f"data: expected a folder or a dict of arrays, got {type(data).__name__}")
    ns = neurons if isinstance(neurons, (list, tuple)) else [neurons]
    args["neurons"] = [_model(n) for n in ns]
    return _core.simulate_network(args)


# ---------------------------------------------------------------- networks

_Path = _Union[str, "_os.PathLike[str]"]


def _widths(hidden):
    if isinstance(hidden, str):
        return hidden
    if isinstance(hidden, _numbers.Integral) and not isinstance(hidden, bool):
        return str(int(hidden))
    return ",".join(str(_uint(h, "--hidden")) for h in hidden)


def _c_int(x, what):
    """A whole number that a C int holds (the command checks its range)."""
    x = _int(x, what)
    if not -2 ** 31 <= x < 2 ** 31:
        raise ValueError(f"{what}: {x} is not in [{-2 ** 31}, {2 ** 31 - 1}]")
    return x


def train(data: _Path, output: _Path, activation: str = _D["train"]["activation"], arch: str = _D["train"]["arch"],
          hidden: _Optional[_Union[str, int, _Sequence[int]]] = _D["train"]["hidden"],
          width: _Optional[float] = _D["train"]["width"], train_limit: int = _D["train"]["train_limit"],
          epochs: int = _D["train"]["epochs"], batch: int = _D["train"]["batch"], lr: float = _D["train"]["lr"],
          seed: int = _D["train"]["seed"], threads: int = _D["train"]["threads"],
          max_memory: _Optional[float] = _D["train"]["max_memory"]) -> dict:
    """Train a source network (``ctmc-snn train --json``): softmax cross-entropy, Adam.

    data: a data folder (IDX or CIFAR-10 binary). output: the manifest to write; the weights go beside it as
    <stem>.safetensors. arch "mlp" (hidden: widths, default 256,128) or "vgg11" (width: the scale of VGG-11's
    channel counts 64..512, in (0, 16], default 1). train_limit: the first N training images (0: all);
    lr: Adam's learning rate. max_memory: refuse a training estimated to need more memory than this (GiB;
    None: the machine's memory).

    Returns {"output", "arch", "seconds" (wall time, s), "train_accuracy", "test_accuracy" (fractions in [0, 1]),
    "epochs": [{"epoch", "loss" (mean cross-entropy, nats), "train_accuracy"}]}.
    """
    args = {"data": _os.fspath(data), "output": _os.fspath(output), "activation": str(activation),
            "arch": str(arch), "train_limit": _c_int(train_limit, "--train-limit"),
            "epochs": _c_int(epochs, "--epochs"), "batch": _c_int(batch, "--batch"),
            "lr": _float(lr, "--lr"), "seed": _uint(seed, "--seed", 64), "threads": _int(threads, "--threads")}
    if hidden is not None:
        args["hidden"] = _widths(hidden)
    if width is not None:
        args["width"] = _float(width, "--width")
    if max_memory is not None:
        args["max_memory"] = _float(max_memory, "--max-memory")
    return _core.train(args)


def evaluate(net: _Path, data: _Path, clip: _Union[str, float, _Sequence[_Union[str, float]]] = _D["evaluate"]["clip"],
             predictions: _Optional[_Path] = _D["evaluate"]["predictions"],
             max_memory: _Optional[float] = _D["evaluate"]["max_memory"]) -> list:
    """Test accuracy of a network manifest (``ctmc-snn evaluate --json``), dense or convolutional.

    data: a data folder. clip: clip levels K > 0 (clip-on-forward [0, K] hidden activations; "inf": none), a
    comma-separated text or a sequence. predictions: a file to write the predicted class of every test image
    to, one per line (one clip level). max_memory: refuse a network whose forward pass is estimated to need more
    memory than this for one test image (GiB; None: the machine's memory). Logits that are not finite are
    refused, naming the first layer where they appear.

    Returns [{"clip": K or "inf", "test_accuracy": fraction in [0, 1]}] per clip level.
    """
    if not isinstance(clip, str):
        clip = ",".join(str(c) for c in clip) if isinstance(clip, (list, tuple)) else str(clip)
    args = {"net": _os.fspath(net), "data": _os.fspath(data), "clip": clip}
    if predictions is not None:
        args["predictions"] = _os.fspath(predictions)
    if max_memory is not None:
        args["max_memory"] = _float(max_memory, "--max-memory")
    return _core.evaluate(args)


def convert(net: _Path, data: _Path, output_dir: _Path, fit_images: int = _D["convert"]["fit_images"],
            samples: int = _D["convert"]["samples"], starts: int = _D["convert"]["starts"],
            output_activation: _Optional[str] = _D["convert"]["output_activation"], seed: int = _D["convert"]["seed"],
            threads: int = _D["convert"]["threads"]) -> dict:
    """One CTMC neuron per spiking layer of a trained net (``ctmc-snn convert``), fitted where the layer's
    preactivations lie, written to output_dir (whole or not at all) with the commands that run the spiking net.

    data: a data folder (its training images give the preactivations). fit_images: training images sampled;
    samples: preactivation quantiles per layer (the fit's points); starts: multistart starts per fit.

    Returns {"folder", "layers": [{"target", "family", "neuron_file", "samples_file", "units", "values", "images",
    "lo", "hi" (the fit's domain), "mse", "max_abs_error" (of the fit on its samples)}], "simulate_command",
    "sweep_command"}.
    """
    args = {"net": _os.fspath(net), "data": _os.fspath(data), "output_dir": _os.fspath(output_dir),
            "fit_images": _int(fit_images, "--fit-images"), "samples": _uint(samples, "--samples", 64),
            "starts": _int(starts, "--starts"), "seed": _uint(seed, "--seed", 64),
            "threads": _int(threads, "--threads")}
    if output_activation is not None:
        args["output_activation"] = str(output_activation)
    return _core.convert(args)


# ---------------------------------------------------------------- claims

def check(claims: _Union[str, "_os.PathLike[str]", dict], out: _Optional[str] = _D["check"]["out"],
          seed: int = _D["check"]["seed"], threads: int = _D["check"]["threads"],
          precision: int = _D["check"]["precision"], allow_outside_paths: bool = _D["check"]["allow_outside_paths"],
          allow_unchecked: bool = _D["check"]["allow_unchecked"],
          max_seconds: float = _D["check"]["max_seconds"]) -> dict:
    """Check another implementation's claims (``ctmc-snn check CLAIMS.json --json``; format: README
    "Checking another implementation's claims").

    claims: a claims file path, or a dict of the same schema (its relative paths are taken from the current
    folder, which they must not leave, as a file's must not leave its folder, unless allow_outside_paths).
    Returns {"results": [...], "verdicts": {id: "Pass" | "Fail" | "Not checkable"}, "passed", "failed",
    "not_checkable", "exit_status"}: exit_status is the CLI's, 0 when every claim passed, 1 when one failed
    or was Not checkable (0 for Not checkable with allow_unchecked). With out=FOLDER also writes the report
    folder FOLDER/check/. max_seconds: a network claim whose reference run would take longer (estimated from its
    neuron-steps before anything runs) is refused (``--max-seconds``).
    """
    tmp = None
    base_dir = ""
    if isinstance(claims, dict):
        doc = _jsonable(claims, "claims")
        # The checker reads paths relative to the claims file, which is a temporary one here: relative to
        # (and confined to) the current folder instead.
        base_dir = _os.getcwd()
        tmp = _tempfile.mkdtemp(prefix="ctmc_snn_claims_")
        path = _os.path.join(tmp, "claims.json")
        with open(path, "w") as f:
            _json.dump(doc, f)
    elif isinstance(claims, (str, _os.PathLike)):
        path = _os.fspath(claims)
    else:
        raise ValueError(f"claims: expected a file path or a dict, got {type(claims).__name__}")
    try:
        d, status = _core.check(path, "" if out is None else _os.fspath(out), _uint(seed, "--seed", 64),
                                   _int(threads, "--threads"), _uint(precision, "--precision"), base_dir,
                                   bool(allow_outside_paths), bool(allow_unchecked), _float(max_seconds, "--max-seconds"))
    except ValueError as e:
        msg = str(e)
        if tmp:
            msg = msg.replace(path, "claims")
        raise ValueError(msg) from None
    finally:
        if tmp:
            _os.unlink(path)
            _os.rmdir(tmp)
    if tmp:
        d["claims_file"] = "claims"
        for r in d["results"]:
            r["evidence"] = r["evidence"].replace(path, "claims")
    d["exit_status"] = status
    return d
