#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz (README "Fuzzing and sanitizers").
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     default: 60 s each, every target
#
# Installs clang-14, libfuzzer-14-dev and libomp-14-dev when missing (only
# this script needs them), builds the targets in build-fuzz/ (clang++-14,
# -DCTMC_FUZZ=ON: ASan + UBSan + libFuzzer), first replays the saved
# reproducers of tests/fuzz/regressions/<target>/, then fuzzes each target for
# SECONDS from a copy of its seed corpus tests/fuzz/corpus/<target>/ (the
# copy, in build-fuzz/fuzz-run/<target>/, is what grows; FUZZ_MERGE=1 merges
# the new inputs back into the seed corpus). Prints a table: target,
# executions, executions per second, result (clean, or the finding with its
# artifact). Exit status 1 if any target found something or a reproducer
# still fails. JOBS (build jobs) may be set.
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets=(model manifest safetensors idx idx_gz cifar cifar_dir npm_digits table samples npy sweep_part subset_index claims check_numbers onnx)
secs=${1:-60}
if ! [[ "$secs" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS] [TARGET...]  (targets: ${all_targets[*]})" >&2
  exit 2
fi
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  if [ ! -f "tests/fuzz/fuzz_$t.cpp" ]; then
    echo "fuzz.sh: unknown target '$t' (targets: ${all_targets[*]})" >&2
    exit 2
  fi
done

# The libraries' own packages, then the fuzzing toolchain.
bash scripts/install-deps.sh
missing=()
for p in clang-14 libfuzzer-14-dev libomp-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "fuzz.sh: installing ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

BUILD_DIR=build-fuzz
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++-14 -DCTMC_FUZZ=ON
fi
cmake --build "$BUILD_DIR" -j "${JOBS:-$(nproc)}" --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
run_dir=$BUILD_DIR/fuzz-run
rm -rf "$run_dir"
mkdir -p "$run_dir"
opts=(-rss_limit_mb=2048 -timeout=10)

# What a libFuzzer log says went wrong (one short phrase).
what_went_wrong() {
  local log=$1 line
  line=$(grep -m1 -o -E 'FUZZ FINDING: .{0,100}|ERROR: libFuzzer: [a-z -]+|ERROR: (Address|Leak|UndefinedBehavior)Sanitizer: [A-Za-z-]+|runtime error: .{0,100}' "$log" || true)
  echo "${line:-see $log}"
}

rows=()
failed=0
for t in "${targets[@]}"; do
  bin=$BUILD_DIR/tests/fuzz/fuzz_$t
  dir=$run_dir/$t
  mkdir -p "$dir/corpus" "$dir/artifacts"
  # Saved reproducers: each must now be rejected cleanly.
  regressions="-"
  if compgen -G "tests/fuzz/regressions/$t/*" > /dev/null; then
    pass=0 fail=0
    for r in tests/fuzz/regressions/"$t"/*; do
      if "$bin" "${opts[@]}" "$r" > "$dir/regression-$(basename "$r").log" 2>&1; then
        pass=$((pass + 1))
      else
        fail=$((fail + 1))
        echo "fuzz.sh: $t: reproducer $r still fails: $(what_went_wrong "$dir/regression-$(basename "$r").log") (log $dir/regression-$(basename "$r").log)" >&2
      fi
    done
    regressions="$pass ok"
    if [ $fail -gt 0 ]; then regressions="$fail of $((pass + fail)) FAIL"; failed=1; fi
  fi
  cp tests/fuzz/corpus/"$t"/* "$dir/corpus/"
  echo "fuzz.sh: fuzzing $t for $secs s (log $dir/fuzz.log)" >&2
  rc=0
  "$bin" "$dir/corpus" -dict="tests/fuzz/dict/$t.dict" -max_total_time="$secs" "${opts[@]}" \
    -print_final_stats=1 -artifact_prefix="$dir/artifacts/" > "$dir/fuzz.log" 2>&1 || rc=$?
  # (|| true: a grep that matches nothing fails the pipeline under pipefail)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/fuzz.log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/fuzz.log" | tail -1)
  if [ -z "$execs" ]; then  # no final stats (killed): the last progress line
    execs=$( (grep -o -E '^#[0-9]+' "$dir/fuzz.log" || true) | tail -1 | tr -d '#')
    rate=$( (grep -o -E 'exec/s: [0-9]+' "$dir/fuzz.log" || true) | tail -1 | grep -o -E '[0-9]+' || true)
  fi
  artifact=$( (grep -o -E 'Test unit written to [^ ]+' "$dir/fuzz.log" || true) | tail -1 | sed 's/Test unit written to //')
  if [ $rc -eq 0 ] && [ -z "$artifact" ]; then
    result=clean
  else
    result="FOUND $(what_went_wrong "$dir/fuzz.log"): ${artifact:-no artifact, exit $rc}"
    failed=1
  fi
  if [ "${FUZZ_MERGE:-0}" = 1 ]; then
    "$bin" -merge=1 "${opts[@]}" "tests/fuzz/corpus/$t" "$dir/corpus" > "$dir/merge.log" 2>&1 || true
  fi
  rows+=("$(printf '%-12s %12s %8s  %-11s %s' "$t" "${execs:-?}" "${rate:-?}" "$regressions" "$result")")
done

printf '\n%-12s %12s %8s  %-11s %s\n' target executions exec/s reproducers result
printf '%s\n' "${rows[@]}"
exit $failed
