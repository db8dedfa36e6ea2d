#!/usr/bin/env python3
"""Cross-check a hand-written, PyTorch-style two-state CTMC neuron against ctmc-snn.

The "implementation under test" is what a PyTorch user typically writes: a
batch of neurons as a tensor of states, advanced in fixed time steps dt with
the exact 2x2 transition probabilities expm(Q dt), and a spike counted when a
neuron moves from B (ready) to R (refractory) between two steps. It is written
here in numpy (the same tensor operations as torch; swap `np` for `torch` to
check a torch version).

What the toolkit gives, exactly, for the same model:
  - the stationary flux F(H) = a d / (a + d) (ctmc_snn.flux, exact rational);
  - E[N(T)] and Var N(T) from the stationary start (ctmc_snn.counting),
    which set the standard error of the implementation's spike-count mean.

The check: |empirical rate - F| <= 4.4 standard errors + the step bias. The
step counting misses a spike followed by recovery within one step, a
relative undercount of at most d dt / 2 + O(dt^2) (bounded here by d dt).
Exit status 0 when every H passes, 1 otherwise.

Run from the repository root after building:
    PYTHONPATH=build/python python3 examples/crosscheck_pytorch.py
"""
import fractions
import sys

import numpy as np

import ctmc_snn

# B -> R (spike) at a(H) = max(0, 1/2 + H), R -> B at d = 3.
MODEL = {
    "states": ["B", "R"],
    "transitions": [
        {"from": "B", "to": "R", "offset": "1/2", "slope": 1, "spike": True},
        {"from": "R", "to": "B", "offset": 3},
    ],
    "meta": {"family": "two-state"},
}
D = 3.0


def pytorch_style_counts(a, d, T, dt, neurons, rng):
    """Spike counts N(T) of `neurons` independent two-state neurons started in the stationary law."""
    s = a + d
    # expm(Q dt) for Q = [[-a, a], [d, -d]].
    p_br = a / s * (1.0 - np.exp(-s * dt))  # B -> R within dt
    p_rb = d / s * (1.0 - np.exp(-s * dt))  # R -> B within dt
    state = (rng.random(neurons) < a / s).astype(np.int8)  # 1 = R, drawn from pi
    counts = np.zeros(neurons, dtype=np.int64)
    for _ in range(int(round(T / dt))):
        u = rng.random(neurons)
        fire = (state == 0) & (u < p_br)
        recover = (state == 1) & (u < p_rb)
        counts += fire
        state = np.where(fire, 1, np.where(recover, 0, state)).astype(np.int8)
    return counts


def main():
    rng = np.random.default_rng(20261127)
    T, dt, neurons = 20.0, 1e-3, 2000
    ok = True
    hs = [fractions.Fraction(0), fractions.Fraction(1, 2), fractions.Fraction(2)]
    # Many H at once in double: a numpy array in, a numpy array out.
    grid = np.linspace(-1, 3, 9)
    f_grid = ctmc_snn.flux(MODEL, grid, mode="double")
    a_grid = np.maximum(0.0, 0.5 + grid)
    closed = a_grid * D / (a_grid + D)
    if not np.allclose(f_grid, closed, rtol=1e-14, atol=0):
        print("FAIL: double flux on the grid differs from a d / (a + d)")
        ok = False
    for h in hs:
        a = max(fractions.Fraction(0), fractions.Fraction(1, 2) + h)
        f_exact = ctmc_snn.flux(MODEL, h, mode="exact")  # a Fraction
        assert f_exact == a * 3 / (a + 3), (f_exact, a)
        c = ctmc_snn.counting(MODEL, h, T)  # MPFR: decimal strings, *_float beside them
        counts = pytorch_style_counts(float(a), D, T, dt, neurons, rng)
        rate = counts.mean() / T
        se = np.sqrt(c["variance_float"] / neurons) / T
        bias = D * dt * float(f_exact)
        z = (rate - float(f_exact)) / se
        passed = abs(rate - float(f_exact)) <= 4.4 * se + bias
        ok &= passed
        print(f"H = {h}: implementation rate {rate:.5f}, toolkit flux {f_exact} = {float(f_exact):.5f}, "
              f"z = {z:+.2f} (se {se:.2e}, step bias <= {bias:.1e}): {'ok' if passed else 'FAIL'}")
    print("all checks passed" if ok else "a check FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
