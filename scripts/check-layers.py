#!/usr/bin/env python3
"""The module graph points one way (README "Layout"): no module's sources or
headers include a header of a module above it, and no module links one.

Reads every #include "ctmc/<module>/..." under each module folder and every
ctmc_add_module(<name> DEPS ...) and target_link_libraries(<target> ...) in
the modules' CMakeLists.txt, and checks
both against the allowed dependencies below. Exit 0 when they hold, 1 with
one line per violation otherwise. Usage: check-layers.py [SOURCE_DIR]
"""
import os
import re
import sys

SIM_PARTS = {"sim/formats", "sim/nets", "sim/neurons", "sim/engines", "sim/studies"}
# Each module and the modules of ours it may use (its own is always allowed).
# A module's name is its folder; its headers are included as ctmc/<folder>/.
# Its CMake library is the folder with "/" as "_" (sim/nets: sim_nets).
ALLOWED = {
    "core": set(),
    "io": {"core"},
    "solvers": {"core", "io"},
    "activations": {"core", "io", "solvers"},
    "analysis": {"core", "io", "solvers", "activations"},
    "proofs_check": {"core", "io", "solvers", "activations"},
    # The simulator's parts: formats <- nets <- engines <- studies, and
    # neurons (one neuron in time) beside formats and nets, below engines.
    "sim/formats": {"core", "io", "solvers"},
    "sim/nets": {"core", "io", "solvers", "activations", "sim/formats"},
    "sim/neurons": {"core", "io", "solvers"},
    "sim/engines": {"core", "io", "solvers", "activations", "sim/formats", "sim/nets", "sim/neurons"},
    "sim/studies": {"core", "io", "solvers", "activations", "sim/formats", "sim/nets", "sim/neurons", "sim/engines"},
    "commands": {"core", "io", "solvers", "activations", "analysis", "proofs_check", "sim"} | SIM_PARTS,
    "reports": {"core", "io", "solvers", "activations", "analysis", "proofs_check", "sim", "commands"} | SIM_PARTS,
    # The Python module stands beside the CLI over commands/, not over
    # reports/: what it offers is what a command's Options and Result say.
    "python": {"core", "io", "solvers", "activations", "analysis", "proofs_check", "sim", "commands"} | SIM_PARTS,
}
MODULES = set(ALLOWED)
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]ctmc/((?:sim/(?:formats|nets|neurons|engines|studies))|[a-z_]+)/')
ADD_MODULE = re.compile(r"ctmc_add_module\(\s*([a-z_]+)((?:\s+[^)]*)?)\)", re.S)
# The Python module is a pybind11 target, whose libraries are in target_link_libraries.
LINK = re.compile(r"target_link_libraries\(\s*[A-Za-z0-9_]+((?:\s+[^)]*)?)\)", re.S)
LIBRARY = {m.replace("/", "_"): m for m in MODULES}


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    problems = []
    files = 0
    for module, allowed in ALLOWED.items():
        folder = os.path.join(root, module)
        if not os.path.isdir(folder):
            problems.append(f"{module}/: missing module folder")
            continue
        for dirpath, _, names in os.walk(folder):
            for name in names:
                if not name.endswith((".hpp", ".cpp", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                files += 1
                with open(path, encoding="utf-8") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m and m.group(1) in MODULES and m.group(1) != module and m.group(1) not in allowed:
                            rel = os.path.relpath(path, root)
                            problems.append(f"{rel}:{lineno}: {module} includes ctmc/{m.group(1)}/ (above it)")
        cmake = os.path.join(folder, "CMakeLists.txt")
        with open(cmake, encoding="utf-8") as f:
            text = f.read()
        links = [m.group(2).split() for m in ADD_MODULE.finditer(text)]
        links += [["DEPS"] + m.group(1).split() for m in LINK.finditer(text)]
        for words in links:
            deps = words[words.index("DEPS") + 1:] if "DEPS" in words else []
            for d in deps:
                if d in ("SOURCES",):
                    break
                d = LIBRARY.get(d, d)
                if d in MODULES and d != module and d not in allowed:
                    problems.append(f"{module}/CMakeLists.txt: {module} links {d} (above it)")
    for p in problems:
        print(p)
    print(f"check-layers: {files} files of {len(ALLOWED)} modules read, {len(problems)} violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
