#!/usr/bin/env bash
# Checks that the current tree writes the same reports as BASE_REV, byte for
# byte: the test of a change that must not change any result (a refactoring,
# a faster kernel with the same order of floating-point operations).
#
#   scripts/compare-reports.sh [--base-dir DIR] [--new-dir DIR] BASE_REV REPORT...
#
# 1. Builds BASE_REV in a git worktree under a temporary folder, in its own
#    Release build folder (like scripts/build.sh; with ccache when it is
#    installed), and the current tree in BUILD_DIR (default build).
# 2. Runs `ctmc-snn report REPORT --out DIR` for each REPORT with each binary
#    (the report's files go to DIR/REPORT).
# 3. Compares every .csv and .json file of the two outputs, and the plots'
#    data (.dat), with cmp, and prints each file compared and each that
#    differs; a file that only one side wrote is a difference too.
#
# Fields that are not results are left out of the comparison, and the script
# says so when it does:
#   - meta.json: "command_line" (names the output folder), "git_revision" and
#     "date_utc" differ between any two runs; the file is compared with those
#     three keys removed.
#   - any other JSON file with a key that names seconds ("seconds",
#     "certificate_seconds", "cpu_seconds_in_cases": wall and CPU times, in
#     report fits' fits.json and report theorem's summary.json): compared
#     with every such key removed.
# Both sides of such a file are rewritten by the same python3 json round trip
# (key order kept, numbers read and printed exactly: integers as written,
# doubles by their shortest round-trip text), and the results compared with
# cmp. Every other file is compared as written.
# report.md and the drawn plots (.svg, .gp) are not compared: report.md states
# the wall times and the git revision, and the plots show the .dat data.
#
# --base-dir DIR: use DIR/REPORT, written earlier by BASE_REV's
#   `ctmc-snn report REPORT --out DIR`, instead of building and running
#   BASE_REV (its meta.json's git_revision is checked against BASE_REV).
#
# --new-dir DIR: use DIR/REPORT, written earlier by the current tree's
#   binary (or any other: a build with other libraries), instead of building
#   and running the current tree. With --base-dir too, nothing is built or
#   run: two existing outputs are compared.
#
# Environment: JOBS (build jobs; default all cores), BUILD_DIR (default
# build), THREADS (the reports' --threads; default: the report's default;
# the results do not depend on it), KEEP=1 (keep the temporary folder and
# print its path), TMPDIR (where the temporary folder goes: under ccache's
# base_dir, the base build reuses objects cached from other checkouts).
#
# Exit status: 0 all compared files identical, 1 a difference, 2 bad usage or
# a failed build or report.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

base_dir=""
new_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --base-dir) [ $# -ge 2 ] || usage; base_dir=$2; shift 2 ;;
    --new-dir) [ $# -ge 2 ] || usage; new_dir=$2; shift 2 ;;
    -h|--help) usage ;;
    --) shift; break ;;
    -*) echo "compare-reports: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || usage
base_rev=$1
shift
reports=("$@")

command -v python3 >/dev/null || { echo "compare-reports: needs python3" >&2; exit 2; }
base_sha=$(git rev-parse --verify --quiet "$base_rev^{commit}") ||
  { echo "compare-reports: $base_rev is not a commit" >&2; exit 2; }

JOBS=${JOBS:-$(nproc)}
BUILD_DIR=${BUILD_DIR:-build}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/compare-reports.XXXXXX")
cleanup() {
  if [ "${KEEP:-0}" = 1 ]; then
    echo "compare-reports: kept $tmp"
  else
    git worktree remove --force "$tmp/base" >/dev/null 2>&1 || true
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT

build() {  # build SOURCE_DIR BUILD_DIR
  if [ ! -f "$2/build.ninja" ]; then
    cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >"$tmp/cmake.log" 2>&1 ||
      { cat "$tmp/cmake.log" >&2; echo "compare-reports: configuring $1 failed" >&2; exit 2; }
  fi
  cmake --build "$2" -j "$JOBS" --target ctmc-snn >"$tmp/build.log" 2>&1 ||
    { tail -50 "$tmp/build.log" >&2; echo "compare-reports: building $1 failed" >&2; exit 2; }
}

run_report() {  # run_report BINARY REPORT OUT_PARENT: writes OUT_PARENT/REPORT
  local args=(report "$2" --out "$3")
  [ -n "${THREADS:-}" ] && args+=(--threads "$THREADS")
  echo "compare-reports: $1 ${args[*]}"
  mkdir -p "$3"
  # Exit 1 (a check of the report failed) still writes the report: the
  # comparison decides whether the two agree.
  local rc=0
  "$1" "${args[@]}" >"$3/$2.log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
    tail -20 "$3/$2.log" >&2
    echo "compare-reports: report $2 failed (exit $rc)" >&2
    exit 2
  fi
}

if [ -z "$new_dir" ]; then
  echo "compare-reports: current tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo ", with uncommitted changes")) in $BUILD_DIR"
  build . "$BUILD_DIR"
  current_bin=$(realpath "$BUILD_DIR/cli/ctmc-snn")
fi

if [ -z "$base_dir" ]; then
  echo "compare-reports: base $base_rev ($(git rev-parse --short "$base_sha")) in $tmp/base"
  git worktree add --detach "$tmp/base" "$base_sha" >/dev/null 2>&1 ||
    { echo "compare-reports: git worktree add failed" >&2; exit 2; }
  # data/ is not in git (scripts/fetch-data.sh); reports that read it find
  # the current tree's.
  [ -e data ] && [ ! -e "$tmp/base/data" ] && ln -s "$(realpath data)" "$tmp/base/data"
  build "$tmp/base" "$tmp/base-build"
  base_bin="$tmp/base-build/cli/ctmc-snn"
fi

# strip_json RULE FILE: the JSON text of FILE without the keys that are not
# results: RULE meta (the top level's command_line, git_revision, date_utc)
# or seconds (every key whose name contains "seconds", at any depth).
# has_seconds FILE: whether FILE has such a key anywhere.
strip_json() {
  python3 - "$1" "$2" <<'PY'
import json, sys
rule, path = sys.argv[1], sys.argv[2]
with open(path) as f:
    doc = json.load(f)
def drop(x):
    if isinstance(x, dict):
        return {k: drop(v) for k, v in x.items() if "seconds" not in k}
    if isinstance(x, list):
        return [drop(v) for v in x]
    return x
if rule == "meta":
    for key in ("command_line", "git_revision", "date_utc"):
        doc.pop(key, None)
else:
    doc = drop(doc)
print(json.dumps(doc, indent=1))
PY
}
has_seconds() {
  python3 - "$1" <<'PY'
import json, sys
def has(x):
    if isinstance(x, dict):
        return any("seconds" in k for k in x) or any(has(v) for v in x.values())
    if isinstance(x, list):
        return any(has(v) for v in x)
    return False
with open(sys.argv[1]) as f:
    sys.exit(0 if has(json.load(f)) else 1)
PY
}

compared=0
differ=0
one_sided=0
for report in "${reports[@]}"; do
  if [ -n "$new_dir" ]; then
    new_out="$new_dir/$report"
    [ -f "$new_out/meta.json" ] || { echo "compare-reports: $new_out/meta.json missing" >&2; exit 2; }
    echo "compare-reports: current output of $report: $new_out"
  else
    new_out="$tmp/new-out/$report"
    run_report "$current_bin" "$report" "$tmp/new-out"
  fi
  if [ -n "$base_dir" ]; then
    base_out="$base_dir/$report"
    [ -f "$base_out/meta.json" ] || { echo "compare-reports: $base_out/meta.json missing" >&2; exit 2; }
    rev=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("git_revision", "?"))' \
      "$base_out/meta.json")
    case "$base_sha" in
      "${rev%%[-+ ]*}"*) ;;
      *) echo "compare-reports: warning: $base_out was written at revision $rev, not $base_rev" ;;
    esac
    echo "compare-reports: base output of $report: $base_out (revision $rev)"
  else
    base_out="$tmp/base-out/$report"
    (cd "$tmp/base" && run_report "$base_bin" "$report" "$tmp/base-out")
  fi

  mapfile -t files < <( (cd "$base_out" && find . -type f \( -name '*.csv' -o -name '*.json' -o -name '*.dat' \);
                         cd "$new_out" && find . -type f \( -name '*.csv' -o -name '*.json' -o -name '*.dat' \)) |
                       sed 's|^\./||' | LC_ALL=C sort -u)
  for f in "${files[@]}"; do
    a="$base_out/$f" b="$new_out/$f"
    if [ ! -f "$a" ] || [ ! -f "$b" ]; then
      echo "DIFFERS  $report/$f (only in $([ -f "$a" ] && echo base || echo current))"
      one_sided=$((one_sided + 1))
      continue
    fi
    rule=""
    if [ "$f" = meta.json ]; then
      rule=meta
    elif [[ "$f" == *.json ]] && { has_seconds "$a" || has_seconds "$b"; }; then
      rule=seconds
    fi
    compared=$((compared + 1))
    if [ -z "$rule" ]; then
      same=0
      cmp -s "$a" "$b" || same=$?
      note=""
    else
      same=0
      cmp -s <(strip_json "$rule" "$a") <(strip_json "$rule" "$b") || same=$?
      case "$rule" in
        meta) note=" (without command_line, git_revision, date_utc)" ;;
        seconds) note=" (without the times: keys naming seconds)" ;;
      esac
    fi
    if [ "$same" -eq 0 ]; then
      echo "same     $report/$f$note"
    else
      echo "DIFFERS  $report/$f$note"
      differ=$((differ + 1))
    fi
  done
done

echo "compare-reports: $compared files compared, $differ differ, $one_sided written by one side only"
[ "$differ" -eq 0 ] && [ "$one_sided" -eq 0 ] || exit 1
