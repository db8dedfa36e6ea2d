#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test suite.
#   scripts/run-tests.sh             build/ (what CI runs)
#   scripts/run-tests.sh --sanitize  build-asan/: g++ with ASan + UBSan, any report
#                                    fatal (-fno-sanitize-recover=all); not in CI
#                                    (see the README for its time)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  "") ;;
  --sanitize)
    export BUILD_DIR=${BUILD_DIR:-build-asan}
    export CMAKE_ARGS="${CMAKE_ARGS:-} -DCTMC_SANITIZE=ON"
    # Leaks are findings too; UBSan prints where. abort_on_error keeps ASan's
    # report and turns it into a failed test.
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:check_initialization_order=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
    ;;
  *) echo "usage: scripts/run-tests.sh [--sanitize]" >&2; exit 2 ;;
esac
bash scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
cd "$BUILD_DIR"
ctest --output-on-failure -j "${JOBS:-$(nproc)}"
