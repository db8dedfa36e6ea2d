#!/usr/bin/env bash
# CTest "package_consumer": installs the build into a temporary prefix, moves
# the prefix elsewhere (the package must be relocatable: no path of the build
# or source tree inside), then configures, builds and runs this folder's
# consumer project against it with find_package(ctmc_snn CONFIG). With a
# Python module built, also imports the installed one.
#   run.sh BUILD_DIR CXX_COMPILER [EXTRA_CXX_FLAGS] [PYTHON PYTHON_INSTALL_DIR]
set -euo pipefail
build=$(cd "$1" && pwd)
cxx=$2
flags=${3:-}
python=${4:-}
pydir=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ctmc_pkg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/staged" > "$tmp/install.log"
mv "$tmp/staged" "$tmp/prefix"
for f in "$tmp/prefix"/lib*/cmake/ctmc_snn/*.cmake; do
  if grep -q -e "$build" -e "$source_dir" "$f"; then
    echo "package_consumer: $f names the build or source tree:" >&2
    grep -n -e "$build" -e "$source_dir" "$f" >&2
    exit 1
  fi
done
test -f "$tmp/prefix/include/ctmc/solvers/stationary.hpp" || { echo "package_consumer: headers not installed" >&2; exit 1; }
# Every installed header includes only installed headers (or system and
# third-party ones, <...>): an internal header (beside a module's sources) is
# not installed, and a public header that included one would break here.
missing=0
while IFS= read -r -d '' h; do
  while IFS= read -r inc; do
    if [ ! -f "$tmp/prefix/include/$inc" ]; then
      echo "package_consumer: ${h#"$tmp/prefix/include/"} includes \"$inc\", which is not installed" >&2
      missing=1
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$h")
done < <(find "$tmp/prefix/include/ctmc" -name '*.hpp' -print0)
[ "$missing" = 0 ] || exit 1
test -x "$tmp/prefix/bin/ctmc-snn" || { echo "package_consumer: ctmc-snn not installed" >&2; exit 1; }

generator=()
if command -v ninja > /dev/null; then generator=(-G Ninja); fi
launcher=()
if command -v ccache > /dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$here" -B "$tmp/build" "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_PREFIX_PATH="$tmp/prefix" > "$tmp/configure.log" \
  || { cat "$tmp/configure.log" >&2; exit 1; }
cmake --build "$tmp/build" -j 2 > "$tmp/build.log" || { cat "$tmp/build.log" >&2; exit 1; }
"$tmp/build/consumer"

if [ -n "$python" ] && [ -n "$pydir" ]; then
  # The installed module, not the build tree's: PYTHONPATH names only the prefix.
  PYTHONPATH="$tmp/prefix/$pydir" "$python" -c '
import fractions, sys, ctmc_snn
assert ctmc_snn.__file__.startswith(sys.argv[1]), ctmc_snn.__file__
m = {"states": ["B", "R"], "transitions": [{"from": "B", "to": "R", "offset": "1/3", "slope": 2, "spike": True},
                                          {"from": "R", "to": "B", "offset": "5/7"}]}
a, d = fractions.Fraction(1, 3) + 2 * fractions.Fraction(1, 4), fractions.Fraction(5, 7)
got = ctmc_snn.flux(m, "1/4", mode="exact")
assert got == a * d / (a + d), got
print("package_consumer: installed Python module ok,", got)
' "$tmp/prefix/$pydir"
fi
