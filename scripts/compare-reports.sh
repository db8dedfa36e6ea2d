#!/usr/bin/env bash
# Checks that the current tree writes the same reports as BASE_REV, byte for
# byte: the test of a change that must not change any result (a refactoring,
# a faster kernel with the same order of floating-point operations). For a
# change that may move results within statistical error (a new kernel with
# the same law), it lists the sweep cells whose A_SNN moved.
#
#   scripts/compare-reports.sh [--base-dir DIR] [--new-dir DIR] BASE_REV REPORT...
#
# 1. Builds BASE_REV in a git worktree under a temporary folder, in its own
#    Release build folder (like scripts/build.sh; with ccache when it is
#    installed), and the current tree in BUILD_DIR (default build).
# 2. Runs `ctmc-snn report REPORT --out OUT` for every REPORT, in the order
#    given, with the current binary, then moves OUT away and runs them again
#    with BASE_REV's binary. Both sides write to the same OUT folder, because
#    some reports write their own output path into their files (the net
#    manifests' train commands, sweep specs); a later report reads an earlier
#    one's folder under OUT as `report all` does (convergence reads fits).
# 3. Compares every .csv and .json file of the two outputs, and the plots'
#    data (.dat), with cmp, and prints each file compared and each that
#    differs; a file that only one side wrote is a difference too.
# 4. Reads every sweep document (.json of format "ctmc-snn sweep") that both
#    sides wrote and lists each cell (net, sampler, tau, r, T) whose A_SNN
#    moved by more than 3 standard errors of the difference, and each cell
#    only one side has. The standard error: from the trials when the sweep
#    ran more than one (sqrt(sd_base^2/k + sd_current^2/k), sd the cell's
#    A_SNN_sd over its k trials); from the binomial over the test images
#    when it ran one trial, or when the trials' sds are both 0 (sqrt(p (1-p)
#    (1/n_base + 1/n_current)), p the two sides' mean accuracy, n a run's
#    test_images). Each listed cell says which. Byte-identical documents
#    move no cell; the list is for changes that keep the law, not the bits.
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
#   - a CSV file with a column whose header names seconds (report
#     conversion's timing.csv): compared without those columns.
#   - when the two sides were written to different --out folders (--base-dir
#     or --new-dir: outputs written earlier), each side's folder (read from
#     its meta.json's command line) is replaced by "<out>" in both files
#     before comparing a file that differs as written.
# A JSON file with removed keys is rewritten by a python3 json round trip
# (key order kept, numbers read and printed exactly: integers as written,
# doubles by their shortest round-trip text) on both sides, and the results
# compared. Every other file is compared as written.
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
# Exit status: 0 all compared files identical, 1 a difference (a file, or a
# sweep cell only one side has), 2 bad usage or a failed build or report.
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

# run_side BINARY WORK_DIR DEST: every report, run from WORK_DIR into
# $tmp/out, then $tmp/out moved to DEST.
run_side() {
  rm -rf "$tmp/out"
  mkdir -p "$tmp/out"
  local report
  for report in "${reports[@]}"; do
    (cd "$2" && run_report "$1" "$report" "$tmp/out")
  done
  mv "$tmp/out" "$3"
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

if [ -z "$new_dir" ]; then
  run_side "$current_bin" . "$tmp/new-out"
  new_dir="$tmp/new-out"
  echo "compare-reports: current side's output moved to $new_dir"
fi
if [ -z "$base_dir" ]; then
  run_side "$base_bin" "$tmp/base" "$tmp/base-out"
  base_dir="$tmp/base-out"
  echo "compare-reports: base side's output moved to $base_dir"
fi

# compare.py BASE_OUT NEW_OUT REPORT: prints a line per file and per moved
# sweep cell, then "counts COMPARED DIFFER ONE_SIDED CELLS MOVED CELLS_ONE_SIDED".
cat >"$tmp/compare.py" <<'PY'
import csv, filecmp, io, json, math, os, re, shlex, sys

base_out, new_out, report = sys.argv[1:4]


def out_root(folder):
    """The --out folder a report was run with, from its meta.json."""
    with open(os.path.join(folder, "meta.json")) as f:
        line = json.load(f).get("command_line", "")
    words = shlex.split(line)
    for i, w in enumerate(words):
        if w == "--out" and i + 1 < len(words):
            return words[i + 1]
        if w.startswith("--out="):
            return w[len("--out="):]
    return "reports/generated"


roots = [out_root(base_out).rstrip("/"), out_root(new_out).rstrip("/")]
normalise = roots[0] != roots[1]
if normalise:
    print(f"compare-reports: {report}: the sides were written to different --out folders ({roots[0]}, {roots[1]}); "
          "a file that differs as written is compared again with each side's folder replaced by <out>")


def with_out(text, side):
    return re.sub(re.escape(roots[side]) + r"(?=[/\"',\s]|$)", "<out>", text)


def drop_seconds(x):
    if isinstance(x, dict):
        return {k: drop_seconds(v) for k, v in x.items() if "seconds" not in k}
    if isinstance(x, list):
        return [drop_seconds(v) for v in x]
    return x


def has_seconds(x):
    if isinstance(x, dict):
        return any("seconds" in k for k in x) or any(has_seconds(v) for v in x.values())
    if isinstance(x, list):
        return any(has_seconds(v) for v in x)
    return False


def csv_header(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0] if rows else []


def rule_of(name, texts):
    if name == "meta.json":
        return "meta"
    if name.endswith(".json"):
        try:
            return "seconds" if any(has_seconds(json.loads(t)) for t in texts) else ""
        except ValueError:
            return ""
    if name.endswith(".csv") and any("seconds" in h for t in texts for h in csv_header(t)):
        return "csv-seconds"
    return ""


def stripped(rule, text):
    if rule == "meta":
        doc = json.loads(text)
        for key in ("command_line", "git_revision", "date_utc"):
            doc.pop(key, None)
        return json.dumps(doc, indent=1)
    if rule == "seconds":
        return json.dumps(drop_seconds(json.loads(text)), indent=1)
    if rule == "csv-seconds":
        rows = list(csv.reader(io.StringIO(text)))
        keep = [i for i, h in enumerate(rows[0]) if "seconds" not in h] if rows else []
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows([[r[i] for i in keep if i < len(r)] for r in rows])
        return out.getvalue()
    return text


NOTES = {"meta": " (without command_line, git_revision, date_utc)",
         "seconds": " (without the times: keys naming seconds)",
         "csv-seconds": " (without the times: columns naming seconds)"}


def sweep_cells(doc):
    """{(net, sampler, tau, rate, T): (A_SNN mean, sd, trials, test images)} of a sweep document."""
    trials = int(doc["spec"]["trials"])
    images = {}
    for r in doc["runs"]:
        images.setdefault(r["net"], r["test_images"])
    return {(c["net"], c["sampler"], c["tau"], c["rate"], c["T"]):
            (c["A_SNN_mean"], c["A_SNN_sd"], trials, images.get(c["net"], 0)) for c in doc["cells"]}


def moved_cells(name, a, b):
    """Prints the cells of two sweep documents whose A_SNN moved by more than 3 standard errors."""
    ca, cb = sweep_cells(a), sweep_cells(b)
    moved = one_sided = 0
    for key in sorted(set(ca) | set(cb)):
        where = "net={} sampler={} tau={} r={} T={}".format(*key)
        if key not in ca or key not in cb:
            print(f"CELL     {report}/{name} {where}: only in {'base' if key in ca else 'current'}")
            one_sided += 1
            continue
        (ma, sa, ka, na), (mb, sb, kb, nb) = ca[key], cb[key]
        se, source = 0.0, ""
        if ka > 1 and kb > 1:
            se = math.sqrt(sa * sa / ka + sb * sb / kb)
            source = f"from {ka} and {kb} trials"
        if se == 0 and na > 0 and nb > 0:
            p = (ma + mb) / 200
            se = 100 * math.sqrt(max(p * (1 - p), 0.0) * (1 / na + 1 / nb))
            source = f"binomial over {na} and {nb} test images" + (", the trials' sds both 0" if ka > 1 else "")
        if ma == mb:
            continue
        z = abs(mb - ma) / se if se > 0 else math.inf
        if z > 3:
            print(f"MOVED    {report}/{name} {where}: A_SNN {ma} -> {mb} ({mb - ma:+.4g} pp, "
                  f"{z:.2f} standard errors of {se:.4g} pp, {source})")
            moved += 1
    print(f"cells    {report}/{name}: {len(set(ca) & set(cb))} cells on both sides, {moved} moved by more than "
          f"3 standard errors, {one_sided} on one side only")
    return len(set(ca) & set(cb)), moved, one_sided


def listing(folder):
    out = set()
    for d, _, names in os.walk(folder):
        for n in names:
            if n.endswith((".csv", ".json", ".dat")):
                out.add(os.path.relpath(os.path.join(d, n), folder))
    return out


compared = differ = one_sided = cells = moved = cells_one_sided = 0
for name in sorted(listing(base_out) | listing(new_out), key=lambda s: s.encode()):
    a, b = os.path.join(base_out, name), os.path.join(new_out, name)
    if not os.path.isfile(a) or not os.path.isfile(b):
        print(f"DIFFERS  {report}/{name} (only in {'base' if os.path.isfile(a) else 'current'})")
        one_sided += 1
        continue
    compared += 1
    with open(a, encoding="utf-8", errors="surrogateescape") as f:
        ta = f.read()
    with open(b, encoding="utf-8", errors="surrogateescape") as f:
        tb = f.read()
    rule = rule_of(name, (ta, tb))
    note = NOTES.get(rule, "")
    same = filecmp.cmp(a, b, shallow=False) if not rule else stripped(rule, ta) == stripped(rule, tb)
    if not same and normalise:
        same = stripped(rule, with_out(ta, 0)) == stripped(rule, with_out(tb, 1))
        if same:
            note += " (with the --out folders replaced by <out>)"
    print(f"{'same    ' if same else 'DIFFERS '} {report}/{name}{note}")
    if not same:
        differ += 1
    if name.endswith(".json"):
        try:
            da, db = json.loads(ta), json.loads(tb)
        except ValueError:
            continue
        if all(isinstance(d, dict) and d.get("format") == "ctmc-snn sweep" for d in (da, db)):
            n, m, o = moved_cells(name, da, db)
            cells += n
            moved += m
            cells_one_sided += o
print("counts", compared, differ, one_sided, cells, moved, cells_one_sided)
PY

compared=0 differ=0 one_sided=0 cells=0 moved=0 cells_one_sided=0
for report in "${reports[@]}"; do
  new_out="$new_dir/$report"
  base_out="$base_dir/$report"
  [ -f "$new_out/meta.json" ] || { echo "compare-reports: $new_out/meta.json missing" >&2; exit 2; }
  [ -f "$base_out/meta.json" ] || { echo "compare-reports: $base_out/meta.json missing" >&2; exit 2; }
  rev=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("git_revision", "?"))' \
    "$base_out/meta.json")
  case "$base_sha" in
    "${rev%%[-+ ]*}"*) ;;
    *) echo "compare-reports: warning: $base_out was written at revision $rev, not $base_rev" ;;
  esac
  echo "compare-reports: $report: base $base_out (revision $rev), current $new_out"
  python3 "$tmp/compare.py" "$base_out" "$new_out" "$report" >"$tmp/compare.out" ||
    { echo "compare-reports: comparing $report failed" >&2; exit 2; }
  grep -v '^counts ' "$tmp/compare.out" || true
  read -r _ c d o n m co < <(grep '^counts ' "$tmp/compare.out")
  compared=$((compared + c)) differ=$((differ + d)) one_sided=$((one_sided + o))
  cells=$((cells + n)) moved=$((moved + m)) cells_one_sided=$((cells_one_sided + co))
done

echo "compare-reports: $compared files compared, $differ differ, $one_sided written by one side only"
echo "compare-reports: $cells sweep cells compared, $moved moved by more than 3 standard errors, $cells_one_sided on one side only"
[ "$differ" -eq 0 ] && [ "$one_sided" -eq 0 ] && [ "$cells_one_sided" -eq 0 ] || exit 1
