#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""AMUSE's own test files for the codes Gravplug stands in for, run against
Gravplug with only the class swapped: test_bhtree.py, test_ph4.py,
test_hermite.py, test_huayno.py and test_gravity_codes.py (its BHTree,
Hermite and ph4 classes) from the sdist of amuse-tests==2024.6.0, which
.ci/install-amuse unpacks into the AMUSE venv.

The swap (and nothing else: no assertion is changed):
  BHTree         -> Gravplug()                       cpu-tree, leapfrog
  ph4, Hermite   -> Gravplug(solver="cpu-direct", integrator="hermite")
  Huayno         -> Gravplug(solver="cpu-direct", integrator="hold")
  each legacy interface -> GravplugInterface with the same solver and
  integrator.
  Each with stands_in_for= the original where Gravplug numbers particles
  as it does (worker.NUMBERING: ph4 keeps user ids, Hermite and Huayno
  count from 0); a documented option of the drop-in, no assertion changed.
The stand-ins carry the original class names in the original modules (the
tests print them in the error messages they expect). A test listed in the
table of docs/AMUSE.md is not run: "skip" rows test the original code
itself (its own parameters, defaults, numbering); "todo" rows are
Gravplug's own failures not fixed yet, run as TAP TODO tests. Each test is
one TAP line: file::Class.test.

Skips when AMUSE or the test files are not there. GRAVPLUG_AMUSE_TESTS
names the codes_tests folder; GRAVPLUG_AMUSE_SUITES="test_ph4.py ..." runs
some files only; GRAVPLUG_AMUSE_ONLY="TestPH4.test19 ..." some tests only.
"""
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT / "python"))
from gravplug._tap import Tap, reexec_under_amuse  # noqa: E402

reexec_under_amuse(HERE)

import contextlib  # noqa: E402
import importlib.util  # noqa: E402
import io  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import types  # noqa: E402
import unittest  # noqa: E402

AMUSE_TESTS_VERSION = "2024.6.0"
FILES = ("test_bhtree.py", "test_ph4.py", "test_hermite.py", "test_huayno.py",
         "test_gravity_codes.py")
# test_gravity_codes.py: the classes of the codes swapped here; its other
# codes (MI6, PhiGRAPE, Fi, Gadget2) are not Gravplug's to stand in for.
GENERIC = ("TestBHTreeGravityCode", "TestHermiteGravityCode", "TestPH4GravityCode")
# (module, high-level class, legacy class, solver, integrator)
SWAPS = (("bhtree", "BHTree", "BHTreeInterface", "cpu-tree", "leapfrog"),
         ("ph4", "ph4", "ph4Interface", "cpu-direct", "hermite"),
         ("hermite", "Hermite", "HermiteInterface", "cpu-direct", "hermite"),
         ("huayno", "Huayno", "HuaynoInterface", "cpu-direct", "hold"))
# Imported by test_gravity_codes.py for classes not run here.
ABSENT = (("phigrape", "PhiGRAPE"), ("gadget2", "Gadget2"), ("fi", "Fi"), ("mi6", "MI6"))

t = Tap()


def suites_dir():
    d = os.environ.get("GRAVPLUG_AMUSE_TESTS")
    if d:
        return Path(d)
    venv = Path(sys.prefix)
    return (venv / "share" / "gravplug" / f"amuse-tests-{AMUSE_TESTS_VERSION}" /
            "src" / "amuse" / "test" / "suite" / "codes_tests")


def table(path=ROOT / "docs" / "AMUSE.md"):
    """{(file, "Class.test"): (kind, reason)} from the one table in
    docs/AMUSE.md: rows | file | Class.test | skip or todo | reason |."""
    rows = {}
    row = re.compile(r"^\|\s*`?(test_\w+\.py)`?\s*\|\s*`?(\w+\.\w+)`?\s*\|\s*(skip|todo)\s*\|\s*(.+?)\s*\|\s*$")
    for line in path.read_text().splitlines():
        m = row.match(line)
        if m:
            rows[(m.group(1), m.group(2))] = (m.group(3), m.group(4))
    return rows


def install_swaps():
    """Puts the stand-ins where the test files import the originals."""
    from gravplug.amuse import Gravplug, GravplugInterface
    from gravplug.amuse.worker import NUMBERING
    for module, cls, legacy, solver, integrator in SWAPS:
        # numbered as the original, where Gravplug can (NUMBERING)
        numbering = module if module in NUMBERING else None
        name = f"amuse.community.{module}.interface"
        mod = types.ModuleType(name)

        def code_init(self, *args, _s=solver, _i=integrator, _n=numbering, **kw):
            kw.setdefault("solver", _s)
            kw.setdefault("integrator", _i)
            kw.setdefault("stands_in_for", _n)
            Gravplug.__init__(self, *args, **kw)

        # a factory, not a subclass: AMUSE's worker script imports the
        # interface class by its module and name
        def iface(*args, _s=solver, _i=integrator, _n=numbering, **kw):
            kw.setdefault("solver", _s)
            kw.setdefault("integrator", _i)
            kw.setdefault("stands_in_for", _n)
            return GravplugInterface(*args, **kw)
        code = type(cls, (Gravplug,), {"__init__": code_init, "__module__": name})
        setattr(mod, cls, code)
        setattr(mod, legacy, iface)
        install(name, mod)
    # the test files' helpers (gd_tests.py) live in the sdist, not in the framework
    import amuse.test
    suite = types.ModuleType("amuse.test.suite")
    suite.__path__ = [str(suites_dir().parent)]
    install("amuse.test.suite", suite)
    for module, cls in ABSENT:
        name = f"amuse.community.{module}.interface"
        mod = types.ModuleType(name)

        def absent(*args, _c=cls, **kw):
            raise ImportError(f"{_c} is not installed (not swapped by this adapter)")
        setattr(mod, cls, absent)
        install(name, mod)


def install(name, mod):
    parent_name, _, leaf = name.rpartition(".")
    parent = sys.modules.get(parent_name)
    if parent is None:
        try:
            parent = importlib.import_module(parent_name)
        except ImportError:
            parent = types.ModuleType(parent_name)
            parent.__path__ = []
            sys.modules[parent_name] = parent
    sys.modules[name] = mod
    setattr(parent, leaf, mod)


def is_skip(exc):
    """AMUSE's TestCase.skip raises pytest's Skipped where pytest is
    installed (a BaseException, which unittest does not take for a skip)."""
    return isinstance(exc, unittest.SkipTest) or type(exc).__name__ == "Skipped"


class Result(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.outcome = None

    def addSuccess(self, test):
        self.outcome = ("ok", "")

    def addFailure(self, test, err):
        self.outcome = ("fail", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        if is_skip(err[1]):
            self.outcome = ("skip", str(err[1]))
        else:
            self.outcome = ("fail", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        self.outcome = ("skip", reason)


def tests_of(module, file):
    loader = unittest.defaultTestLoader
    for name in sorted(vars(module)):
        cls = getattr(module, name)
        if not (isinstance(cls, type) and issubclass(cls, unittest.TestCase)) or name.startswith("_"):
            continue
        if cls.__module__ != module.__name__:
            continue
        if file == "test_gravity_codes.py" and name not in GENERIC:
            continue
        names = loader.getTestCaseNames(cls)
        names = sorted(names, key=lambda n: [int(x) if x.isdigit() else x
                                             for x in re.split(r"(\d+)", n)])
        for n in names:
            yield name, n, cls(n)


def main():
    from amuse.support.literature import TrackLiteratureReferences
    TrackLiteratureReferences.suppress_output()   # no citation list in the TAP stream
    where = suites_dir()
    if not (where / FILES[0]).exists():
        t.skip_all(f"AMUSE's test files are not in {where}: .ci/install-amuse unpacks "
                   f"amuse-tests=={AMUSE_TESTS_VERSION} there (or set GRAVPLUG_AMUSE_TESTS)")
    with t.stop_unless("gravplug.amuse imports and libgravplug.so is found"):
        import gravplug
        gravplug.where()
        install_swaps()
    listed = table()
    files = os.environ.get("GRAVPLUG_AMUSE_SUITES", "").split() or FILES
    only = set(os.environ.get("GRAVPLUG_AMUSE_ONLY", "").split())
    counts = {}
    for file in files:
        spec = importlib.util.spec_from_file_location(f"gravplug_amuse_suite_{file[:-3]}", where / file)
        module = importlib.util.module_from_spec(spec)
        with t.stop_unless(f"{file} imports with the classes swapped"):
            with contextlib.redirect_stdout(io.StringIO()):
                spec.loader.exec_module(module)
        c = counts.setdefault(file, {"run": 0, "passed": 0, "table": 0, "own skip": 0, "todo": 0})
        t0 = time.monotonic()
        for cls, name, case in tests_of(module, file):
            label = f"{file}::{cls}.{name}"
            if only and f"{cls}.{name}" not in only:
                continue
            kind, reason = listed.get((file, f"{cls}.{name}"), (None, None))
            if kind == "skip":
                c["table"] += 1
                t.skip(1, f"{label}: {reason} (docs/AMUSE.md)")
                continue
            result = Result()
            s0 = time.monotonic()
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                try:
                    case.run(result)
                except BaseException as exc:  # noqa: BLE001 — the test's outcome
                    if isinstance(exc, KeyboardInterrupt):
                        raise
                    result.outcome = (("skip", str(exc)) if is_skip(exc)
                                      else ("fail", traceback.format_exc()))
            took = time.monotonic() - s0
            outcome, text = result.outcome or ("fail", "no result")
            if outcome == "skip":
                c["own skip"] += 1
                t.skip(1, f"{label}: skipped by the test itself: {text}")
                continue
            c["run"] += 1
            if kind == "todo":
                c["todo"] += 1
                t.n += 1
                print(f"{'' if outcome == 'ok' else 'not '}ok {t.n} - {label} # TODO {reason}")
                if outcome != "ok":
                    t.diag(text)
                sys.stdout.flush()
                continue
            c["passed"] += outcome == "ok"
            t.ok(outcome == "ok", f"{label} ({took:.1f} s)", text)
        c["seconds"] = round(time.monotonic() - t0, 1)
    for file, c in counts.items():
        t.diag(f"{file}: " + ", ".join(f"{k} {v}" for k, v in c.items()))
    t.done_testing()


main()
