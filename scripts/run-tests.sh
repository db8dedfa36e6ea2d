#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
cd "$BUILD_DIR"
ctest --output-on-failure -j "${JOBS:-$(nproc)}"
