#!/usr/bin/env bash
# The README's main command: install what is missing, build, fetch the data
# sets when missing, and write every report under reports/generated/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
export CTMC="$PWD/$BUILD_DIR/cli/ctmc-snn"
if [ -f scripts/fetch-data.sh ]; then bash scripts/fetch-data.sh; fi
"$CTMC" report all "$@"
