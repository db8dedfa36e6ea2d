#!/usr/bin/env bash
# The Slurm job-array sweep (scripts/slurm/submit-sweep.sh) on a real
# single-node Slurm started here on localhost: munged, slurmctld and slurmd
# with their own configuration, sockets, ports and state under a temporary
# folder, all stopped at exit. The merged result of a 3-task array must be
# byte-identical to the unsharded `ctmc-snn sweep`.
#
# usage: sweep_array_test.sh CTMC_SNN_EXECUTABLE
# Needs root and the Debian packages slurmctld, slurmd, slurm-client and
# munge (scripts/install-deps.sh installs them); exits 77 (skipped) without.
set -euo pipefail
exe=$(realpath "$1")
src=$(cd "$(dirname "$0")/../.." && pwd)
for tool in munged slurmctld slurmd sbatch sinfo; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed (scripts/install-deps.sh installs Slurm)"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP: a local Slurm needs root"; exit 77; }

tmp=$(mktemp -d /tmp/ctmc-slurm.XXXXXX)
chmod 700 "$tmp"
pids=()
cleanup() {
  local rc=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 1
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  if [ $rc -ne 0 ]; then
    for f in "$tmp"/*.log "$tmp"/result.json.parts/*.log; do
      [ -f "$f" ] && { echo "== $f"; tail -n 20 "$f"; }
    done
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# munge: a key and a socket of our own.
dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 status=none
chmod 600 "$tmp/munge.key"
munged --force --key-file="$tmp/munge.key" --socket="$tmp/munge.socket" --pid-file="$tmp/munged.pid" \
  --log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed" --foreground >"$tmp/munged.out.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$tmp/munge.socket" ] && break; sleep 0.1; done
[ -S "$tmp/munge.socket" ] || { echo "FAIL: munged did not start"; exit 1; }

host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$tmp/state" "$tmp/spool"
cat > "$tmp/slurm.conf" <<CONF
ClusterName=ctmctest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$tmp/slurm.conf"
slurmctld -D -i -f "$SLURM_CONF" >"$tmp/slurmctld.out.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$tmp/slurmd.out.log" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 120); do
  state=$(sinfo -h -o %T 2>/dev/null || true)
  case "$state" in idle*|mixed*|allocated*) break ;; esac
  sleep 0.5
done
case "$state" in idle*|mixed*|allocated*) ;; *) echo "FAIL: the Slurm node did not come up (state '$state')"; exit 1 ;; esac

# A tiny problem: tests/fixtures/tiny_mlp.json (2 inputs, 2 classes) on 40
# training and 20 test images of 1x2 pixels.
data="$tmp/data"
mkdir -p "$data"
idx() {  # idx FILE MAGIC_BYTE COUNT [ROWS COLS] -- the header, then COUNT*ROWS*COLS bytes
  local file=$1 magic=$2 n=$3 rows=${4:-} cols=${5:-} size=$3
  printf '\x00\x00\x08'"$magic" > "$file"
  printf "\\x$(printf %02x $((n >> 24 & 255)))\\x$(printf %02x $((n >> 16 & 255)))\\x$(printf %02x $((n >> 8 & 255)))\\x$(printf %02x $((n & 255)))" >> "$file"
  if [ -n "$rows" ]; then
    printf "\\x00\\x00\\x00\\x$(printf %02x "$rows")\\x00\\x00\\x00\\x$(printf %02x "$cols")" >> "$file"
    size=$((n * rows * cols))
  fi
  local i
  for ((i = 0; i < size; i++)); do
    if [ -n "$rows" ]; then printf "\\x$(printf %02x $(((i * 97 + 13) % 256)))"; else printf "\\x$(printf %02x $(((i * 7 / 3) % 2)))"; fi
  done >> "$file"
}
idx "$data/train-images-idx3-ubyte" '\x03' 40 1 2
idx "$data/train-labels-idx1-ubyte" '\x01' 40
idx "$data/t10k-images-idx3-ubyte" '\x03' 20 1 2
idx "$data/t10k-labels-idx1-ubyte" '\x01' 20

args=(--net "$src/tests/fixtures/tiny_mlp.json" --data "$data" --neurons "$src/tests/fixtures/three_state.json"
      --tau 0.02,0.05 --rate 2,6 --T 0.2,0.5 --dt 0.01 --trials 2 --sampler exact,end-state --seed 4)
"$exe" sweep "${args[@]}" --out "$tmp/unsharded.json" >/dev/null
bash "$src/scripts/slurm/submit-sweep.sh" --shards 3 --out "$tmp/result.json" --wait --ctmc-snn "$exe" -- "${args[@]}"
for i in 1 2 3; do [ -s "$tmp/result.json.parts/part-$i.json" ] || { echo "FAIL: part $i missing"; exit 1; }; done
if cmp -s "$tmp/unsharded.json" "$tmp/result.json"; then
  echo "slurm sweep: 3 array tasks + merge job, result byte-identical to the unsharded sweep"
else
  echo "FAIL: the merged Slurm result differs from the unsharded sweep"
  exit 1
fi
