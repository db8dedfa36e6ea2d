"""The public surface of the Python package ctmc_snn (CTest "python").

Every keyword default of a public function is the C++ command's default
(_core.defaults() reads default-constructed option structs of
the command layer, commands/*.hpp, and the report context), and the package exports only
its API: no module it imports appears in dir(ctmc_snn).
"""
import inspect
import os
import re
import subprocess
import types
import unittest

import ctmc_snn
from ctmc_snn import _core


class Defaults(unittest.TestCase):
    def test_every_keyword_default_is_the_cpp_default(self):
        table = _core.defaults()
        functions = {name: getattr(ctmc_snn, name) for name in ctmc_snn.__all__
                     if inspect.isfunction(getattr(ctmc_snn, name)) and name != "exact_text"}
        self.assertEqual(set(functions), set(table), "a public function without C++ defaults, or the reverse")
        for name, fn in functions.items():
            cpp = table[name]
            with_default = {p.name: p.default for p in inspect.signature(fn).parameters.values()
                            if p.default is not inspect.Parameter.empty}
            self.assertEqual(set(with_default), set(cpp), f"{name}: keywords with a default vs the C++ table")
            for key, value in with_default.items():
                expected = cpp[key]
                if isinstance(expected, float) or isinstance(value, float):
                    self.assertEqual(float(value), float(expected), f"{name}({key}=...)")
                    self.assertEqual(type(value), type(expected), f"{name}({key}=...): type")
                else:
                    self.assertEqual(value, expected, f"{name}({key}=...)")

    def test_known_defaults(self):
        # A few values as the README documents them, so that the table itself
        # cannot drift unnoticed.
        table = _core.defaults()
        self.assertEqual(table["fit"]["starts"], 64)
        self.assertEqual(table["fit"]["points"], 401)
        self.assertEqual(table["simulate_network"]["sampler"], "exact")
        self.assertEqual(table["simulate_network"]["T"], 50.0)
        self.assertEqual(table["simulate_network"]["dt"], 0.005)
        self.assertEqual(table["check"]["precision"], 256)
        self.assertEqual(table["flux"]["mode"], "mpfr")


class CliDefaults(unittest.TestCase):
    """The CLI binds its options to the same Options structs: every keyword default that the command's
    --help shows (CLI11's "--name TYPE=DEFAULT") is the Python one."""

    COMMANDS = {"flux": ["flux"], "counting": ["counting"], "bernstein": ["bernstein"], "fit": ["fit"],
                "simulate_neuron": ["simulate", "neuron"], "simulate_network": ["simulate", "network"],
                "train": ["train"], "evaluate": ["evaluate"], "convert": ["convert"], "check": ["check"]}
    OPTION = re.compile(r"^\s+--([a-z0-9-]+) [A-Z]+(?::[^=\n]*)?=(\S+)", re.M)

    @unittest.skipUnless(os.environ.get("CTMC_CLI"), "CTMC_CLI (the ctmc-snn binary) is not set")
    def test_python_defaults_are_the_cli_defaults(self):
        for name, argv in self.COMMANDS.items():
            text = subprocess.run([os.environ["CTMC_CLI"], *argv, "--help"], capture_output=True, text=True,
                                  check=True).stdout
            cli = dict(self.OPTION.findall(text))
            compared = 0
            for p in inspect.signature(getattr(ctmc_snn, name)).parameters.values():
                option = p.name.replace("_", "-")
                if p.default is inspect.Parameter.empty or p.default is None or option not in cli:
                    continue
                if isinstance(p.default, str):
                    self.assertEqual(p.default, cli[option], f"{name}({p.name}=...) vs --{option}")
                else:
                    self.assertEqual(float(p.default), float(cli[option]), f"{name}({p.name}=...) vs --{option}")
                compared += 1
            self.assertGreater(compared, 0, f"{name}: no keyword default found in --help")


class Exports(unittest.TestCase):
    def test_no_imported_module_is_public(self):
        public = [n for n in dir(ctmc_snn) if not n.startswith("_")]
        modules = [n for n in public if isinstance(getattr(ctmc_snn, n), types.ModuleType)]
        self.assertEqual(modules, [])
        self.assertEqual(sorted(public), sorted(ctmc_snn.__all__))

    def test_public_functions_have_type_hints_and_docstrings(self):
        for name in ctmc_snn.__all__:
            obj = getattr(ctmc_snn, name)
            if not inspect.isfunction(obj):
                continue
            sig = inspect.signature(obj)
            self.assertIsNot(sig.return_annotation, inspect.Signature.empty, f"{name}: return type")
            for p in sig.parameters.values():
                self.assertIsNot(p.annotation, inspect.Parameter.empty, f"{name}({p.name}): type")
            self.assertTrue(obj.__doc__ and obj.__doc__.strip(), f"{name}: docstring")


if __name__ == "__main__":
    unittest.main()
