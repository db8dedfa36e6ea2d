#!/usr/bin/env bash
# Golden results: seeded computations whose outputs must have the same bits
# on every x86-64 machine, whatever its CPU, C library or thread count
# (README "Reproducibility"). Each computation's output is reduced to one
# SHA-256 and compared with tests/golden/hashes.txt.
#
#   tests/golden/golden.sh CTMC_BIN           check: every variant against the table (exit 1 on a difference)
#   tests/golden/golden.sh CTMC_BIN --print   print the table (threads 2, no masking) and nothing else
#
# Regenerating the table after an intended change of results (a new random
# stream, another algorithm), from the repository root:
#
#   bash tests/golden/golden.sh build/cli/ctmc-snn --print > tests/golden/hashes.txt
#
# and say in the commit which computations changed and why. GOLDEN_KEEP=DIR
# keeps every output (DIR/<variant>/...) to look at or diff.
#
# Variants: --threads 1, 2 and 3; and --threads 2 with the C library's
# CPU-specific code masked (GLIBC_TUNABLES below: the baseline SSE2 variants
# of libm instead of the FMA/AVX2 ones, and no AVX2/EVEX string functions),
# the kind of difference another machine makes.
#
# Computations (synthetic data of make_data.py, so no download is needed):
#   train     train --activation sigmoid (784-32-10, 2 epochs): the weights file
#   train_tanh1  train --activation tanh1 (784-16-10, 1 epoch): the weights file
#             (float tanh: glibc 2.41's tanhf differs from 2.36's)
#   train_vgg train --arch vgg11 --width 0.05 --activation softplus (the strided
#             VGG-11 with BatchNorm, 1 epoch on 256 images): the weights file
#   simulate  simulate network --json with the sigmoid three-state neurons:
#             accuracies, SynOps, transitions (wall times left out)
#   sweep     sweep over tau x r x T x samplers (exact, uniformization): the document
#   fit       fit --activation sigmoid --family three-state: the model file
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ctmc=${1:?usage: golden.sh CTMC_BIN [--print]}
mode=${2:-check}
ctmc=$(cd "$(dirname "$ctmc")" && pwd)/$(basename "$ctmc")
command -v python3 >/dev/null || { echo "golden: needs python3" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/make_data.py" "$work/data"
neurons="$root/reports/models/sigmoid_three_state.json"
masked="glibc.cpu.hwcaps=-AVX2,-FMA,-FMA4,-AVX,-AVX512F,-AVX512VL,-AVX512DQ,-AVX512BW,-SSE4_1,-SSE4_2,-SSSE3,-AVX_Fast_Unaligned_Load"

# The JSON document without its times (keys naming seconds, as
# scripts/compare-reports.sh) and without what names this run rather than the
# computation (the thread count, the git revision; the run's folders become
# <run>, <work> and <root>), re-serialized by one json round trip (Python's
# float repr round-trips: no bit is lost).
normalized_hash() {
  python3 - "$1" "$2" "$work" "$root" <<'PY'
import hashlib, json, sys
_, path, run, work, root = sys.argv
DROP = ("threads", "git_revision")
def drop(x):
    if isinstance(x, dict):
        return {k: drop(v) for k, v in x.items() if "seconds" not in k and k not in DROP}
    if isinstance(x, list):
        return [drop(v) for v in x]
    if isinstance(x, str):
        return x.replace(run, "<run>").replace(work, "<work>").replace(root, "<root>")
    return x
doc = drop(json.load(open(path)))
print(hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16])
PY
}

# run_variant NAME THREADS [TUNABLES]: prints "NAME/<computation> <hash>" lines.
run_variant() {
  local name=$1 threads=$2 tunables=${3:-} d="$work/$1"
  mkdir -p "$d"
  local env=(env)
  [ -n "$tunables" ] && env=(env "GLIBC_TUNABLES=$tunables")
  "${env[@]}" "$ctmc" train --data "$work/data" --activation sigmoid --hidden 32 --epochs 2 --seed 3 \
    --threads "$threads" --output "$d/net.json" >"$d/train.log" 2>&1
  echo "train $(sha256sum "$d/net.safetensors" | cut -c1-16)"
  "${env[@]}" "$ctmc" train --data "$work/data" --activation tanh1 --hidden 16 --epochs 1 --seed 4 \
    --threads "$threads" --output "$d/net_tanh1.json" >"$d/train_tanh1.log" 2>&1
  echo "train_tanh1 $(sha256sum "$d/net_tanh1.safetensors" | cut -c1-16)"
  "${env[@]}" "$ctmc" train --arch vgg11 --width 0.05 --activation softplus --data "$work/data" --train-limit 256 \
    --epochs 1 --batch 32 --seed 6 --threads "$threads" --output "$d/vgg.json" >"$d/train_vgg.log" 2>&1
  echo "train_vgg $(sha256sum "$d/vgg.safetensors" | cut -c1-16)"
  "${env[@]}" "$ctmc" simulate network --net "$d/net.json" --data "$work/data" --neurons "$neurons" \
    --T 1 --tau 0.1 --rate 5 --trials 2 --seed 1 --threads "$threads" --json >"$d/simulate.json" 2>"$d/simulate.log"
  echo "simulate $(normalized_hash "$d/simulate.json" "$d")"
  "${env[@]}" "$ctmc" sweep --net "$d/net.json" --data "$work/data" --neurons "$neurons" --tau 0.05,0.1 --rate 5 \
    --T 0.5,1 --sampler exact,uniformization --trials 2 --seed 2 --threads "$threads" --out "$d/sweep.json" \
    >"$d/sweep.log" 2>&1
  echo "sweep $(normalized_hash "$d/sweep.json" "$d")"
  "${env[@]}" "$ctmc" fit --activation sigmoid --domain -6,6 --family three-state --starts 8 --seed 1 \
    --threads "$threads" --output "$d/fit.json" >"$d/fit.log" 2>&1
  echo "fit $(normalized_hash "$d/fit.json" "$d")"
}

if [ "$mode" = --print ]; then
  echo "# Golden hashes (tests/golden/golden.sh): computation, first 16 hex digits of its SHA-256."
  echo "# Regenerate: bash tests/golden/golden.sh build/cli/ctmc-snn --print > tests/golden/hashes.txt"
  run_variant t2 2
  exit 0
fi

expected="$here/hashes.txt"
status=0
for v in "t1 1" "t2 2" "t3 3" "masked 2 $masked"; do
  # shellcheck disable=SC2086 # the variant's words
  set -- $v
  got=$(run_variant "$@")
  grep -v '^#' "$expected" >"$work/expected.txt"
  echo "$got" >"$work/got.txt"
  if ! diff "$work/expected.txt" "$work/got.txt" >"$work/diff.txt"; then
    echo "golden: variant $1 (threads $2${3:+, GLIBC_TUNABLES masked}) differs from tests/golden/hashes.txt:" >&2
    cat "$work/diff.txt" >&2
    status=1
  else
    echo "golden: variant $1 (threads $2${3:+, GLIBC_TUNABLES masked}) matches"
  fi
  if [ -n "${GOLDEN_KEEP:-}" ]; then mkdir -p "$GOLDEN_KEEP" && cp -r "$work/$1" "$GOLDEN_KEEP/"; fi
done
exit $status
