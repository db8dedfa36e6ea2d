"""Tests of the claims checker: `ctmc-snn check CLAIMS.json` and ctmc_snn.check (CTest "check_claims";
the ctmc_snn parts are skipped where the module is not built).

True claims are computed here independently (exact rationals from the closed
forms); false ones are those values perturbed. Simulation claims come from
the toolkit's own SSA at other seeds, standing in for another implementation.
"""
import csv
import fractions
import json
import os
import shutil
import struct
import subprocess
import tempfile
import unittest

from conv_fixture import write_conv_net

try:  # the checker is the CLI's; the module is only needed for its Python tests
    import ctmc_snn
except ImportError:
    # Where the build made the module (CTMC_PYTHON_BUILT=1, set by CTest), an
    # import failure is a failure, not a reason to skip its tests.
    if os.environ.get("CTMC_PYTHON_BUILT") == "1":
        raise
    ctmc_snn = None

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.environ.get("CTMC_SOURCE_DIR", os.path.join(HERE, "..", "..")))
CLI = os.environ.get("CTMC_CLI", os.path.join(SOURCE, "build", "cli", "ctmc-snn"))
F = fractions.Fraction

# Three-state (paper eq. 1-2): a = H, b = 1/2, c = 1/3 + 2H, d = 2.
THREE = {"states": ["B", "G", "R"], "transitions": [
    {"from": "B", "to": "G", "offset": 0, "slope": 1},
    {"from": "G", "to": "B", "offset": "0.5"},
    {"from": "G", "to": "R", "offset": "1/3", "slope": 2, "spike": True},
    {"from": "R", "to": "B", "offset": 2}]}


def three_state_exact(h):
    a, b, c, d = h, F(1, 2), F(1, 3) + 2 * h, F(2)
    w = {"B": d * (b + c), "G": a * d, "R": a * c}
    t = sum(w.values())
    return a * c * d / (d * (a + b + c) + a * c), {k: v / t for k, v in w.items()}


def two_state(a, d):
    return {"states": ["B", "R"], "transitions": [{"from": "B", "to": "R", "offset": str(a), "spike": True},
                                                  {"from": "R", "to": "B", "offset": str(d)}]}


def run_check(claims, *extra):
    with tempfile.TemporaryDirectory(prefix="ctmc_check_") as t:
        path = os.path.join(t, "claims.json")
        with open(path, "w") as f:
            json.dump(claims, f)
        p = subprocess.run([CLI, "check", path, "--out", os.path.join(t, "out"), "--json", *extra],
                           capture_output=True, text=True)
        files = sorted(os.listdir(os.path.join(t, "out", "check"))) if p.returncode in (0, 1) else []
        return p.returncode, (json.loads(p.stdout) if p.returncode in (0, 1) else None), p.stderr, files


class Verdicts(unittest.TestCase):
    def test_true_and_false_claims_of_every_kind(self):
        h = F(3, 5)
        flux, pi = three_state_exact(h)
        a, d = F(3, 2), F(5, 7)
        rate = a * d / (a + d)
        fano = (a * a + d * d) / (a + d) ** 2  # alternating renewal with exponential phases
        # Off by less than 1e-12 relative: only an exact comparison sees it.
        nearly = flux * (1 + F(1, 10 ** 13))
        self.assertLess(abs(float(nearly) - float(flux)), 1e-12 * float(flux))
        # A relu copy: F = H d / (H + d), d = 10^6; its max error on [0, 1] at H = 1 is 1/(1 + d).
        relu = {"states": ["B", "R"], "transitions": [
            {"from": "B", "to": "R", "offset": 0, "slope": 1, "spike": True}, {"from": "R", "to": "B", "offset": 10 ** 6}]}
        max_err = F(1, 1 + 10 ** 6)
        claims = {"claims": [
            {"id": "flux-true", "kind": "flux", "model": THREE, "H": "3/5", "value": str(flux)},
            {"id": "flux-nearly", "kind": "flux", "model": THREE, "H": "3/5",
             "value": str(nearly.numerator) + "/" + str(nearly.denominator)},
            {"id": "flux-rel-ok", "kind": "flux", "model": THREE, "H": "0.6", "value": float(flux),
             "tolerance": {"relative": 1e-15}},
            {"id": "stationary-true", "kind": "stationary", "model": THREE, "H": 0.6,
             "pi": {k: str(v) for k, v in pi.items()}},
            {"id": "stationary-false", "kind": "stationary", "model": THREE, "H": 0.6,
             "pi": {"B": str(pi["B"]), "R": str(pi["R"] * F(11, 10))}},
            {"id": "counting-true", "kind": "counting", "model": two_state(a, d), "H": 0, "rate": str(rate),
             "fano": str(fano), "variance_rate": str(fano * rate)},
            {"id": "counting-finite-true", "kind": "counting", "model": two_state(a, d), "H": 0, "T": 4,
             "mean": str(rate * 4), "tolerance": {"relative": 1e-60}},
            {"id": "counting-false", "kind": "counting", "model": two_state(a, d), "H": 0, "fano": "1"},
            {"id": "fit-true", "kind": "fit", "model": relu, "activation": "relu", "domain": "0,1", "points": 11,
             "max_error": "{:.6e}".format(float(max_err))},
            {"id": "fit-false", "kind": "fit", "model": relu, "activation": "relu", "domain": "0,1", "points": 11,
             "max_error": "1.1e-6"},
        ]}
        rc, doc, err, files = run_check(claims)
        self.assertEqual(rc, 1, err)  # a claim failed
        v = doc["verdicts"]
        self.assertEqual(v, {"flux-true": "Pass", "flux-nearly": "Fail", "flux-rel-ok": "Pass",
                             "stationary-true": "Pass", "stationary-false": "Fail", "counting-true": "Pass",
                             "counting-finite-true": "Pass", "counting-false": "Fail", "fit-true": "Pass",
                             "fit-false": "Fail"})
        self.assertEqual((doc["passed"], doc["failed"], doc["not_checkable"]), (6, 4, 0))
        for name in ("report.md", "meta.json", "results.json", "claims.csv"):
            self.assertIn(name, files)
        # Only true claims: exit 0.
        rc, doc, err, _ = run_check({"claims": [c for c in claims["claims"] if v[c["id"]] != "Fail"]})
        self.assertEqual(rc, 0, err)

    def test_simulation_claims_no_false_alarm_over_20_seeds(self):
        # The "other implementation": our own SSA at seeds 1..20, 400 trials each.
        model = two_state("3/2", "5/7")
        claims = []
        with tempfile.TemporaryDirectory(prefix="ctmc_check_") as t:
            path = os.path.join(t, "m.json")
            with open(path, "w") as f:
                json.dump(model, f)
            runs = [json.loads(subprocess.run([CLI, "simulate", "neuron", path, "--H", "0", "--T", "4", "--trials",
                                               "400", "--seed", str(seed), "--json"], capture_output=True,
                                              text=True).stdout) for seed in range(1, 21)]
        for seed, r in zip(range(1, 21), runs):
            claims.append({"id": f"sim-{seed}", "kind": "simulation", "model": model, "H": 0, "T": 4, "trials": 400,
                           "mean": r["empirical"]["mean_count"], "variance": r["empirical"]["variance_count"],
                           "false_alarm": 1e-3})
        # And a wrong one: the mean off by ten of its standard errors.
        exact = runs[0]["exact"]
        claims.append({"id": "sim-wrong", "kind": "simulation", "model": model, "H": 0, "T": 4, "trials": 400,
                       "mean": exact["mean_count"] + 10 * (exact["variance_count"] / 400) ** 0.5})
        rc, doc, err, _ = run_check({"claims": claims}, "--seed", "1000")
        self.assertEqual(rc, 1, err)
        for seed in range(1, 21):
            self.assertEqual(doc["verdicts"][f"sim-{seed}"], "Pass", seed)
        self.assertEqual(doc["verdicts"]["sim-wrong"], "Fail")

    def test_network_claims(self):
        # The "other implementation": `simulate network` at seed 4, 3 trials, on 200 float images.
        try:
            import numpy as np
        except ImportError:
            self.skipTest("numpy (python3-numpy) is not installed")
        fixtures = os.path.join(SOURCE, "tests", "fixtures")
        with tempfile.TemporaryDirectory(prefix="ctmc_check_") as t:
            rng = np.random.default_rng(3)
            images = rng.random((200, 2)).astype(np.float32)
            np.save(os.path.join(t, "ti.npy"), images)
            np.save(os.path.join(t, "tl.npy"), (images[:, 0] > images[:, 1]).astype(np.int64))
            config = {"net": os.path.join(fixtures, "tiny_mlp.json"),
                      "neurons": os.path.join(fixtures, "two_state_family.json"),
                      "test_images": os.path.join(t, "ti.npy"), "test_labels": os.path.join(t, "tl.npy"),
                      "train_images": os.path.join(t, "ti.npy"), "train_labels": os.path.join(t, "tl.npy"),
                      "T": 2, "dt": 0.01, "rate": 5, "sampler": "exact", "trace_weight": "1/tau"}
            p = subprocess.run([CLI, "simulate", "network", "--net", config["net"], "--neurons", config["neurons"],
                                "--test-images", config["test_images"], "--test-labels", config["test_labels"],
                                "--train-images", config["train_images"], "--train-labels", config["train_labels"],
                                "--T", "2", "--dt", "0.01", "--rate", "5", "--trace-weight", "1/tau", "--trials", "3",
                                "--seed", "4", "--json"], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            r = json.loads(p.stdout)
            true = dict(config, id="net-true", kind="network", trials=3, A_ANN=r["A_ANN"], A_MF=r["A_MF"],
                        A_SNN=r["A_SNN_mean"], SynOps=r["synops_per_sample_mean"])
            wrong_mf = dict(config, id="net-mf", kind="network", A_MF=r["A_MF"] + 1)
            wrong_synops = dict(config, id="net-synops", kind="network", trials=3,
                                SynOps=2 * r["synops_per_sample_mean"])
            # The files lie in other folders than the claims file (absolute paths): allowed by option.
            outside = "--allow-outside-paths"
            rc, doc, err, _ = run_check({"claims": [true, wrong_mf, wrong_synops]}, "--seed", "1000", outside)
            self.assertEqual(rc, 1, err)
            self.assertEqual(doc["verdicts"], {"net-true": "Pass", "net-mf": "Fail", "net-synops": "Fail"})
            # The evidence names the kernel our trials ran on (its random numbers).
            synops_rows = [x for x in doc["results"] if x["id"] == "net-true" and x["quantity"].startswith("SynOps")]
            self.assertEqual(len(synops_rows), 1)
            self.assertIn("fast kernel, sampler exact", synops_rows[0]["evidence"])
            # No false alarm over 20 right claims (seeds 1..20 of the other implementation) at 1e-3.
            right = []
            for seed in range(1, 21):
                p = subprocess.run([CLI, "simulate", "network", "--net", config["net"], "--neurons",
                                    config["neurons"], "--test-images", config["test_images"], "--test-labels",
                                    config["test_labels"], "--train-images", config["train_images"],
                                    "--train-labels", config["train_labels"], "--T", "2", "--dt", "0.01", "--rate",
                                    "5", "--trace-weight", "1/tau", "--trials", "2", "--seed", str(seed), "--json"],
                                   capture_output=True, text=True)
                r = json.loads(p.stdout)
                right.append(dict(config, id=f"net-{seed}", kind="network", trials=2, A_SNN=r["A_SNN_mean"],
                                  SynOps=r["synops_per_sample_mean"]))
            rc, doc, err, _ = run_check({"claims": right}, "--seed", "1000", outside)
            self.assertEqual(rc, 0, err)
            self.assertEqual(doc["passed"], 20)
            # A convention named wrong is bad input naming the claim.
            rc, _, err, _ = run_check({"claims": [dict(true, sampler="magic")]}, outside)
            self.assertEqual(rc, 2)
            self.assertIn("claim 'net-true'", err)

    def test_network_claims_on_a_conv_net(self):
        # A layer graph (conv stride 2 pad 1, average pooling, flatten, linear): the
        # other implementation's figures are `simulate network` at seed 4, 3 trials.
        try:
            import numpy as np
        except ImportError:
            self.skipTest("numpy (python3-numpy) is not installed")
        with tempfile.TemporaryDirectory(prefix="ctmc_check_") as t:
            rng = np.random.default_rng(8)
            write_conv_net(t, rng)
            np.save(os.path.join(t, "ti.npy"), rng.random((40, 1, 8, 8)).astype(np.float32))
            np.save(os.path.join(t, "tl.npy"), np.arange(40) % 3)
            config = {"net": "cnn.json", "neurons": os.path.join(SOURCE, "tests", "fixtures", "three_state.json"),
                      "test_images": "ti.npy", "test_labels": "tl.npy", "T": 1, "dt": 0.01, "rate": 10,
                      "scale": "const"}
            p = subprocess.run([CLI, "simulate", "network", "--net", "cnn.json", "--neurons", config["neurons"],
                                "--test-images", "ti.npy", "--test-labels", "tl.npy", "--T", "1", "--dt", "0.01",
                                "--rate", "10", "--scale", "const", "--trials", "3", "--seed", "4", "--json"],
                               capture_output=True, text=True, cwd=t)
            self.assertEqual(p.returncode, 0, p.stderr)
            r = json.loads(p.stdout)
            true = dict(config, id="cnn-true", kind="network", trials=3, A_ANN=r["A_ANN"], A_MF=r["A_MF"],
                        A_SNN=r["A_SNN_mean"], SynOps=r["synops_per_sample_mean"])
            wrong = dict(config, id="cnn-synops", kind="network", trials=3, SynOps=2 * r["synops_per_sample_mean"])
            rc, out, err, _ = check_in(t, {"claims": [true, wrong]}, "--seed", "1000", "--allow-outside-paths")
            self.assertEqual(rc, 1, err)
            self.assertEqual(json.loads(out)["verdicts"], {"cnn-true": "Pass", "cnn-synops": "Fail"})

    @unittest.skipIf(ctmc_snn is None, "the Python module is not built")
    def test_python_check_matches_cli(self):
        flux, _ = three_state_exact(F(1, 2))
        claims = {"claims": [{"id": "f", "kind": "flux", "model": THREE, "H": "1/2", "value": str(flux)},
                             {"id": "g", "kind": "flux", "model": THREE, "H": "1/2", "value": "0.6"}]}
        rc, doc, err, _ = run_check(claims)
        py = ctmc_snn.check(claims)
        self.assertEqual(py["verdicts"], {"f": "Pass", "g": "Fail"})
        # Relative paths of a dict's claims are the current folder's.
        cwd = os.getcwd()
        with tempfile.TemporaryDirectory(prefix="ctmc_check_") as t:
            with open(os.path.join(t, "m.json"), "w") as f:
                json.dump(THREE, f)
            os.chdir(t)
            try:
                self.assertEqual(ctmc_snn.check({"claims": [dict(claims["claims"][0], model="m.json")]})["verdicts"],
                                 {"f": "Pass"})
            finally:
                os.chdir(cwd)
        for bad in ({"threads": 100000}, {"precision": 8}, {"seed": -1}):
            with self.assertRaises(ValueError):
                ctmc_snn.check(claims, **bad)
        self.assertEqual(py["results"], doc["results"])

    def test_paper_example(self):
        with tempfile.TemporaryDirectory(prefix="ctmc_check_") as t:
            p = subprocess.run([CLI, "check", os.path.join(SOURCE, "examples", "claims_paper.json"), "--out", t,
                                "--json", "--threads", "2"], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            v = json.loads(p.stdout)["verdicts"]
            for k in ("eq2-flux", "eq2-stationary", "eq2-rate", "bernstein-flux", "fig2-sigmoid-mse"):
                self.assertEqual(v[k], "Pass", k)
        # Its models are copies beside it (paths stay in the claims file's folder): the same files.
        for copy, original in (("sigmoid_three_state.json", "reports/models/sigmoid_three_state.json"),
                               ("bernstein_n2.json", "tests/fixtures/bernstein_n2.json")):
            with open(os.path.join(SOURCE, "examples", "models", copy), "rb") as a, \
                    open(os.path.join(SOURCE, original), "rb") as b:
                self.assertEqual(a.read(), b.read(), copy)


class Mutations(unittest.TestCase):
    """A small, seeded stand-in for a fuzz target of the claims reader: mutated claims files (bytes flipped,
    inserted, deleted, truncated) end with exit 0, 1 or 2 and at most one line on stderr; never 3 (internal
    error) or a signal."""

    def test_mutated_claims_files(self):
        import random
        flux, pi = three_state_exact(F(1, 2))
        base = json.dumps({"claims": [
            {"id": "f", "kind": "flux", "model": THREE, "H": "1/2", "value": str(flux), "tolerance": "digits"},
            {"id": "p", "kind": "stationary", "model": THREE, "H": 0.5, "pi": {"B": str(pi["B"])}},
            {"id": "c", "kind": "counting", "model": THREE, "H": 1, "T": "0.5", "mean": "0.1", "rate": 1,
             "tolerance": {"relative": 0.5}}]}).encode()
        rng = random.Random(20261127)
        alphabet = b'{}[]":,.-+/e0123456789 \\nabcdefghijklmnopqrstuvwxyz\x00\xff'
        with tempfile.TemporaryDirectory(prefix="ctmc_check_") as t:
            path = os.path.join(t, "claims.json")
            for i in range(300):
                data = bytearray(base)
                for _ in range(rng.randint(1, 2)):
                    op = rng.choices(range(4), weights=(6, 3, 3, 1))[0]
                    k = rng.randrange(len(data) + 1)
                    if op == 0 and k < len(data):
                        data[k] = rng.choice(alphabet)
                    elif op == 1:
                        data[k:k] = bytes([rng.choice(alphabet)])
                    elif op == 2 and k < len(data):
                        del data[k:k + rng.randint(1, 8)]
                    else:
                        data = data[:k]
                with open(path, "wb") as f:
                    f.write(data)
                p = subprocess.run([CLI, "check", path, "--out", os.path.join(t, "out")], capture_output=True,
                                   timeout=60)
                self.assertIn(p.returncode, (0, 1, 2), (i, bytes(data), p.stderr))
                if p.returncode == 2:
                    self.assertEqual(p.stderr.count(b"\n"), 1, (i, p.stderr))


class Malformed(unittest.TestCase):
    def assert_refused(self, claims, *fragments):
        rc, _, err, _ = run_check(claims)
        self.assertEqual(rc, 2, err)
        self.assertEqual(err.count("\n"), 1, err)
        for f in fragments:
            self.assertIn(f, err)
        if ctmc_snn is None:
            return
        with self.assertRaises(ValueError) as cm:
            ctmc_snn.check(claims)
        for f in fragments:
            self.assertIn(f, str(cm.exception))

    def test_names_the_claim_and_the_field(self):
        good = {"id": "x", "kind": "flux", "model": THREE, "H": "1", "value": "1"}
        self.assert_refused({"claims": [good, dict(good, id="y", H="abc")]}, "claim 'y'", "H")
        self.assert_refused({"claims": [dict(good, valeu="1")]}, "claim 'x'", "valeu")
        self.assert_refused({"claims": [dict(good, kind="magic")]}, "claim 'x'", "kind")
        self.assert_refused({"claims": [{k: v for k, v in good.items() if k != "value"}]}, "claim 'x'", "value")
        self.assert_refused({"claims": [dict(good, tolerance={"relative": -1})]}, "claim 'x'", "tolerance")
        self.assert_refused({"claims": [good, good]}, "claim 'x'", "id")
        self.assert_refused({"claims": [{"kind": "flux"}]}, "claims[0]", "id")
        self.assert_refused({"claims": [dict(good, model="no/such/model.json")]}, "model.json")
        self.assert_refused({"claims": [dict(good, kind="stationary", pi={"Q": "1"})]}, "claim 'x'", "pi.Q")
        self.assert_refused({"claims": [{"id": "s", "kind": "simulation", "model": THREE, "H": 1, "T": 1,
                                         "trials": 1, "mean": 1}]}, "claim 's'", "trials")
        self.assert_refused({"claims": []}, "claims")
        self.assert_refused({"claimz": []}, "claimz")


def npy_bytes(descr, shape, payload):
    """A .npy file written by hand (numpy is not needed): format 1.0, the header padded to 64 bytes."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, "".join(f"{d}, " for d in shape))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload


def check_in(folder, claims, *extra, cwd=None, timeout=120, json_out=True):
    """`ctmc-snn check` on folder/claims.json (written from `claims`), run from `cwd`: (exit status, stdout,
    stderr, the report folder)."""
    path = os.path.join(folder, "claims.json")
    with open(path, "w") as f:
        json.dump(claims, f)
    out = os.path.join(folder, "out")
    shutil.rmtree(out, ignore_errors=True)  # a refused run must write nothing: start without a report
    p = subprocess.run([CLI, "check", path, "--out", out, *(["--json"] if json_out else []), *extra],
                       capture_output=True, text=True, cwd=cwd, timeout=timeout)
    return p.returncode, p.stdout, p.stderr, os.path.join(out, "check")


# A chain that never spikes at H = 0 (its Fano factor is undefined: Not checkable), and one with two closed
# classes at H = 0 (no unique stationary law: Not checkable, the solver's error as evidence).
SILENT = {"states": ["B", "R"], "transitions": [{"from": "B", "to": "R", "offset": 0, "slope": 1, "spike": True},
                                                {"from": "R", "to": "B", "offset": 1}]}
SPLIT = {"states": ["A", "B"], "transitions": [{"from": "A", "to": "B", "offset": 0, "slope": 1, "spike": True},
                                               {"from": "B", "to": "A", "offset": 0, "slope": 1}]}


class NeverPassUnchecked(unittest.TestCase):
    """A claim that was not checked never passes: Not checkable exits 1 unless --allow-unchecked; an invalid
    network configuration is malformed (exit 2 naming the claim and the field), never Not checkable."""

    def test_not_checkable_exits_1_unless_allowed(self):
        flux, _ = three_state_exact(F(1, 2))
        claims = {"claims": [{"id": "ok", "kind": "flux", "model": THREE, "H": "1/2", "value": str(flux)},
                             {"id": "silent", "kind": "counting", "model": SILENT, "H": 0, "fano": "1"}]}
        rc, doc, err, _ = run_check(claims)
        self.assertEqual(rc, 1, err)
        self.assertEqual(doc["verdicts"], {"ok": "Pass", "silent": "Not checkable"})
        rc, doc, err, _ = run_check(claims, "--allow-unchecked")
        self.assertEqual(rc, 0, err)
        if ctmc_snn is not None:
            self.assertEqual(ctmc_snn.check(claims)["exit_status"], 1)
            self.assertEqual(ctmc_snn.check(claims, allow_unchecked=True)["exit_status"], 0)

    def test_terminal_rows_show_only_the_fields_a_row_has(self):
        with tempfile.TemporaryDirectory(prefix="ctmc_check_") as t:
            rc, out, err, _ = check_in(t, {"claims": [{"id": "split", "kind": "flux", "model": SPLIT, "H": 0,
                                                       "value": "1/2"}]}, json_out=False)
            self.assertEqual(rc, 1, err)
            row = [line for line in out.splitlines() if line.startswith("split")]
            self.assertEqual(len(row), 1, out)
            self.assertIn("Not checkable", row[0])
            self.assertIn("claimed 1/2 -> ", row[0])
            self.assertNotIn("claimed ,", out)
            self.assertNotIn("ours  ->", out)
            self.assertIn("--allow-unchecked", out)

    def network_folder(self, t):
        """A folder with the tiny network, a neuron and 4 images with labels (float32, int64), all beside the
        claims; returns a claim of a valid configuration."""
        fixtures = os.path.join(SOURCE, "tests", "fixtures")
        for name in ("tiny_mlp.json", "tiny_mlp.safetensors", "two_state_family.json"):
            shutil.copy(os.path.join(fixtures, name), t)
        with open(os.path.join(t, "x.npy"), "wb") as f:
            f.write(npy_bytes("<f4", (4, 2), struct.pack("<8f", 0.1, 0.9, 0.8, 0.2, 0.3, 0.7, 0.6, 0.4)))
        with open(os.path.join(t, "y.npy"), "wb") as f:
            f.write(npy_bytes("<i8", (4,), struct.pack("<4q", 1, 0, 1, 0)))
        with open(os.path.join(t, "beyond.txt"), "w") as f:
            f.write("7\n")  # the test set has 4 images
        return {"id": "net", "kind": "network", "net": "tiny_mlp.json", "neurons": "two_state_family.json",
                "test_images": "x.npy", "test_labels": "y.npy", "train_images": "x.npy", "train_labels": "y.npy",
                "T": 1, "dt": 0.01, "tau": 0.02, "rate": 5, "A_ANN": 12.5}

    def test_invalid_network_configuration_is_malformed(self):
        with tempfile.TemporaryDirectory(prefix="ctmc_check_") as t:
            claim = self.network_folder(t)
            # The valid claim runs (the claimed A_ANN is wrong: Fail, exit 1).
            rc, out, err, _ = check_in(t, {"claims": [claim]})
            self.assertEqual(rc, 1, err)
            self.assertEqual(json.loads(out)["verdicts"], {"net": "Fail"})
            for field, value in (("dt", -1), ("tau", 0), ("T", 1e308), ("T", "1e400"), ("rate", 0), ("T", "0.015"),
                                 ("layer_alpha", [1]), ("layer_alpha", [0, 1]), ("neurons", ["two_state_family.json"] * 3),
                                 ("subset", "index:beyond.txt")):
                rc, out, err, files = check_in(t, {"claims": [dict(claim, **{field: value})]})
                self.assertEqual(rc, 2, (field, value, out, err))
                self.assertEqual(err.count("\n"), 1, err)
                self.assertIn("claim 'net'", err)
                self.assertIn(f"claim 'net': {field}:", err)
                self.assertFalse(os.path.exists(files), (field, value))


class NonFiniteValues(unittest.TestCase):
    """A claimed value that a double cannot hold (1e999 rounds to an infinity, which every tolerance accepted;
    1e-400 rounds to 0) is malformed input naming the claim and the field, exit 2, nothing written; a
    comparison with zero on both sides has no relative difference to print."""

    def test_claims_beyond_double_range_are_refused(self):
        with tempfile.TemporaryDirectory(prefix="ctmc_check_") as t:
            claim = NeverPassUnchecked().network_folder(t)
            relu = {"states": ["B", "R"], "transitions": [
                {"from": "B", "to": "R", "offset": 0, "slope": 1, "spike": True},
                {"from": "R", "to": "B", "offset": 10 ** 6}]}
            fit = {"id": "fit", "kind": "fit", "model": relu, "activation": "relu", "domain": "0,1", "points": 11,
                   "mse": "1e-12"}
            family_fit = {"id": "fam", "kind": "fit", "family": "two-state", "activation": "relu", "domain": "0,1",
                          "points": 11, "mse": "1"}
            simulation = {"id": "sim", "kind": "simulation", "model": THREE, "H": 1, "T": 1, "trials": 10,
                          "mean": "1"}
            cases = [(dict(claim, A_ANN=v), "net", "A_ANN") for v in ("1e999", "-1e999", "1e309")]
            cases += [(dict(claim, A_MF="1e999"), "net", "A_MF"), (dict(claim, A_SNN="-1e400"), "net", "A_SNN"),
                      (dict(claim, SynOps="1e-400"), "net", "SynOps"), (dict(claim, A_ANN="1e-310"), "net", "A_ANN"),
                      (dict(fit, mse="1e999"), "fit", "mse"), (dict(fit, max_error="-1e999"), "fit", "max_error"),
                      (dict(fit, mse="1e-320"), "fit", "mse"), (dict(family_fit, mse="1e999"), "fam", "mse"),
                      (dict(simulation, mean="1e999"), "sim", "mean")]
            for c, cid, field in cases:
                rc, out, err, files = check_in(t, {"claims": [c]})
                self.assertEqual(rc, 2, (c, out, err))
                self.assertEqual(err.count("\n"), 1, err)
                self.assertIn(f"claim '{cid}': {field}:", err)
                self.assertIn("not checkable", err)
                self.assertFalse(os.path.exists(files), c)
            # Zero is a double: a claim of 0 % is compared (and fails against the ANN's 12.5 %).
            rc, out, err, _ = check_in(t, {"claims": [dict(claim, A_ANN=0)]})
            self.assertEqual(rc, 1, err)
            self.assertEqual(json.loads(out)["verdicts"], {"net": "Fail"})

    def test_a_run_past_max_seconds_is_refused_before_it_starts(self):
        # 10 trials x 4 images x 10^5 steps x 5 spiking neurons = 2e7 neuron-steps: past 0.01 s at the engine's
        # measured speed (sim::kNeuronStepsPerCoreSecond), so refused at once, exit 2, nothing written.
        with tempfile.TemporaryDirectory(prefix="ctmc_check_") as t:
            claim = dict(NeverPassUnchecked().network_folder(t), T=1000, dt=0.01)
            rc, out, err, files = check_in(t, {"claims": [claim]}, "--max-seconds", "0.01", "--threads", "1", timeout=30)
            self.assertEqual(rc, 2, (out, err))
            self.assertEqual(err.count("\n"), 1, err)
            self.assertIn("claim 'net': T: our reference run of 2e+07 neuron-steps would take about", err)
            self.assertIn("beyond the limit of 0.01 s", err)
            self.assertFalse(os.path.exists(files))
            if ctmc_snn is not None:
                cwd = os.getcwd()
                os.chdir(t)
                try:
                    with self.assertRaises(ValueError) as cm:
                        ctmc_snn.check({"claims": [claim]}, max_seconds=0.01, threads=1)
                    self.assertIn("--max-seconds", str(cm.exception))
                finally:
                    os.chdir(cwd)

    def test_differences_beyond_double_range_are_printed(self):
        # A flux claim of 1e400 (exact: allowed) is 1e400 times the flux; a fit claim of 1e308 is about 5e308
        # times its MSE: both fail, and the evidence gives the ratio, not an infinity.
        relu = {"states": ["B", "R"], "transitions": [
            {"from": "B", "to": "R", "offset": 0, "slope": 1, "spike": True}, {"from": "R", "to": "B", "offset": 1}]}
        claims = {"claims": [{"id": "flux", "kind": "flux", "model": THREE, "H": 1, "value": "1e400"},
                             {"id": "fit", "kind": "fit", "model": relu, "activation": "relu", "domain": "0,1",
                              "points": 3, "mse": "1e308"}]}
        rc, doc, err, _ = run_check(claims)
        self.assertEqual(rc, 1, err)
        self.assertEqual(doc["verdicts"], {"flux": "Fail", "fit": "Fail"})
        for row in doc["results"]:
            for field in ("difference", "evidence"):
                self.assertNotIn("inf", row[field], row)
                self.assertNotIn("nan", row[field], row)

    def test_max_seconds_out_of_range_is_refused_by_the_command(self):
        # One check for the CLI and the Python module, before the report folder is made.
        with tempfile.TemporaryDirectory(prefix="ctmc_check_") as t:
            claim = {"id": "f", "kind": "flux", "model": THREE, "H": 1, "value": "1"}
            for bad in ("0", "-1", "1e10", "nan"):
                rc, out, err, files = check_in(t, {"claims": [claim]}, "--max-seconds", bad)
                self.assertEqual(rc, 2, (bad, out, err))
                self.assertIn("--max-seconds: ", err)
                self.assertIn("is not in [0.001, 1e+09]", err)
                self.assertFalse(os.path.exists(os.path.dirname(files)), bad)
            if ctmc_snn is not None:
                with self.assertRaises(ValueError) as cm:
                    ctmc_snn.check({"claims": [claim]}, max_seconds=0)
                self.assertIn("--max-seconds: 0 is not in [0.001, 1e+09]", str(cm.exception))

    def test_zero_on_both_sides(self):
        # The three-state flux at H = 0 is 0 (a = H): a claim of 0 under a relative tolerance passes, a claim of
        # 1e-30 fails; neither evidence prints an infinite or undefined relative difference.
        zero = {"id": "zero", "kind": "flux", "model": THREE, "H": 0, "value": 0, "tolerance": {"relative": 1e-9}}
        tiny = dict(zero, id="tiny", value="1e-30")
        rc, doc, err, _ = run_check({"claims": [zero, tiny]})
        self.assertEqual(rc, 1, err)
        self.assertEqual(doc["verdicts"], {"zero": "Pass", "tiny": "Fail"})
        for row in doc["results"]:
            self.assertNotIn("inf", row["evidence"])
            self.assertNotIn("nan", row["evidence"])
            self.assertIn("|claimed - ours| = ", row["evidence"])


class PathsOfTheClaims(unittest.TestCase):
    """Every path of a claims file resolves against its folder and stays inside it (unless
    --allow-outside-paths); NUL bytes and special files are refused before anything opens them."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="ctmc_check_")
        self.t = self.tmp.name
        self.sub = os.path.join(self.t, "sub")
        os.mkdir(self.sub)
        self.flux, _ = three_state_exact(F(1, 2))
        for folder in (self.t, self.sub):
            with open(os.path.join(folder, "m.json"), "w") as f:
                json.dump(THREE, f)

    def tearDown(self):
        self.tmp.cleanup()

    def flux_claim(self, model):
        return {"claims": [{"id": "f", "kind": "flux", "model": model, "H": "1/2", "value": str(self.flux)}]}

    def test_table_activation_beside_the_claims_file(self):
        # phi(x) = x on [0, 1] as a table beside the claims; the chain F = H d/(H + d), d = 10^6 is within
        # 1/(1 + d) of it (at H = 1). Run from another folder: the table must still be found.
        with open(os.path.join(self.sub, "identity.csv"), "w") as f:
            f.write("x,phi\n0,0\n1,1\n")
        relu = {"states": ["B", "R"], "transitions": [
            {"from": "B", "to": "R", "offset": 0, "slope": 1, "spike": True}, {"from": "R", "to": "B", "offset": 10 ** 6}]}
        claims = {"claims": [{"id": "t", "kind": "fit", "model": relu, "activation": "table:identity.csv",
                              "domain": "0,1", "points": 11, "max_error": "{:.6e}".format(1 / (1 + 10 ** 6))}]}
        rc, out, err, _ = check_in(self.sub, claims, cwd=self.t)
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["verdicts"], {"t": "Pass"})
        # A table outside the folder is refused like a model.
        claims["claims"][0]["activation"] = "table:../m.json"
        rc, _, err, _ = check_in(self.sub, claims, cwd=self.t)
        self.assertEqual(rc, 2, err)
        self.assertIn("outside", err)

    def test_paths_stay_inside_the_claims_folder(self):
        os.symlink(os.path.join(self.t, "m.json"), os.path.join(self.sub, "link.json"))
        for model in ("../m.json", os.path.join(self.t, "m.json"), "link.json", "./../sub/../m.json"):
            rc, _, err, files = check_in(self.sub, self.flux_claim(model))
            self.assertEqual(rc, 2, (model, err))
            self.assertEqual(err.count("\n"), 1, err)
            self.assertIn("claim 'f'", err)
            self.assertIn("outside", err)
            self.assertIn("--allow-outside-paths", err)
            self.assertFalse(os.path.exists(files))
            rc, _, err, _ = check_in(self.sub, self.flux_claim(model), "--allow-outside-paths")
            self.assertEqual(rc, 0, (model, err))
        # Inside, absolute or through a folder that comes back: fine.
        for model in ("m.json", os.path.join(self.sub, "m.json"), "./m.json"):
            rc, _, err, _ = check_in(self.sub, self.flux_claim(model))
            self.assertEqual(rc, 0, (model, err))

    def test_a_manifests_weights_stay_inside_the_claims_folder(self):
        # The manifest lies inside; the weights file it names does not: refused like any path of the claims.
        fixtures = os.path.join(SOURCE, "tests", "fixtures")
        with open(os.path.join(fixtures, "tiny_mlp.json")) as f:
            manifest = json.load(f)
        shutil.copy(os.path.join(fixtures, "tiny_mlp.safetensors"), os.path.join(self.t, "w.safetensors"))
        manifest["weights"] = "../w.safetensors"
        manifest.pop("weights_sha256", None)
        with open(os.path.join(self.sub, "net.json"), "w") as f:
            json.dump(manifest, f)
        shutil.copy(os.path.join(fixtures, "two_state_family.json"), os.path.join(self.sub, "n.json"))
        claim = {"id": "n", "kind": "network", "net": "net.json", "neurons": "n.json", "data": ".", "T": 1, "A_ANN": 50}
        rc, _, err, files = check_in(self.sub, {"claims": [claim]})
        self.assertEqual(rc, 2, err)
        self.assertEqual(err.count("\n"), 1, err)
        self.assertIn("claim 'n': net:", err)
        self.assertIn("outside", err)
        self.assertFalse(os.path.exists(files))

    def test_nul_bytes_and_special_files_are_refused(self):
        rc, _, err, _ = check_in(self.sub, self.flux_claim("m.json\u0000.txt"))
        self.assertEqual(rc, 2, err)
        self.assertIn("NUL", err)
        os.mkfifo(os.path.join(self.sub, "fifo"))
        rc, _, err, _ = check_in(self.sub, self.flux_claim("fifo"), timeout=60)  # never opened: no block
        self.assertEqual(rc, 2, err)
        self.assertIn("not a regular file", err)
        self.assertIn("named pipe", err)
        rc, _, err, _ = check_in(self.sub, self.flux_claim("."))
        self.assertEqual(rc, 2, err)
        self.assertIn("a folder", err)

    def test_file_content_is_not_echoed(self):
        secret = "root:x:0:0:" + "S" * 300
        for text in (secret + "\n", '{"states": "' + secret + '"}'):
            with open(os.path.join(self.sub, "secret.json"), "w") as f:
                f.write(text)
            rc, _, err, _ = check_in(self.sub, self.flux_claim("secret.json"))
            self.assertEqual(rc, 2, err)
            self.assertEqual(err.count("\n"), 1, err)
            self.assertNotIn("S" * 61, err)

    @unittest.skipIf(ctmc_snn is None, "the Python module is not built")
    def test_python_dict_paths_stay_in_the_current_folder(self):
        cwd = os.getcwd()
        os.chdir(self.sub)
        try:
            self.assertEqual(ctmc_snn.check(self.flux_claim("m.json"))["verdicts"], {"f": "Pass"})
            with self.assertRaises(ValueError) as cm:
                ctmc_snn.check(self.flux_claim("../m.json"))
            self.assertIn("outside", str(cm.exception))
            self.assertEqual(ctmc_snn.check(self.flux_claim("../m.json"), allow_outside_paths=True)["verdicts"],
                             {"f": "Pass"})
        finally:
            os.chdir(cwd)


class EscapedIds(unittest.TestCase):
    """Claim ids are printed escaped: terminal lines cannot be forged, report.md renders every claim, and
    claims.csv holds the ids as written (no Markdown escapes) with formulas disarmed."""

    def test_ids_in_terminal_markdown_and_csv(self):
        flux, _ = three_state_exact(F(1, 2))
        ids = ["a\nforged Pass", "x <!--", "--> y", "=HYPERLINK(\"http://e\")", "a_b*c", "-5", "@sum", "\tz"]
        claims = {"claims": [{"id": i, "kind": "flux", "model": THREE, "H": "1/2",
                              "value": "0.1" if i == "--> y" else str(flux)} for i in ids]}
        with tempfile.TemporaryDirectory(prefix="ctmc_check_") as t:
            rc, out, err, folder = check_in(t, claims, json_out=False)
            self.assertEqual(rc, 1, err)  # "--> y" is false
            lines = out.splitlines()
            self.assertFalse([line for line in lines if line.startswith("forged")], out)
            self.assertIn("a\\nforged Pass", out)
            self.assertFalse(any(c in out for c in "\t\r\x1b"), out)
            with open(os.path.join(folder, "report.md")) as f:
                md = f.read()
            # No raw HTML comment can open: every '<' of an id is escaped, in the table and in the checks.
            self.assertNotIn("x <!--", md)
            self.assertIn("FAIL** claim --\\> y", md)
            self.assertNotIn("\nforged", md)
            with open(os.path.join(folder, "claims.csv"), newline="") as f:
                rows = list(csv.reader(f))
            got = [r[0] for r in rows[1:]]
            self.assertEqual(got, ["a\nforged Pass", "x <!--", "'--> y", "'=HYPERLINK(\"http://e\")", "a_b*c", "-5",
                                   "'@sum", "'\tz"])
            self.assertFalse(any("\\" in cell for r in rows for cell in r[:4]), rows)


if __name__ == "__main__":
    unittest.main()
