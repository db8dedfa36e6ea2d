#!/usr/bin/env bash
# Installs the Debian packages ctmc-snn needs (DESIGN.md section 3).
# Idempotent: when everything is present it only checks and exits.
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config git ccache
      libboost1.81-dev libeigen3-dev libceres-dev libmpfr-dev libgmp-dev libmpfi-dev
      doctest-dev libcli11-dev zlib1g-dev nlohmann-json3-dev libfmt-dev gnuplot-nox
      libsleef-dev  # det_math: elementary functions with the same bits on every machine
      libonnx-dev libprotobuf-dev  # ctmc-snn import onnx
      python3-dev pybind11-dev python3-pybind11 python3-numpy  # the Python module ctmc_snn (python/)
      slurmctld slurmd slurm-client munge)  # a real single-node Slurm for the sweep's job-array test
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
