#!/usr/bin/env python3
"""Writes the seed corpus of the cifar_dir fuzz target,
tests/fuzz/corpus/cifar_dir/ (committed): folders in the target's encoding
(fuzz_cifar_dir.cpp: per file a kind byte, then for a regular or gzip file a
2-byte little-endian length and the content), each batch of 2 records. One
whole folder, and the cases that were taken as they came or hung: half a test
batch, a missing training batch, a test batch that is a named pipe or
/dev/zero, a gzip batch of one record too few. Run from the repository root:
python3 tests/fuzz/make_cifar_dir_seeds.py"""
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus", "cifar_dir")
RECORDS = 2
ABSENT, REGULAR, PIPE, FOLDER, DEV_ZERO, GZIP = range(6)


def rec(label, seed):
    return bytes([label]) + bytes((seed + 7 * i) % 256 for i in range(3072))


def batch(b, records=RECORDS):
    return b"".join(rec((3 * (10 * b + j)) % 10, 10 * b + j) for j in range(records))


def regular(content, kind=REGULAR):
    return bytes([kind]) + struct.pack("<H", len(content)) + content


def folder(files):
    return b"".join(files)


def whole():
    return [regular(batch(b)) for b in range(1, 7)]


def put(name, files):
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(folder(files))


put("whole", whole())
half = whole()
half[5] = regular(batch(6)[: len(batch(6)) // 2])
put("half_test_batch", half)
missing = whole()
missing[2] = bytes([ABSENT])
put("missing_data_batch_3", missing)
pipe = whole()
pipe[5] = bytes([PIPE])
put("test_batch_pipe", pipe)
zero = whole()
zero[5] = bytes([DEV_ZERO])
put("test_batch_dev_zero", zero)
short_gz = whole()
short_gz[1] = regular(batch(2, RECORDS - 1), GZIP)
put("gzip_batch_one_record_short", short_gz)
gz = whole()
gz[3] = regular(batch(4), GZIP)
put("gzip_batch", gz)
sub = whole()
sub[0] = bytes([FOLDER])
put("data_batch_1_folder", sub)
