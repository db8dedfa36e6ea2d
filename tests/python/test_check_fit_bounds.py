"""Tests of scripts/check-fit-bounds.py (CTest "check_fit_bounds"): its
verdicts on a fits.json whose MSE is computed here in plain floats, one
point at a time, not by the script's numpy code."""
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "check-fit-bounds.py")

THETA = [1, "1/2", 1, 2, "1/5", 3]  # a.p, a.s, b, c.p, c.s, d


def mse(theta):
    ap, as_, b, cp, cs, d = (float(Fraction(str(t))) for t in theta)
    total = 0.0
    for k in range(401):
        h = -6 + 12 * k / 400
        a, c = max(0.0, ap + as_ * h), max(0.0, cp + cs * h)
        den = d * (a + b + c) + a * c
        f = a * c * d / den if den > 0 else 0.0
        total += (f - 1 / (1 + math.exp(-h))) ** 2
    return total / 401


def write_report(folder, bound, mse_value):
    ap, as_, b, cp, cs, d = (str(t) for t in THETA)
    model = {"states": ["B", "G", "R"], "transitions": [
        {"from": "B", "to": "G", "offset": ap, "slope": as_, "spike": False},
        {"from": "G", "to": "B", "offset": b, "slope": "0", "spike": False},
        {"from": "G", "to": "R", "offset": cp, "slope": cs, "spike": True},
        {"from": "R", "to": "B", "offset": d, "slope": "0", "spike": False}]}
    with open(os.path.join(folder, "model.json"), "w") as f:
        json.dump(model, f)
    rows = [{"target": "sigmoid", "family": "two-state", "domain": ["-6", "6"], "alpha": "1", "mse": 1.0},
            {"target": "sigmoid", "family": "three-state", "domain": ["-6", "6"], "alpha": "1", "mse": mse_value,
             "best_model": "model.json", "optimality": {"lower_bound": bound}}]
    with open(os.path.join(folder, "fits.json"), "w") as f:
        json.dump(rows, f)


def run(folder):
    return subprocess.run([sys.executable, SCRIPT, folder, "--starts", "20"], capture_output=True, text=True)


class CheckFitBounds(unittest.TestCase):
    def test_verdicts(self):
        m = mse(THETA)
        with tempfile.TemporaryDirectory() as d:
            # Sigmoid's three-state optimum is 9.7e-4: a bound of 1e-4 holds.
            write_report(d, 1e-4, m)
            r = run(d)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertNotIn("BELOW", r.stdout)
            # A bound above what the optimizer reaches (twice this model's
            # MSE, from 20 seeded starts) is refuted.
            write_report(d, 2 * m, m)
            r = run(d)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn("BELOW THE BOUND", r.stdout)
            # A report MSE that is not the model's: another problem, exit 2.
            write_report(d, 1e-4, 1.01 * m)
            r = run(d)
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn("is not the report's MSE", r.stderr)
            # No three-state row, or not a list of rows: bad input, exit 2,
            # before any table.
            for rows in ([{"target": "sigmoid", "family": "two-state"}], {"rows": []}):
                with open(os.path.join(d, "fits.json"), "w") as f:
                    json.dump(rows, f)
                r = run(d)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertEqual(r.stdout, "")
                self.assertEqual(len(r.stderr.strip().splitlines()), 1)
        r = run(os.path.join(tempfile.gettempdir(), "no-such-report-folder"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("fits.json", r.stderr)


if __name__ == "__main__":
    unittest.main()
