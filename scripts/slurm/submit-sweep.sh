#!/usr/bin/env bash
# Runs a ctmc-snn sweep as a Slurm job array and merges it:
#
#   scripts/slurm/submit-sweep.sh --shards N --out RESULT.json [--wait] \
#       [--ctmc-snn PATH] [--sbatch "OPTIONS"] -- SWEEP OPTIONS...
#
# SWEEP OPTIONS are those of `ctmc-snn sweep` without --shard, --out and
# --threads (each task uses the CPUs Slurm gives it: pass e.g.
# --sbatch "--cpus-per-task=8"). Array task i of 1..N writes
# RESULT.json.parts/part-i.json; a merge job that depends on the whole array
# (afterok) writes RESULT.json, byte-identical to the unsharded sweep. Paths
# must be visible from the compute nodes (a shared file system). With --wait
# the script returns when the merge job has ended, with its exit status.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shards="" out="" wait_flag="" sbatch_opts="" exe="$here/../../build/cli/ctmc-snn"
while [ $# -gt 0 ]; do
  case "$1" in
    --shards) shards=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --wait) wait_flag=--wait; shift ;;
    --ctmc-snn) exe=$2; shift 2 ;;
    --sbatch) sbatch_opts=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "submit-sweep.sh: unknown option '$1' (options before --, sweep options after it)" >&2; exit 2 ;;
  esac
done
case "$shards" in
  ''|*[!0-9]*|0) echo "submit-sweep.sh: --shards needs a whole number >= 1, got '$shards'" >&2; exit 2 ;;
esac
[ -n "$out" ] || { echo "submit-sweep.sh: --out RESULT.json is required" >&2; exit 2; }
[ $# -gt 0 ] || { echo "submit-sweep.sh: no sweep options after --" >&2; exit 2; }
for a in "$@"; do
  case "$a" in
    --shard|--shard=*|--out|--out=*|--threads|--threads=*)
      echo "submit-sweep.sh: '$a' is set per task by this script; leave it out" >&2; exit 2 ;;
  esac
done
[ -x "$exe" ] || { echo "submit-sweep.sh: $exe is not an executable (give --ctmc-snn PATH)" >&2; exit 2; }
command -v sbatch >/dev/null || { echo "submit-sweep.sh: sbatch not found (is this a Slurm login node?)" >&2; exit 2; }

out=$(realpath -m "$out")
exe=$(realpath "$exe")
parts="$out.parts"
mkdir -p "$parts"
# Fail before queueing anything when the grid or an input is wrong.
"$exe" sweep "$@" --dry-run --out "$out" >/dev/null
quoted=$(printf '%q ' "$@")
export CTMC_SNN="$exe" SWEEP_SHARDS="$shards" SWEEP_PARTS="$parts" SWEEP_ARGS="$quoted" SWEEP_OUT="$out"
# shellcheck disable=SC2086  # sbatch_opts holds several options on purpose
array=$(sbatch --parsable --export=ALL --array="1-$shards" --output="$parts/task-%a.log" $sbatch_opts \
  "$here/sweep-shard.sbatch")
array=${array%%;*}
# shellcheck disable=SC2086
merge=$(sbatch --parsable --export=ALL --dependency="afterok:$array" --kill-on-invalid-dep=yes \
  --output="$parts/merge.log" $wait_flag $sbatch_opts "$here/sweep-merge.sbatch") || {
  echo "submit-sweep.sh: the merge job failed; see $parts/merge.log and $parts/task-*.log" >&2
  exit 1
}
echo "array job $array ($shards tasks), merge job ${merge%%;*}: $out"
