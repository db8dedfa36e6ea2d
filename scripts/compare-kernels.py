#!/usr/bin/python3
"""The vectorised (or fast) spiking kernel against the reference kernel, figure by figure.

Both kernels sample the same law with different random numbers
(`simulate network --kernel`), so their A_SNN, SynOps and CTMC transitions
per sample must agree within statistical error. This script trains the MNIST MLPs of bench_snn
(784-256-128-10, ReLU and sigmoid, `ctmc-snn train --seed 1`), runs each
(net, sampler, kernel) R times with distinct seeds (T trials x N test images
per run), and prints per kernel the mean of the run means, their spread, the
per-trial spread inside runs, and Welch's t between the kernels on the run
means. The run means are independent, so Welch's t needs no assumption about
the trials; with R runs per side it is roughly Student t with 2(R-1) degrees
of freedom.

Usage (from the repository's root, after a build):
  PYTHONPATH=build/python /usr/bin/python3 scripts/compare-kernels.py \
      [--runs R] [--trials T] [--images N] [--tau 0.1] [--rate 5] [--T 50] \
      [--only relu|sigmoid] [--samplers exact,end-state] [--kernel vectorised|fast] [--seed-base S] [--out DIR]
      [--net mlp|vgg11 [--vgg DIR]]
Run it with the interpreter the module was built for (Debian's, with
python3-numpy). It takes about R x 2 x (35 s ReLU, 95 s sigmoid) per sampler
with 1000 images and 10 trials on 2 cores.

--net vgg11 compares the kernels on the trained VGG-11 of `bench_conv --net
trained` instead (DIR: its cache folder, holding net.json and convert/
neuron-L<l>.json; run the bench once first), at dt 0.001 and T 5 unless
--T is given. Its scales (q99 per layer) come from the first 1000 training
images, which the script copies with the test images into OUT/vgg11-data.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import ctmc_snn

# The neurons of bench_snn: a two-state ReLU neuron (B -> R at rate H,
# R -> B at 100) and a fitted three-state sigmoid neuron.
NEURONS = {
    "relu": {"states": ["B", "R"],
             "transitions": [{"from": "B", "to": "R", "offset": "0", "slope": "1", "spike": True},
                             {"from": "R", "to": "B", "offset": "100", "slope": "0", "spike": False}]},
    "sigmoid": {"states": ["B", "G", "R"],
                "transitions": [{"from": "B", "to": "G", "offset": "0.604311", "slope": "0.268193", "spike": False},
                                {"from": "G", "to": "B", "offset": "0.000001", "slope": "0", "spike": False},
                                {"from": "G", "to": "R", "offset": "4.430373", "slope": "-0.447531", "spike": True},
                                {"from": "R", "to": "B", "offset": "49.36232", "slope": "0", "spike": False}]},
}


def welch(a, b):
    se = math.sqrt(statistics.variance(a) / len(a) + statistics.variance(b) / len(b))
    return (statistics.mean(a) - statistics.mean(b)) / se if se > 0 else float("nan")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=4)
    p.add_argument("--trials", type=int, default=10)
    p.add_argument("--images", type=int, default=1000)
    p.add_argument("--tau", type=float, default=0.1)
    p.add_argument("--rate", type=float, default=5)
    p.add_argument("--T", type=float, default=50)
    p.add_argument("--only", choices=["relu", "sigmoid"])
    p.add_argument("--samplers", default="exact,end-state")
    p.add_argument("--seed-base", type=int, default=0,
                   help="added to every seed: a replication with runs independent of the default's")
    p.add_argument("--kernel", choices=["vectorised", "fast"], default="vectorised",
                   help="the kernel compared with the reference kernel")
    p.add_argument("--data", default="data/mnist")
    p.add_argument("--cli", default="build/cli/ctmc-snn")
    p.add_argument("--out", default="compare-kernels", help="folder for the nets and neuron files")
    p.add_argument("--net", choices=["mlp", "vgg11"], default="mlp")
    p.add_argument("--vgg", default="build/bench/bench_conv_cache/vgg11-w0.25-relu-5000images-3epochs-seed1",
                   help="bench_conv --net trained's cache folder (--net vgg11)")
    a = p.parse_args()
    if a.net == "vgg11" and "--T" not in sys.argv:
        a.T = 5
    if a.runs < 2:
        p.error("--runs must be at least 2 (a spread of run means)")
    if a.trials < 1 or a.images < 1:
        p.error("--trials and --images must be at least 1")
    if not os.path.isdir(a.data):
        p.error(f"--data {a.data}: not a folder (an MNIST IDX folder, e.g. data/mnist from scripts/fetch-data.sh)")
    if not os.access(a.cli, os.X_OK):
        p.error(f"--cli {a.cli}: not an executable (build first: bash scripts/build.sh)")
    try:
        compare_vgg(a) if a.net == "vgg11" else compare(a)
    except (ValueError, OSError) as e:  # the module's InputError (ValueError), a missing file or folder
        print(f"compare-kernels: {e}", file=sys.stderr)
        sys.exit(2)
    except subprocess.CalledProcessError as e:  # ctmc-snn train printed its one-line error above
        print(f"compare-kernels: {' '.join(e.cmd)} exited with status {e.returncode}", file=sys.stderr)
        sys.exit(2)


def print_rows(config, runs, kernel):
    """One line per quantity: each kernel's mean of run means, the difference and Welch's t."""
    ref, vec = runs["reference"], runs[kernel]
    for name, i in [("A_SNN", 0), ("SynOps", 1), ("trans.", 3)]:
        mr, mv = statistics.mean(ref[i]), statistics.mean(vec[i])
        spread = f"{statistics.stdev(ref[i]):.4g}, {statistics.stdev(vec[i]):.4g}"
        if i == 1:
            spread += f" / {statistics.mean(ref[2]):.4g}, {statistics.mean(vec[2]):.4g}"
        print(f"{config:<22} {name:<8} {mr:>14.6g} {mv:>14.6g} {mv - mr:>12.4g} {(mv - mr) / mr:>9.2e} "
              f"{welch(vec[i], ref[i]):>6.2f}   {spread}")


def kernel_runs(a, simulate, kernel):
    """R runs of one kernel: per run A_SNN, SynOps, the SynOps spread over trials, transitions."""
    acc, syn, trial_sd, trans = [], [], [], []
    for k in range(a.runs):
        # Different seeds for the two kernels: their runs are independent.
        seed = a.seed_base + (1 if kernel == "reference" else 1001) + k
        r = simulate(seed, kernel)
        per_trial = np.asarray(r["synops"]).reshape(a.trials, -1).mean(axis=1)
        acc.append(r["A_SNN_mean"])
        syn.append(float(per_trial.mean()))
        trial_sd.append(float(per_trial.std(ddof=1)) if a.trials > 1 else float("nan"))
        trans.append(r["transitions_per_sample"])
    return acc, syn, trial_sd, trans


def idx_head(src, dst, n):
    """The first n items of an IDX file (raw or .gz), written raw."""
    import gzip
    import struct
    path = src if os.path.exists(src) else src + ".gz"
    with (gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")) as f:
        b = f.read()
    dims = b[3]
    shape = struct.unpack(">" + "I" * dims, b[4:4 + 4 * dims])
    item = 1
    for d in shape[1:]:
        item *= d
    n = min(n, shape[0])
    with open(dst, "wb") as f:
        f.write(b[:4] + struct.pack(">I", n) + b[8:4 + 4 * dims] + b[4 + 4 * dims:4 + 4 * dims + n * item])


def compare_vgg(a):
    net = os.path.join(a.vgg, "net.json")
    neurons = [os.path.join(a.vgg, "convert", f"neuron-L{l}.json") for l in range(1, 15)]
    for f in [net] + neurons:
        if not os.path.exists(f):
            raise OSError(f"--vgg {a.vgg}: no {f} (run bench_conv --net trained once first)")
    data = os.path.join(a.out, "vgg11-data")
    os.makedirs(data, exist_ok=True)
    for name, n in [("train-images-idx3-ubyte", 1000), ("train-labels-idx1-ubyte", 1000),
                    ("t10k-images-idx3-ubyte", a.images), ("t10k-labels-idx1-ubyte", a.images)]:
        idx_head(os.path.join(a.data, name), os.path.join(data, name), n)
    print(f"trained VGG-11 width 0.25 ({a.vgg}), T {a.T:g}, tau {a.tau:g}, r {a.rate:g}, dt 0.001; {a.runs} runs "
          f"per kernel (seeds {a.seed_base} + 1..{a.runs} and {a.seed_base} + 1001..{1000 + a.runs}), {a.trials} "
          f"trials x {a.images} test images each")
    print(f"{'config':<22} {'quantity':<8} {'reference':>14} {a.kernel:>14} {'difference':>12} "
          f"{'rel':>9} {'t':>6}   run-mean sd (ref, vec) / trial sd")
    for sampler in a.samplers.split(","):
        t0 = time.time()

        def simulate(seed, kernel):
            return ctmc_snn.simulate_network(net, data, neurons, T=a.T, dt=0.001, tau=a.tau, rate=a.rate,
                                             limit=a.images, trials=a.trials, seed=seed, sampler=sampler,
                                             kernel=kernel)
        runs = {kernel: kernel_runs(a, simulate, kernel) for kernel in ["reference", a.kernel]}
        print_rows(f"vgg11 {sampler}", runs, a.kernel)
        print(f"{'':<22} ({time.time() - t0:.0f} s)")
        sys.stdout.flush()


def compare(a):
    os.makedirs(a.out, exist_ok=True)
    print(f"MNIST MLP 784-256-128-10, T {a.T:g}, tau {a.tau:g}, r {a.rate:g}, dt 0.005; {a.runs} runs per kernel "
          f"(seeds {a.seed_base} + 1..{a.runs} and {a.seed_base} + 1001..{1000 + a.runs}), {a.trials} trials x "
          f"{a.images} test images each")
    print(f"{'config':<22} {'quantity':<8} {'reference':>14} {a.kernel:>14} {'difference':>12} "
          f"{'rel':>9} {'t':>6}   run-mean sd (ref, vec) / trial sd")
    for act in ["relu", "sigmoid"]:
        if a.only and act != a.only:
            continue
        net = os.path.join(a.out, f"{act}.json")
        if not os.path.exists(net):
            subprocess.run([a.cli, "train", "--data", a.data, "--output", net, "--activation", act, "--seed", "1"],
                           check=True, stdout=subprocess.DEVNULL)
        neuron = os.path.join(a.out, f"{act}_neuron.json")
        with open(neuron, "w") as f:
            json.dump(NEURONS[act], f)
        for sampler in a.samplers.split(","):
            t0 = time.time()

            def simulate(seed, kernel):
                return ctmc_snn.simulate_network(net, a.data, neuron, T=a.T, tau=a.tau, rate=a.rate,
                                                 limit=a.images, trials=a.trials, seed=seed, sampler=sampler,
                                                 kernel=kernel)
            runs = {kernel: kernel_runs(a, simulate, kernel) for kernel in ["reference", a.kernel]}
            print_rows(f"{act} {sampler}", runs, a.kernel)
            print(f"{'':<22} ({time.time() - t0:.0f} s)")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
