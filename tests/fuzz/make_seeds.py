#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz/corpus/<target>/ (committed; rerun
after changing a fixture): copies of the test fixtures plus small generated
files, one valid input of each kind and a few edge variants. Run from the
repository root: python3 tests/fuzz/make_seeds.py"""
import gzip
import os
import shutil
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIX = os.path.join(ROOT, "tests", "fixtures")
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus")


def put(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def copy(target, src):
    put(target, os.path.basename(src), open(src, "rb").read())


def gz(data):
    return gzip.compress(data, mtime=0)


def idx(type_byte, dims, payload):
    return bytes([0, 0, type_byte, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + payload


# model: every model fixture and report example, and the README's example.
for name in sorted(os.listdir(FIX)):
    if name.endswith(".json") and not name.startswith("tiny_mlp"):
        copy("model", os.path.join(FIX, name))
models = os.path.join(ROOT, "reports", "models")
for name in sorted(os.listdir(models)) if os.path.isdir(models) else []:
    if name.endswith(".json"):
        copy("model", os.path.join(models, name))
put("model", "readme_example.json", """{
  "states": ["B", "G", "R"],
  "transitions": [
    {"from": "B", "to": "G", "offset": "0", "slope": "1"},
    {"from": "G", "to": "B", "offset": 0.5},
    {"from": "G", "to": "R", "offset": "1/3", "slope": 2, "spike": true},
    {"from": "R", "to": "B", "offset": "2e-3"}
  ],
  "meta": {"family": "three-state", "domain": [-1, 1]}
}""")

# manifest (the target puts tiny_mlp*.safetensors beside it) and safetensors.
for name in ("tiny_mlp.json", "tiny_mlp_half.json"):
    copy("manifest", os.path.join(FIX, name))
for name in ("tiny_mlp.safetensors", "tiny_mlp_half.safetensors"):
    copy("safetensors", os.path.join(FIX, name))

# onnx: the files PyTorch's torch.onnx.export wrote for the VGG-11 fixture
# (BatchNorm folded by the exporter, and kept) and a small one.
for name in ("torch_tiny_cnn.onnx", "torch_vgg11.onnx", "torch_vgg11_bn.onnx"):
    copy("onnx", os.path.join(FIX, "torch_vgg11", name))

# IDX: 3 images of 4x4 ubyte, their labels, a float32 matrix; raw and gzip.
images = idx(0x08, [3, 4, 4], bytes(range(0, 48 * 5, 5)))
labels = idx(0x08, [3], bytes([0, 9, 3]))
floats = idx(0x0D, [2, 2], struct.pack(">4f", 0.0, 1.0, -2.5, 3.25))
for name, data in (("images-idx3", images), ("labels-idx1", labels), ("floats-idx2", floats)):
    put("idx", name, data)
    put("idx", name + ".gz", gz(data))
    put("idx_gz", name, data)  # the idx_gz target gzips its input itself
put("idx", "two-members.gz", gz(images[:20]) + gz(images[20:]))

# CIFAR-10: two records raw, one gzip.
rec = lambda label, seed: bytes([label]) + bytes((seed + 7 * i) % 256 for i in range(3072))
put("cifar", "two_records.bin", rec(3, 1) + rec(9, 2))
put("cifar", "one_record.bin.gz", gz(rec(0, 5)))

# npm digits: one 28x28 image with the package's 3-decimal values.
vals = ["0" if i % 7 else "%.3f" % ((i % 1000) / 1000) for i in range(784)]
put("npm_digits", "one_image.json", '{"data":[' + ",".join(vals) + "]}")
put("npm_digits", "ones.json", '{"data": [' + ", ".join(["1"] * 784) + "]}")

# activation tables.
put("table", "sigmoidish.csv", "x,phi\n-4,0.018\n-1,0.269\n0,0.5\n1,0.731\n4,0.982\n")
put("table", "bom_comments.csv", "\ufeff# a comment\n\n-2.5e0 , 0\r\n0,0\n1.5,1.5\n")

# samples / weights.
put("samples", "values.txt", "# samples\n-1\n0.5\n1/3\n\n2e-1\n3,\n")
put("samples", "four.txt", "1\n0\n2.5\n1/4\n")

# .npy test images and labels (numpy's header layout, data at a multiple of 64).
def npy(descr, shape, payload):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload
put("npy", "images_f4.npy", npy("<f4", [2, 1, 2, 3], struct.pack("<12f", *[i / 7 for i in range(12)])))
put("npy", "labels_i8.npy", npy("<i8", [3], struct.pack("<3q", 0, 9, 3)))
put("npy", "pixels_u1.npy", npy("|u1", [2, 4], bytes(range(0, 240, 30))))
put("npy", "halves_f2.npy", npy("<f2", [2], struct.pack("<2H", 0x3C00, 0xC000)))

# A sweep part as `ctmc-snn sweep --shard 1/2` writes it (one run of two).
part = {
    "format": "ctmc-snn sweep part", "version": 1,
    "spec": {"nets": ["net.json"], "data": "data", "neurons": ["m1.json", "m2.json"], "samplers": ["exact"],
             "tau": [0.02], "rate": [2.0], "T": [0.2, 0.5], "trials": 2, "dt": 0.01, "readout": "spike",
             "scale": "q99", "limit": 0, "subset": "all", "trace_weight": "integral", "output_scale": "logits",
             "layer_alpha": [], "seed": 9, "criterion_pp": 1.0},
    "shard": {"index": 1, "count": 2},
    "runs": [{"run": 0, "net": 0, "sampler": "exact", "tau": 0.02, "rate": 2.0, "trial": 0, "test_images": 25,
              "A_ANN": 36.0, "A_MF": 52.0, "ann_vs_mf": [1, 5],
              "layers": [{"q99": 1.5, "alpha": 1.3, "outside_fit_domain": 0.0},
                         {"q99": 2.0, "alpha": 1.0, "outside_fit_domain": None}],
              "windows": [{"T": t, "A_SNN": 50.0 + t, "synops_per_sample": 1.0 + t, "spikes_per_neuron": 0.1 * t,
                           "transitions_per_sample": 3.0 * t, "tie_fraction": 0.04,
                           "count_quantiles": [0.0, 1.0, 2.0, 4.0], "silent_fraction": 0.3,
                           "layers": [{"spikes_per_neuron": 0.1, "rate_rel_rmse": 0.5},
                                      {"spikes_per_neuron": 0.2, "rate_rel_rmse": None}],
                           "synops_sd": 0.5 * t, "transitions_sd": 1.5 * t, "ann_vs_snn": [2, 6],
                           "mf_vs_snn": [1, 1]} for t in (0.2, 0.5)]}],
}
import json
put("sweep_part", "part_1_of_2.json", json.dumps(part, indent=1))
part["shard"] = {"index": 1, "count": 1}
part["spec"]["trials"] = 1
put("sweep_part", "whole_1_of_1.json", json.dumps(part))

# --subset index:FILE lists.
put("subset_index", "lines.txt", "7\n2\n19\n0\n11\n")
put("subset_index", "commas.txt", "3, 1,4,15 , 9\r\n")

# Claims files (ctmc-snn check): one claim of each kind, models inline.
three = {"states": ["B", "G", "R"], "transitions": [
    {"from": "B", "to": "G", "offset": 0, "slope": 1}, {"from": "G", "to": "B", "offset": "0.5"},
    {"from": "G", "to": "R", "offset": "1/3", "slope": 2, "spike": True}, {"from": "R", "to": "B", "offset": 2}]}
claims = {"meta": {"note": "seed"}, "claims": [
    {"id": "f", "kind": "flux", "model": three, "H": "1/2", "value": "5/12", "tolerance": "exact"},
    {"id": "p", "kind": "stationary", "model": three, "H": 0.5, "pi": {"B": "0.5", "R": "1/9"}},
    {"id": "c", "kind": "counting", "model": three, "H": 1, "T": "10", "mean": 1.5e1, "fano": "1/2",
     "start": "G", "tolerance": {"relative": 1e-6}},
    {"id": "s", "kind": "fit", "model": three, "activation": "sigmoid", "domain": "-6,6", "points": 41,
     "mse": "1.1e-3", "max_error": "0.05", "tolerance": "digits"},
    {"id": "g", "kind": "fit", "family": "three-state", "activation": "relu", "domain": "-1,5", "alpha": "1/2",
     "mse": "2.4e-3"},
    {"id": "n", "kind": "simulation", "model": three, "H": "1", "T": 4, "trials": 400, "mean": 6.1,
     "variance": 3, "alpha": 2, "false_alarm": 1e-3},
    {"id": "w", "kind": "network", "net": "net.json", "data": "data", "neurons": ["m.json"], "T": 2, "dt": 0.01,
     "sampler": "euler", "trace_weight": "1/tau", "output_scale": "activation", "layer_alpha": ["auto", 2],
     "trials": 3, "A_MF": 97.5, "A_SNN": 96, "SynOps": 1e4}]}
put("claims", "every_kind.json", json.dumps(claims, indent=1))
put("claims", "one_flux.json", json.dumps({"claims": [claims["claims"][0]]}))
# Paths to what the target's folder holds (fuzz_claims.cpp: m.json, t.csv,
# net.json, x.npy, y.npy, sub/, fifo, up -> ..).
paths = {"claims": [
    {"id": "m", "kind": "flux", "model": "m.json", "H": 1, "value": "4/5"},
    {"id": "t", "kind": "fit", "model": "sub/../m.json", "activation": "table:t.csv", "domain": "0,2", "mse": "0.1"},
    {"id": "w", "kind": "network", "net": "net.json", "neurons": "m.json", "test_images": "x.npy",
     "test_labels": "y.npy", "train_images": "x.npy", "train_labels": "y.npy", "T": 1, "dt": 0.01, "tau": 0.02,
     "rate": 5, "layer_alpha": ["auto", 2], "subset": "stride:2", "trials": 2, "A_SNN": 50}]}
put("claims", "paths.json", json.dumps(paths))

# check_numbers: the first byte picks the tolerance (none, exact, digits,
# relative, absolute), the rest is the claimed value (fuzz_check_numbers.cpp):
# the flux, values beyond and below the range of doubles, zero, fractions.
for i, (pick, value) in enumerate([(0, "1"), (1, "1.0"), (2, "1e999"), (2, "-1e999"), (3, "1e309"), (2, "-1e400"),
                                   (4, "1e-320"), (3, "0"), (1, "3/3"), (2, "0.050"), (4, "1e-30"),
                                   (2, "1e308"), (0, "1e400")]):
    put("check_numbers", f"seed_{i:02d}", bytes([pick]) + value.encode())
