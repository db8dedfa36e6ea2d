#!/usr/bin/env python3
"""Lists the longest function bodies of the C++ files under the given folders
and fails when one is longer than --max lines (the front-end and report
layers keep their functions short: compute in one function, present in
others).

A function is a brace block whose enclosing blocks are only namespaces and
class bodies (so a lambda or a local block counts with the function that
holds it, and a Register lambda of cli/ counts as one function); its length
is the lines from the line of its opening brace to the line of its closing
one. Comments and string literals (raw strings too) are blanked first, so
braces in them do not count.

Usage: function-lengths.py [--max N] [--top K] [--root DIR] FOLDER...
Exit status 0 when no function is longer than N lines (default 150), 1
otherwise; the K longest (default 10) are printed either way.
"""
import argparse
import os
import re
import sys


def blank(text):
    """Comments and string/char literals replaced by empty ones, line breaks kept."""
    keep_lines = lambda m: "\n" * m.group(0).count("\n")
    text = re.sub(r'R"([^()\\ ]{0,16})\((.*?)\)\1"', lambda m: '""' + keep_lines(m), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", keep_lines, text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(\\.|[^'\\\n])*'", "''", text)


def functions(path):
    """(length, first line) of every function body in the file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = blank(f.read()).split("\n")
    out, stack = [], []  # stack: (line, is_scope) of the open blocks
    for i, line in enumerate(lines):
        for col, ch in enumerate(line):
            if ch == "{":
                head = " ".join(lines[max(0, i - 3):i] + [line[:col]])
                tail = re.split(r"[;{}]", head)[-1]
                scope = re.search(r"\bnamespace\b", tail) is not None or re.search(
                    r"\b(struct|class|union|enum)\b[^()]*$", tail) is not None or 'extern ""' in tail
                stack.append((i, scope))
            elif ch == "}" and stack:
                start, scope = stack.pop()
                if not scope and all(s for _, s in stack):
                    out.append((i - start + 1, start + 1))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max", type=int, default=150)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--root", default=".")
    ap.add_argument("folders", nargs="+")
    a = ap.parse_args()
    found = []
    for folder in a.folders:
        for dirpath, _, files in os.walk(os.path.join(a.root, folder)):
            for name in sorted(files):
                if name.endswith((".cpp", ".hpp")):
                    path = os.path.join(dirpath, name)
                    rel = os.path.relpath(path, a.root)
                    found += [(n, rel, line) for n, line in functions(path)]
    found.sort(key=lambda x: (-x[0], x[1], x[2]))
    for n, rel, line in found[:a.top]:
        print(f"{n:5d} lines  {rel}:{line}")
    over = [f for f in found if f[0] > a.max]
    print(f"function-lengths: {len(found)} functions in {', '.join(a.folders)}; "
          f"{len(over)} longer than {a.max} lines")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
