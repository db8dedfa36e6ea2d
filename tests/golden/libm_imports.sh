#!/usr/bin/env bash
# No elementary function of the C library in a program that computes what we
# print (README "Reproducibility"): glibc's exp, log, pow, ... differ between
# releases and between the CPU-specific variants chosen at load time, so every
# such call goes through det_math (SLEEF's deterministic variants), and Ceres's
# own pow and log are wrapped at link time (analysis/src/libm_wrap.cpp).
#
#   tests/golden/libm_imports.sh FILE...   (executables or shared objects)
#
# Fails, naming the symbols, when a FILE imports one of the transcendental
# functions below, in double, float or long double (long double: Boost.Math
# computes a double quantile in it). Two imports are known and allowed:
# atan2 and sincos, which Debian's libceres.a calls only in its quaternion
# and sphere manifolds (manifold.cc), which nothing of ours uses.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: libm_imports.sh FILE..." >&2; exit 2; }
command -v nm >/dev/null || { echo "libm_imports: needs nm (binutils)" >&2; exit 2; }
names='exp|exp2|exp10|expm1|log|log1p|log2|log10|pow|tanh|sinh|cosh|asinh|acosh|atanh|sin|cos|tan|asin|acos|atan|atan2|sincos|erf|erfc|lgamma|tgamma|cbrt|hypot'
allowed='^(atan2|sincos)$'
status=0
for f in "$@"; do
  [ -f "$f" ] || { echo "libm_imports: $f: no such file" >&2; exit 2; }
  bad=$(nm -D --undefined-only "$f" | awk '{print $NF}' | sed 's/@.*//' |
        grep -E "^(${names})[fl]?$" | grep -Ev "$allowed" | sort -u | tr '\n' ' ' || true)
  if [ -n "$bad" ]; then
    echo "libm_imports: $(basename "$f") imports the C library's $bad(use solvers/det_math.hpp)"
    status=1
  else
    echo "libm_imports: $(basename "$f"): no elementary function of the C library beyond atan2, sincos (Ceres manifolds)"
  fi
done
exit $status
