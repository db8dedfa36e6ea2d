#!/usr/bin/env bash
# Installs missing Debian packages, configures (once) and builds ctmc-snn.
# BUILD_DIR (default build) and JOBS (default: all cores) may be set;
# CMAKE_ARGS (e.g. -DCTMC_SANITIZE=ON) are passed to the configure step, which
# then runs every time so the folder always has them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
if [ ! -f "$BUILD_DIR/build.ninja" ] || [ -n "${CMAKE_ARGS:-}" ]; then
  # shellcheck disable=SC2086 # CMAKE_ARGS is a list of options
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
fi
cmake --build "$BUILD_DIR" -j "$JOBS"
