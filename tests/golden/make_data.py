#!/usr/bin/env python3
"""Writes a synthetic 28x28, 10-class IDX data set for the golden-hash test.

Integer arithmetic only (a 64-bit LCG): the bytes are the same on every
machine and Python version. Class c is a bright bar in row band c plus a
column band, on uniform noise, so a small MLP learns it in an epoch or two.
Usage: make_data.py OUT_DIR
"""
import os
import struct
import sys

MASK = (1 << 64) - 1


class Lcg:
    def __init__(self, seed):
        self.s = seed & MASK

    def next(self):
        # Knuth's MMIX constants; the top bits are the better ones.
        self.s = (self.s * 6364136223846793005 + 1442695040888963407) & MASK
        return self.s >> 33


def images(rng, n):
    pixels, labels = bytearray(), bytearray()
    for _ in range(n):
        c = rng.next() % 10
        labels.append(c)
        for r in range(28):
            for col in range(28):
                v = rng.next() % 96
                if 2 + 2 * c <= r < 4 + 2 * c or (c * 5) % 24 <= col < (c * 5) % 24 + 3:
                    v += 140
                pixels.append(min(v, 255))
    return bytes(pixels), bytes(labels)


def write(out, stem, pixels, labels):
    n = len(labels)
    with open(os.path.join(out, stem[0]), "wb") as f:
        f.write(struct.pack(">IIII", 0x0803, n, 28, 28) + pixels)
    with open(os.path.join(out, stem[1]), "wb") as f:
        f.write(struct.pack(">II", 0x0801, n) + labels)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = Lcg(20251127)
    write(out, ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"), *images(rng, 600))
    write(out, ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"), *images(rng, 200))


if __name__ == "__main__":
    main()
