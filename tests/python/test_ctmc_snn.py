"""Tests of the Python module ctmc_snn (CTest "python").

Run from the build tree: PYTHONPATH=<build>/python, CTMC_CLI=<the ctmc-snn
binary> (tests/CMakeLists.txt sets both). References are independent: exact
rationals from the closed forms computed here, and the CLI's own --json
output for the bit-for-bit agreement tests.
"""

import fractions
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import threading
import unittest

from conv_fixture import write_conv_net

import numpy as np

import ctmc_snn
from ctmc_snn import _core

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.environ.get("CTMC_SOURCE_DIR", os.path.join(HERE, "..", "..")))
FIXTURES = os.path.join(SOURCE, "tests", "fixtures")
CLI = os.environ.get("CTMC_CLI", os.path.join(SOURCE, "build", "cli", "ctmc-snn"))
F = fractions.Fraction


def two_state(a_offset, a_slope, d):
    return {"states": ["B", "R"],
            "transitions": [{"from": "B", "to": "R", "offset": a_offset, "slope": a_slope, "spike": True},
                            {"from": "R", "to": "B", "offset": d}],
            "meta": {"family": "two-state"}}


def run_cli(*args):
    p = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def cli_json(*args):
    rc, out, err = run_cli(*args, "--json")
    if rc not in (0, 1):
        raise AssertionError(f"ctmc-snn {' '.join(map(str, args))}: exit {rc}: {err}")
    return json.loads(out)


class TempDir:
    def __enter__(self):
        self.t = tempfile.TemporaryDirectory(prefix="ctmc_py_")
        return self.t.name

    def __exit__(self, *exc):
        self.t.cleanup()


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


class ExactValues(unittest.TestCase):
    """Against closed forms computed here in exact rationals."""

    def test_two_state_flux_exact_from_dict_string_and_file(self):
        a0, a1, d = F(1, 3), F(2), F(5, 7)
        for h in (F(1, 4), F(3), F(-1, 7)):
            a = max(F(0), a0 + a1 * h)
            expected = a * d / (a + d)
            m = two_state(a0, a1, d)  # Fractions in the dict
            self.assertEqual(ctmc_snn.flux(m, h, mode="exact"), expected)
            self.assertEqual(ctmc_snn.flux(json.dumps(two_state("1/3", 2, "5/7")), str(h), mode="exact"), expected)
        with TempDir() as t:
            path = write(os.path.join(t, "m.json"), json.dumps(two_state("1/3", "2", "5/7")))
            self.assertEqual(ctmc_snn.flux(path, "1/4", mode="exact"), F(5, 6) * F(5, 7) / (F(5, 6) + F(5, 7)))

    def test_float_inputs_mean_their_decimal_text(self):
        # 0.1 is 1/10, as a JSON number or the CLI's --H 0.1 (not the binary double).
        m = two_state(0, 1, 3)
        a = F(1, 10)
        self.assertEqual(ctmc_snn.flux(m, 0.1, mode="exact"), a * 3 / (a + 3))
        self.assertEqual(ctmc_snn.flux(two_state(0.1, 0, 3), 0, mode="exact"), a * 3 / (a + 3))

    def test_three_state_eq2(self):
        # Paper eq. (2): F = a c d / (d (a + b + c) + a c), a = H, b = 1/2, c = 1/3 + 2H, d = 2.
        m = {"states": ["B", "G", "R"], "transitions": [
            {"from": "B", "to": "G", "offset": 0, "slope": 1},
            {"from": "G", "to": "B", "offset": "0.5"},
            {"from": "G", "to": "R", "offset": "1/3", "slope": 2, "spike": True},
            {"from": "R", "to": "B", "offset": 2}], "meta": {"family": "three-state"}}
        h = F(3, 5)
        a, b, c, d = h, F(1, 2), F(1, 3) + 2 * h, F(2)
        expected = a * c * d / (d * (a + b + c) + a * c)
        s = ctmc_snn.stationary(m, h, mode="exact")
        self.assertEqual(s["flux"], expected)
        self.assertEqual(s["closed_form_value"], expected)
        self.assertEqual(s["difference"], 0)
        w = {"B": d * (b + c), "G": a * d, "R": a * c}
        total = sum(w.values())
        self.assertEqual(s["pi"], {k: v / total for k, v in w.items()})

    def test_mpfr_and_double(self):
        m = two_state("1/3", 2, "5/7")
        a, d = F(1, 3) + 2 * F(1, 4), F(5, 7)
        expected = a * d / (a + d)
        text = ctmc_snn.flux(m, "1/4", mode="mpfr", precision=256)
        self.assertIsInstance(text, str)
        # 256 bits carry about 77 digits: compare 70 of them exactly as decimals.
        self.assertLess(abs(F(text) - expected), F(1, 10 ** 70))
        self.assertEqual(float(text), float(expected))
        s = ctmc_snn.stationary(m, "1/4")
        self.assertEqual(s["flux_float"], float(expected))
        hs = np.array([[0.25, 1.0], [2.0, -0.125]])
        got = ctmc_snn.flux(m, hs, mode="double")
        self.assertEqual(got.shape, (2, 2))
        for h, g in zip(hs.ravel(), got.ravel()):
            a = max(F(0), F(1, 3) + 2 * F(repr(float(h))))
            ref = float(a * d / (a + d))
            self.assertLessEqual(abs(g - ref), 4 * np.spacing(ref) + 0.0)
        # A 0-d array (or tensor) is one H.
        self.assertEqual(ctmc_snn.flux(m, ArrayLike(0.25), mode="exact"), expected)
        # Double GTH: within a few ulps of the correctly rounded value.
        self.assertLessEqual(abs(ctmc_snn.flux(m, np.float32(0.25), mode="double") - float(expected)),
                             4 * np.spacing(float(expected)))
        self.assertEqual([ctmc_snn.flux(m, h, mode="exact") for h in ("0", "1")],
                         ctmc_snn.flux(m, ["0", "1"], mode="exact"))

    def test_counting_two_state_exact(self):
        # Alternating renewal with exponential phases: rate a d/(a+d), Fano (a^2 + d^2)/(a + d)^2.
        a, d = F(3, 2), F(5, 7)
        m = two_state(a, 0, d)
        c = ctmc_snn.counting(m, 0, 4, mode="exact")
        self.assertEqual(c["rate"], a * d / (a + d))
        self.assertEqual(c["fano"], (a * a + d * d) / (a + d) ** 2)
        self.assertEqual(c["variance_rate"], c["fano"] * c["rate"])
        # Stationary start: E N(T) = rate T exactly; MPFR text to 70 digits.
        self.assertLess(abs(F(c["mean"]) - a * d / (a + d) * 4), F(1, 10 ** 70))
        cd = ctmc_snn.counting(m, 0, 4, mode="double")
        self.assertAlmostEqual(cd["mean"], float(a * d / (a + d) * 4), delta=1e-13)
        # From B: no spike can have happened by T -> 0, and none before leaving B.
        c0 = ctmc_snn.counting(m, 0, "1e-30", start="R", mode="exact")
        self.assertLess(abs(F(c0["mean"])), F(1, 10 ** 50))

    def test_formula(self):
        f = ctmc_snn.formula(two_state(0, 1, 3))
        self.assertEqual(f["states"], ["B", "R"])
        self.assertEqual(len(f["symbols"]), 2)
        self.assertIn("frac", f["flux"]["latex"])
        self.assertEqual(f["spanning_trees"], 2)

    def test_score_of_exact_relu_copy_is_small(self):
        # F = a d/(a+d) with a = H, d huge approximates relu; the error is computed here:
        # max over [0, 1] of H - H d / (H + d) = H^2 / (H + d) at H = 1.
        d = F(10 ** 6)
        s = ctmc_snn.score(two_state(0, 1, d), "relu", domain=(0, 1), points=11)
        self.assertAlmostEqual(s["max_abs_error"], float(F(1) / (1 + d)), delta=1e-18)
        self.assertEqual(s["max_abs_error_at"], 1.0)

    def test_score_certify(self):
        # F = a d/(a+d), a = max(0, 1 + H/2), d = 2 against the sigmoid on [-3, 3]:
        # the certified sup bounds a dense evaluation here and the grid maximum.
        m = two_state(1, F(1, 2), 2)
        s = ctmc_snn.score(m, "sigmoid", domain=(-3, 3), points=61, certify=True)
        sup = s["certificates"]["sup_abs_error"]
        dense = 0.0
        for k in range(20001):
            h = -3 + 6 * k / 20000
            a = max(0.0, 1 + h / 2)
            dense = max(dense, abs(2 * a / (a + 2) - 1 / (1 + math.exp(-h))))
        self.assertLessEqual(dense, sup["upper"])
        self.assertLessEqual(s["max_abs_error"], sup["upper"])
        self.assertLessEqual(sup["upper"], sup["lower"] * 1.01 + 1e-12)
        self.assertEqual(s["certificates"]["optimality"]["family"], "two-state")
        self.assertLessEqual(s["certificates"]["optimality"]["lower_bound"], s["mse"])
        with self.assertRaisesRegex(ValueError, "not a three-state chain"):
            ctmc_snn.score(m, "sigmoid", domain=(-3, 3), points=61, certify=True, family="three-state")

    def test_score_samples_array(self):
        d = F(4)
        samples = [F(0), F(1, 2), F(1)]
        s = ctmc_snn.score(two_state(0, 1, d), "relu", samples=samples)
        errs = [h - h * d / (h + d) for h in samples]
        self.assertAlmostEqual(s["mse"], float(sum(e * e for e in errs) / 3), delta=1e-16)
        self.assertIn("samples", s["data"])
        self.assertNotIn("ctmc_snn_", s["data"])  # no temporary file name


class CliAgreement(unittest.TestCase):
    """Python and the CLI agree bit for bit: the same JSON document for the same inputs and seed."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="ctmc_py_")
        self.dir = self.tmp.name
        self.model = write(os.path.join(self.dir, "m.json"), json.dumps(two_state("1/3", "2", "5/7")))
        self.three = os.path.join(FIXTURES, "three_state_family.json")

    def tearDown(self):
        self.tmp.cleanup()

    def test_flux_every_mode(self):
        for model in (self.model, self.three):
            for mode, flag in (("exact", ["--exact"]), ("double", ["--double"]), ("mpfr", ["--precision", "300"])):
                cli = cli_json("flux", model, "--H", "0.25,3,-1/7", *flag)
                raw = _core.flux(model, model, True, ["0.25", "3", "-1/7"], mode, 300)
                self.assertEqual(raw, cli, (model, mode))
                py = ctmc_snn.stationary(model, ["0.25", "3", "-1/7"], mode=mode, precision=300)
                for row, c in zip(py, cli):
                    conv = F if mode == "exact" else float if mode == "double" else str
                    self.assertEqual(row["flux"], conv(c["flux"]))
                    self.assertEqual(row["pi"], {k: conv(v) for k, v in c["pi"].items()})
            arr = ctmc_snn.flux(model, np.array([0.25, 3.0]), mode="double")
            cli = cli_json("flux", model, "--H", "0.25,3.0", "--double")
            self.assertEqual(arr.tolist(), [float(r["flux"]) for r in cli])

    def test_counting(self):
        for mode, flag in (("exact", ["--exact"]), ("double", ["--double"]), ("mpfr", [])):
            cli = cli_json("counting", self.three, "--H", "0.5", "--T", "3/2", *flag)
            raw = _core.counting(self.three, self.three, True, "0.5", "3/2", "", mode, 256)
            self.assertEqual(raw, cli, mode)
            py = ctmc_snn.counting(self.three, 0.5, F(3, 2), mode=mode)
            self.assertEqual(str(py["mean"]) if mode != "double" else py["mean"],
                             cli["mean"] if mode != "double" else float(cli["mean"]))
        cli = cli_json("counting", self.three, "--H", "0.5", "--T", "2", "--from", "G")
        self.assertEqual(ctmc_snn.counting(self.three, "0.5", 2, start="G")["variance"], cli["variance"])

    def test_formula(self):
        self.assertEqual(_core.formula(self.three, self.three, True), cli_json("formula", self.three))
        f = ctmc_snn.formula(self.three)
        self.assertEqual(f["flux"]["latex"], cli_json("formula", self.three)["flux"]["latex"])

    def test_bernstein(self):
        cli = cli_json("bernstein", "--activation", "sigmoid", "--domain", "-2,2", "--N", "16")
        py = ctmc_snn.bernstein("sigmoid", (-2, 2), N=16)
        self.assertEqual(py, cli)
        self.assertEqual(py["refuted"], 0)

    def test_fit_and_score(self):
        args = ["--activation", "relu", "--domain", "0,2", "--family", "two-state", "--points", "21", "--starts",
                "3", "--seed", "5", "--basin-rounds", "1"]
        cli = cli_json("fit", *args)
        py = ctmc_snn.fit("relu", domain="0,2", family="two-state", points=21, starts=3, seed=5, basin_rounds=1)
        self.assertEqual(py["model"], cli)
        self.assertIsInstance(py["theta"], np.ndarray)
        fitted = write(os.path.join(self.dir, "fitted.json"), json.dumps(cli))
        cli_s = cli_json("fit", "--activation", "relu", "--domain", "0,2", "--points", "21", "--score", fitted)
        self.assertEqual(ctmc_snn.score(fitted, "relu", domain="0,2", points=21), cli_s)
        # Samples and weights as arrays against the same values in files.
        samples = write(os.path.join(self.dir, "s.txt"), "0\n0.5\n1/3\n2\n")
        weights = write(os.path.join(self.dir, "w.txt"), "1\n2\n0.5\n1\n")
        cli_s = cli_json("fit", "--activation", "relu", "--samples", samples, "--weights", weights, "--score", fitted)
        py_s = ctmc_snn.score(fitted, "relu", samples=["0", 0.5, F(1, 3), 2], weights=np.array([1, 2, 0.5, 1]))
        for k in ("mse", "max_abs_error", "max_abs_error_at", "states", "target"):
            self.assertEqual(py_s[k], cli_s[k], k)

    def test_fit_releases_the_gil(self):
        # A thread doing Python work progresses while fit runs.
        ticks = []
        done = threading.Event()

        def tick():
            while not done.is_set():
                ticks.append(1)
                done.wait(0.005)
        t = threading.Thread(target=tick)
        t.start()
        try:
            ctmc_snn.fit("relu", domain="0,2", family="three-state", points=41, starts=4, seed=1, basin_rounds=1,
                         threads=1)
        finally:
            done.set()
            t.join()
        self.assertGreater(len(ticks), 3)

    def test_simulate_neuron(self):
        cli = cli_json("simulate", "neuron", self.three, "--H", "0.5", "--T", "3", "--trials", "300", "--seed", "9",
                       "--threads", "2")
        py = ctmc_snn.simulate_neuron(self.three, "0.5", 3.0, trials=300, seed=9, threads=1)
        counts = py.pop("counts")
        self.assertEqual(py, cli)
        self.assertEqual(counts.shape, (300,))
        self.assertEqual(counts.mean(), cli["empirical"]["mean_count"])

    def _tiny_arrays(self):
        rng = np.random.default_rng(3)
        images = rng.random((40, 2), dtype=np.float64).astype(np.float32)
        labels = (images[:, 0] > images[:, 1]).astype(np.int64)
        return images, labels

    def test_simulate_network_arrays_and_state_dict(self):
        images, labels = self._tiny_arrays()
        paths = {}
        for k, v in (("ti", images), ("tl", labels)):
            paths[k] = os.path.join(self.dir, k + ".npy")
            np.save(paths[k], v)
        net = os.path.join(FIXTURES, "tiny_mlp.json")
        neuron = os.path.join(FIXTURES, "two_state_family.json")
        opts = ["--T", "2", "--dt", "0.01", "--trials", "2", "--seed", "4", "--rate", "5", "--if", "p99.9",
                "--v0", "0.5", "--if-steps", "16"]
        cli = cli_json("simulate", "network", "--net", net, "--neurons", neuron, "--test-images", paths["ti"],
                       "--test-labels", paths["tl"], "--train-images", paths["ti"], "--train-labels", paths["tl"],
                       *opts)
        kw = dict(T=2, dt=0.01, trials=2, seed=4, rate=5, if_norm="p99.9", v0=0.5, if_steps=16)
        # Files by name: the whole document.
        py = ctmc_snn.simulate_network(net, {"test_images": paths["ti"], "test_labels": paths["tl"],
                                             "train_images": paths["ti"], "train_labels": paths["tl"]},
                                       neuron, **kw)
        predictions, synops = py.pop("predictions"), py.pop("synops")
        self.assertEqual(py, cli)
        self.assertEqual(predictions.shape, (80,))
        self.assertAlmostEqual(synops.mean(), cli["synops_per_sample_mean"], delta=1e-9 * max(1, synops.mean()))
        # Arrays and a state_dict read from the safetensors file: the same numbers.
        sd = read_safetensors(os.path.join(FIXTURES, "tiny_mlp.safetensors"))
        data = {"test_images": images, "test_labels": labels, "train_images": images, "train_labels": labels}
        for net_arg in (sd, {"layers": [{"weight": "fc1.weight", "bias": "fc1.bias", "activation": "relu"},
                                        {"weight": "fc2.weight", "bias": "fc2.bias", "activation": "linear"}],
                             "state_dict": sd}):
            with open(neuron) as f:
                neuron_dict = json.load(f)
            py2 = ctmc_snn.simulate_network(net_arg, data, [neuron_dict], activation="relu", **kw)
            for k in ("A_ANN", "A_MF", "A_SNN_mean", "A_SNN_trials", "synops_per_sample_mean",
                      "spikes_per_neuron", "transitions_per_sample", "layers", "if_baseline"):
                if k == "layers":
                    for a, b in zip(py2[k], cli[k]):
                        self.assertEqual({x: a[x] for x in ("q99", "alpha", "alpha_fit")},
                                         {x: b[x] for x in ("q99", "alpha", "alpha_fit")})
                else:
                    self.assertEqual(py2[k], cli[k], k)
            self.assertEqual(py2["predictions"].tolist(), predictions.tolist())


    def test_simulate_network_conv_manifest(self):
        # A conv manifest (conv stride 2 pad 1, average pooling, flatten, linear) by path: the CLI's document.
        rng = np.random.default_rng(8)
        net = write_conv_net(self.dir, rng)
        paths = {}
        for k, v in (("ti", rng.random((10, 1, 8, 8)).astype(np.float32)), ("tl", np.arange(10) % 3)):
            paths[k] = os.path.join(self.dir, "conv_" + k + ".npy")
            np.save(paths[k], v)
        neuron = os.path.join(FIXTURES, "three_state.json")
        cli = cli_json("simulate", "network", "--net", net, "--neurons", neuron, "--test-images", paths["ti"],
                       "--test-labels", paths["tl"], "--T", "1", "--dt", "0.01", "--trials", "2", "--seed", "4",
                       "--rate", "10", "--scale", "const")
        py = ctmc_snn.simulate_network(net, {"test_images": paths["ti"], "test_labels": paths["tl"]}, neuron,
                                       T=1, dt=0.01, trials=2, seed=4, rate=10, scale="const")
        py.pop("predictions"), py.pop("synops")
        self.assertEqual(py, cli)
        self.assertEqual(cli["spiking_neurons"], 2 * 4 * 4 + 3)
        self.assertGreater(cli["synops_per_sample_mean"], 0)
        # The vectorised kernel and the event-driven conv path: the CLI's document too.
        cli_v = cli_json("simulate", "network", "--net", net, "--neurons", neuron, "--test-images", paths["ti"],
                         "--test-labels", paths["tl"], "--T", "1", "--dt", "0.01", "--trials", "2", "--seed", "4",
                         "--rate", "10", "--scale", "const", "--kernel", "vectorised", "--conv-path", "event")
        py_v = ctmc_snn.simulate_network(net, {"test_images": paths["ti"], "test_labels": paths["tl"]}, neuron,
                                         T=1, dt=0.01, trials=2, seed=4, rate=10, scale="const", kernel="vectorised",
                                         conv_path="event")
        py_v.pop("predictions"), py_v.pop("synops")
        self.assertEqual(py_v, cli_v)
        self.assertEqual((cli_v["kernel"], cli_v["conv_path"]), ("vectorised", "event"))

def read_safetensors(path):
    """A minimal safetensors reader (F32/F64), standing in for safetensors.torch.load_file."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = {"F32": "<f4", "F64": "<f8", "F16": "<f2"}[info["dtype"]]
        b, e = info["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + b:8 + n + e], dtype=dtype).reshape(info["shape"])
    return out


class ArrayLike:
    """Anything with __array__ (a torch tensor's protocol)."""

    def __init__(self, a):
        self.a = np.asarray(a)

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)


class BadInput(unittest.TestCase):
    """ValueError with the CLI's one-line message; the interpreter survives."""

    def assert_same_error(self, py_call, *cli_args):
        rc, out, err = run_cli(*cli_args)
        self.assertEqual(rc, 2, err)
        with self.assertRaises(ValueError) as cm:
            py_call()
        msg = str(cm.exception)
        self.assertNotIn("\n", msg)
        self.assertEqual("ctmc-snn: " + msg, err.strip())
        return msg

    def test_messages_match_the_cli(self):
        with TempDir() as t:
            bad = write(os.path.join(t, "bad.json"), '{"states": ["B", "R"], "transitions": [{"from": "B", "to": "R", '
                                                      '"offset": 1, "slpoe": 2, "spike": true}]}')
            self.assert_same_error(lambda: ctmc_snn.flux(bad, 1), "flux", bad, "--H", "1")
            good = write(os.path.join(t, "m.json"), json.dumps(two_state(0, 1, 3)))
            self.assert_same_error(lambda: ctmc_snn.flux(good, "abc"), "flux", good, "--H", "abc")
            self.assert_same_error(lambda: ctmc_snn.counting(good, 1, 0), "counting", good, "--H", "1", "--T", "0")
            self.assert_same_error(lambda: ctmc_snn.counting(good, 1, 1, start="X"), "counting", good, "--H", "1",
                                   "--T", "1", "--from", "X")
            self.assert_same_error(lambda: ctmc_snn.bernstein("nosuch", "0,1", N=4), "bernstein", "--activation",
                                   "nosuch", "--domain", "0,1", "--N", "4")
            self.assert_same_error(lambda: ctmc_snn.fit("relu", domain="1,0"), "fit", "--activation", "relu",
                                   "--domain", "1,0")
            self.assert_same_error(lambda: ctmc_snn.simulate_neuron(good, 1, -1), "simulate", "neuron", good, "--H",
                                   "1", "--T", "-1")
            missing = os.path.join(t, "missing.json")
            self.assert_same_error(lambda: ctmc_snn.formula(missing), "formula", missing)

    def test_bad_python_values(self):
        m = two_state(0, 1, 3)
        cases = [
            lambda: ctmc_snn.flux(m, float("nan")),
            lambda: ctmc_snn.flux(m, None),
            lambda: ctmc_snn.flux(m, [], mode="double"),
            lambda: ctmc_snn.flux(m, 1, mode="quad"),
            lambda: ctmc_snn.flux(m, "1,2"),
            lambda: ctmc_snn.flux(m, 1, precision=8),
            lambda: ctmc_snn.flux(42, 1),
            lambda: ctmc_snn.flux({"states": ["B"], "transitions": []}, 1),
            lambda: ctmc_snn.flux({"states": "B"}, 1),
            lambda: ctmc_snn.flux("{not json", 1),
            lambda: ctmc_snn.flux(two_state("1/0", 1, 3), 1),
            lambda: ctmc_snn.flux(two_state(object(), 1, 3), 1),
            lambda: ctmc_snn.flux(two_state(0, 1, "1e999999999"), 1, mode="double"),
            lambda: ctmc_snn.counting(m, 1, "1e400", mode="double"),
            lambda: ctmc_snn.stationary(two_state(0, 1, 3), -1),  # B absorbing... and R transient: one class
            lambda: ctmc_snn.simulate_neuron(m, 1, 1, trials=1),
            lambda: ctmc_snn.simulate_neuron(m, 1, 1e300, trials=10 ** 9),
            lambda: ctmc_snn.fit("relu", domain="0,1", starts=0),
            lambda: ctmc_snn.fit("relu", samples=[1, 1, 1]),
            lambda: ctmc_snn.score(m, "relu", domain=(0, 1), weights=[-1] * 401),
            lambda: ctmc_snn.bernstein("relu", "0,1"),
            lambda: ctmc_snn.bernstein("relu", "0,1", N=0),
            lambda: ctmc_snn.fit("relu", domain="0,1", starts="many"),
            lambda: ctmc_snn.fit("relu", domain="0,1", seed=-1),
            lambda: ctmc_snn.fit("relu", domain="0,1", points=-5),
            lambda: ctmc_snn.score(m, "relu", domain="0,1", precision=2 ** 40),
            lambda: ctmc_snn.flux(m, 1, precision=-5),
            lambda: ctmc_snn.counting(m, 1, 1, precision="high"),
            lambda: ctmc_snn.bernstein("relu", "0,1", N=2.5),
            lambda: ctmc_snn.simulate_neuron(m, 1, "long"),
            lambda: ctmc_snn.simulate_neuron(m, 1, None),
            lambda: ctmc_snn.fit("relu", domain="0,1", rate_bound=None),
            lambda: ctmc_snn.bernstein("relu", "0,1", N=4, bracket=[1]),
        ]
        for i, call in enumerate(cases):
            try:
                call()
            except ValueError as e:
                self.assertNotIn("\n", str(e), i)
            else:
                if i != 14:  # H = -1: B absorbing, a valid answer (flux 0)
                    self.fail(f"case {i} raised nothing")

    def test_bad_network_inputs(self):
        neuron = os.path.join(FIXTURES, "two_state_family.json")
        sd = read_safetensors(os.path.join(FIXTURES, "tiny_mlp.safetensors"))
        images = np.zeros((4, 2), dtype=np.float32)
        labels = np.array([0, 1, 0, 1])
        good = {"test_images": images, "test_labels": labels}
        cases = [
            lambda: ctmc_snn.simulate_network(sd, good, neuron),  # no activation
            lambda: ctmc_snn.simulate_network(sd, {"test_images": np.zeros((4, 3)), "test_labels": labels}, neuron,
                                              activation="relu"),
            lambda: ctmc_snn.simulate_network(sd, {"test_images": images, "test_labels": labels[:3]}, neuron,
                                              activation="relu"),
            lambda: ctmc_snn.simulate_network(sd, {"test_images": images}, neuron, activation="relu"),
            lambda: ctmc_snn.simulate_network(sd, {"test_images": np.array(["a"] * 8).reshape(4, 2),
                                                   "test_labels": labels}, neuron, activation="relu"),
            lambda: ctmc_snn.simulate_network({"fc1.weight": np.full((3, 2), np.nan), "fc2.weight": np.ones((2, 3))},
                                              good, neuron, activation="relu"),
            lambda: ctmc_snn.simulate_network({"w.weight": np.ones((3, 2)), "v.weight": np.ones((2, 2))}, good,
                                              neuron, activation="relu"),
            lambda: ctmc_snn.simulate_network(sd, good, neuron, activation="relu", sampler="magic"),
            lambda: ctmc_snn.simulate_network(sd, good, neuron, activation="relu", T=-1),
            lambda: ctmc_snn.simulate_network(sd, {"test_imgs": images}, neuron, activation="relu"),
            lambda: ctmc_snn.simulate_network(sd, good, [], activation="relu"),
            lambda: ctmc_snn.simulate_network(12, good, neuron),
        ]
        for i, call in enumerate(cases):
            with self.assertRaises(ValueError, msg=f"case {i}") as cm:
                call()
            self.assertNotIn("\n", str(cm.exception))
        # NaN for a layer's alpha is an error like inf, 0 and -1 (only "auto"/None keeps the scale rule).
        for alpha in ([float("nan"), 1], "nan,1", [float("inf"), 1], [0, 1]):
            with self.assertRaises(ValueError, msg=str(alpha)) as cm:
                ctmc_snn.simulate_network(sd, good, neuron, activation="relu", T=0.5, dt=0.01, scale="const",
                                          layer_alpha=alpha)
            self.assertIn("--layer-alpha", str(cm.exception))
        # __array__ objects are taken like arrays.
        r = ctmc_snn.simulate_network({k: ArrayLike(v) for k, v in sd.items()},
                                      {"test_images": ArrayLike(images), "test_labels": ArrayLike(labels),
                                       "train_images": ArrayLike(images), "train_labels": ArrayLike(labels)}, neuron,
                                      activation="relu", T=0.5, dt=0.01, scale="const")
        self.assertEqual(r["test_images"], 4)


class NetworkCommands(unittest.TestCase):
    """train, evaluate and convert give what the CLI gives (the same weights, bit for bit)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="ctmc_py_nets_")
        cls.dir = cls.tmp.name
        cls.data = os.path.join(cls.dir, "data")
        subprocess.run([sys.executable, os.path.join(SOURCE, "tests", "golden", "make_data.py"), cls.data], check=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_train_and_evaluate_agree_with_the_cli(self):
        py = ctmc_snn.train(self.data, self.path("py.json"), hidden=[16], epochs=1, train_limit=300, seed=1)
        cli = cli_json("train", "--data", self.data, "--output", self.path("cli.json"), "--hidden", 16, "--epochs", 1,
                       "--train-limit", 300, "--seed", 1)
        for key in ("arch", "train_accuracy", "test_accuracy", "epochs"):
            self.assertEqual(py[key], cli[key], key)
        with open(self.path("py.safetensors"), "rb") as a, open(self.path("cli.safetensors"), "rb") as b:
            self.assertEqual(a.read(), b.read())
        self.assertEqual(ctmc_snn.evaluate(self.path("py.json"), self.data, clip=[1.5, "inf"]),
                         cli_json("evaluate", "--net", self.path("py.json"), "--data", self.data, "--clip", "1.5,inf"))
        ctmc_snn.evaluate(self.path("py.json"), self.data, predictions=self.path("pred.txt"))
        with open(self.path("pred.txt")) as f:
            self.assertEqual(len(f.read().split()), 200)

    def test_train_arch_options(self):
        r = ctmc_snn.train(self.data, self.path("vgg.json"), arch="vgg11", width=0.05, train_limit=64, epochs=1,
                           batch=32, seed=6)
        self.assertEqual(r["arch"], "vgg11")
        for kw, fragment in ((dict(arch="vgg11", hidden=[4]), "--hidden"), (dict(width=2.0), "--width"),
                             (dict(arch="resnet"), "--arch"), (dict(epochs=0), "--epochs")):
            with self.assertRaisesRegex(ValueError, fragment):
                ctmc_snn.train(self.data, self.path("x.json"), **kw)

    def test_train_ranges_are_the_commands(self):
        # The same check and the same message as the CLI's (tests/cli/options_text_test.cpp).
        for kw, message in ((dict(epochs=0), "--epochs: 0 is not in [1, 100000]"),
                            (dict(batch=2000000), "--batch: 2000000 is not in [1, 1000000]"),
                            (dict(lr=0), "--lr: 0 is not a positive finite number"),
                            (dict(lr=float("nan")), "--lr: nan is not a positive finite number"),
                            (dict(epochs=2 ** 40), "--epochs: 1099511627776 is not in")):
            with self.assertRaises(ValueError, msg=str(kw)) as cm:
                ctmc_snn.train(self.data, self.path("x.json"), **kw)
            self.assertIn(message, str(cm.exception))
            self.assertFalse(os.path.exists(self.path("x.json")))

    def test_train_vgg11_refuses_batches_of_one_image(self):
        # Each took no optimisation step and wrote the initial weights.
        for kw, fragment in ((dict(batch=1, train_limit=8), "--batch: 1 cannot train vgg11-strided: BatchNorm layer"),
                             (dict(train_limit=1), "--data: 1 training image cannot train vgg11-strided")):
            out = self.path("one.json")
            with self.assertRaises(ValueError, msg=str(kw)) as cm:
                ctmc_snn.train(self.data, out, arch="vgg11", width=0.03, epochs=1, seed=1, **kw)
            self.assertIn(fragment, str(cm.exception))
            self.assertIn("no optimisation step", str(cm.exception))
            self.assertFalse(os.path.exists(out))
            self.assertFalse(os.path.exists(self.path("one.safetensors")))

    def test_train_refuses_a_network_beyond_max_memory(self):
        # --width 16 (the documented maximum) grew to 12 GB in a minute on two digits.
        out = self.path("wide.json")
        with self.assertRaises(ValueError) as cm:
            ctmc_snn.train(self.data, out, arch="vgg11", width=16, train_limit=2, epochs=1, max_memory=8)
        self.assertIn("train: needs about 98.2 GiB of memory", str(cm.exception))
        self.assertIn("more than --max-memory 8 GiB; lower --width or --batch", str(cm.exception))
        self.assertFalse(os.path.exists(out))
        with self.assertRaisesRegex(ValueError, r"--max-memory: -1 is not a number of GiB in \(0, 1e6\]"):
            ctmc_snn.train(self.data, out, epochs=1, max_memory=-1)

    def test_convert(self):
        ctmc_snn.train(self.data, self.path("net.json"), hidden=[16], epochs=1, train_limit=300, seed=2)
        r = ctmc_snn.convert(self.path("net.json"), self.data, self.path("conv"), fit_images=40, samples=16, starts=2)
        self.assertEqual(len(r["layers"]), 2)
        for layer in r["layers"]:
            self.assertTrue(os.path.exists(os.path.join(r["folder"], layer["neuron_file"])))
            self.assertLessEqual(layer["lo"], layer["hi"])
        self.assertIn("simulate network", r["simulate_command"])


class Example(unittest.TestCase):
    def test_crosscheck_pytorch_example(self):
        env = dict(os.environ)
        p = subprocess.run([sys.executable, os.path.join(SOURCE, "examples", "crosscheck_pytorch.py")],
                           capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("all checks passed", p.stdout)


if __name__ == "__main__":
    unittest.main()
