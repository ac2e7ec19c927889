#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""layering.py — the house's layering: which folder may use which, and no
loops.

Two checks over one graph of dependencies:

1. The folder table (FOLDER_RULES below): every edge from one folder's
   file to another folder's file must be one the table allows. abi/ uses
   nothing above it; a plugin uses only abi/ and the plugin folders meant
   for sharing (base, octree, cuda-base), never another plugin's folder;
   integrators/ and host_stub/ reach plugins only through the ABI (the
   loader and a plugin's gp_api table). The exceptions the code has today
   are rows of their own (EXCEPTIONS), each with the reason, so the table
   says the honest rule. The check first runs on a planted tree with
   known violations and fails unless it catches them.
2. No two source files include or call each other in a loop.

A "module" is a source file with its header (sim.c + sim.h are one module,
a header alone is a module of its own). Module A depends on module B when
A's files #include one of B's, or when an object compiled from A needs a
symbol that an object compiled from B defines (from `nm` on the objects of
a build, so calls through macros and inline helpers count as the compiler
saw them). The dependency graph must have no cycle: every strongly
connected component of it is one module. Calls through function pointers
(a scheme registered in a table, a plugin's function table) are not edges,
which is what makes them the way to call upward.

Usage: layering.py [BUILD_DIR]   (run from the repository root; TAP out)
"""
import os
import re
import subprocess
import sys

ROOT = os.getcwd()
BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
SOURCE_DIRS = ["abi", "plugin", "integrators", "host_stub", "tests", "bench", "examples"]
SOURCE_EXT = (".c", ".h", ".cu", ".cuh", ".cc")
# Where #include "x.h" is looked for after the including file's own folder
# (the -I flags the Makefiles pass).
INCLUDE_ROOTS = [".", "abi", "plugin", "integrators", "host_stub", "host_stub/ic",
                 "host_stub/particles", "host_stub/snapshot", "tests", "tests/gpu",
                 "tests/conformance"]

# The folders that count as one unit each (the longest that holds a file
# names its unit); every plugin/NAME/ is a unit of its own.
UNITS = ["abi", "plugin/base", "plugin/octree", "plugin/cuda-base", "integrators",
         "integrators/core", "integrators/solver", "integrators/schemes", "integrators/sim",
         "host_stub/particles", "host_stub/snapshot", "host_stub/ic", "host_stub/mpi",
         "host_stub", "tests", "bench", "examples"]
SHARED_PLUGIN_FOLDERS = {"plugin/base", "plugin/octree", "plugin/cuda-base"}
# integrators/: gp_sim.h at its root; inside, bottom to top, the core, the
# solver bridge, the schemes, the public calls (sim/).
INTEGRATORS = {"integrators", "integrators/core", "integrators/solver", "integrators/schemes",
               "integrators/sim"}
HOST_LIB = INTEGRATORS | {"abi", "host_stub/particles", "host_stub/snapshot", "host_stub/ic"}
# unit -> the units its files may include or call (besides its own).
# "plugin/*" stands for every plugin/NAME/ folder.
FOLDER_RULES = {
    "abi": set(),
    "plugin/base": {"abi"},
    "plugin/octree": {"abi", "plugin/base"},
    "plugin/cuda-base": {"abi", "plugin/base"},
    "plugin/*": {"abi"} | SHARED_PLUGIN_FOLDERS,
    "integrators": {"abi"},
    "integrators/core": {"abi", "integrators"},
    "integrators/solver": {"abi", "integrators", "integrators/core"},
    "integrators/schemes": {"abi", "integrators", "integrators/core", "integrators/solver"},
    "integrators/sim": INTEGRATORS | {"abi"},
    "host_stub/particles": {"abi"},
    "host_stub/snapshot": {"abi", "host_stub/particles"},
    "host_stub/ic": {"abi", "host_stub/particles", "host_stub/snapshot"},
    "host_stub/mpi": HOST_LIB | {"host_stub"},
    "host_stub": HOST_LIB | {"host_stub/mpi"},
    # tests, benchmarks and examples use whatever they test or show
    "tests": None, "bench": None, "examples": None,
}
# Edges the table's rows do not allow but the code has, each with why. A
# new one is a decision: add it here with its reason, or fix the code.
EXCEPTIONS = {
    ("plugin/cuda-base", "plugin/cuda-direct"):
        "cuda-base's device state (dev_state.c) calls gp_state_dev_*, which "
        "cuda-base/state_dev.cuh defines and each CUDA plugin's .cu includes once "
        "(nvcc compiles the kernels in the plugin's unit): cuda-base's own code",
    ("plugin/cuda-base", "plugin/cuda-tree"): "as for cuda-direct",
    ("plugin/cuda-base", "tests"):
        "launch.cuh takes the CPU emulation of CUDA (tests/gpu/gpu-emu.h) in the "
        "emulated test builds only (GP_CUDA_EMULATE); never in a real build",
    ("plugin/cuda-tree", "tests"):
        "tree_dev.cu takes CUB's CPU stand-in (tests/gpu/gpu-emu-cub.h) in the "
        "emulated test build only (GP_CUDA_EMULATE)",
}


def module_of(path):
    base, ext = os.path.splitext(path)
    if ext == ".o":                      # build/obj/x.c.o is not used; x.cu.o is
        base, ext = os.path.splitext(base)
    return base


def source_files():
    out = []
    for top in SOURCE_DIRS:
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for f in filenames:
                if f.endswith(SOURCE_EXT):
                    out.append(os.path.normpath(os.path.join(dirpath, f)))
    return sorted(out)


INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def include_edges(files):
    known = set(files)
    by_name = {}
    for f in files:
        by_name.setdefault(os.path.basename(f), []).append(f)
    edges = set()
    for f in files:
        try:
            text = open(f, encoding="utf-8", errors="replace").read()
        except OSError:
            continue
        for inc in INCLUDE_RE.findall(text):
            target = None
            for d in [os.path.dirname(f)] + INCLUDE_ROOTS:
                cand = os.path.normpath(os.path.join(d, inc))
                if cand in known:
                    target = cand
                    break
            if target is None and len(by_name.get(os.path.basename(inc), [])) == 1:
                target = by_name[os.path.basename(inc)][0]
            if target is not None:
                a, b = module_of(f), module_of(target)
                if a != b:
                    edges.add((a, b, "includes"))
    return edges


def objects():
    """(object path, source path) for every object of the build whose
    source is in the tree (CPU, emulator and sanitizer builds alike)."""
    out = []
    for dirpath, _, filenames in os.walk(BUILD):
        for f in filenames:
            if not f.endswith(".o"):
                continue
            obj = os.path.join(dirpath, f)
            rel = obj[:-2]
            # build/<anything>/obj/<source>  ->  <source>
            parts = rel.split(os.sep)
            if "obj" not in parts:
                continue
            stem = os.path.join(*parts[len(parts) - parts[::-1].index("obj"):])
            for src in (stem, stem + ".c", stem + ".cc"):
                if os.path.isfile(src):
                    out.append((obj, os.path.normpath(src)))
                    break
    return out


def nm_symbols(obj):
    """(defined, undefined) global symbol names of one object."""
    try:
        r = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return set(), set()
    defined, undefined = set(), set()
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind in "TDBRVWGSi":       # global definitions (weak ones too)
            defined.add(name)
    return defined, undefined


def libc_symbols():
    """The C library's exported names: a test object that defines one
    interposes it (as tests/lib/dlopen-swap.c does dlopen), and a call to the
    C library is no edge between folders."""
    names = set()
    for lib in ("libc.so.6", "libdl.so.2"):
        path = subprocess.run(["gcc", "-print-file-name=" + lib], capture_output=True, text=True).stdout.strip()
        if not os.path.isabs(path):
            continue
        r = subprocess.run(["nm", "-D", "--defined-only", "-P", path], capture_output=True, text=True)
        names.update(line.split()[0].split("@")[0] for line in r.stdout.splitlines() if line.strip())
    return names


def call_edges(objs):
    definers = {}
    needs = []
    system = libc_symbols()
    for obj, src in objs:
        d, u = nm_symbols(obj)
        for s in d - system:
            definers.setdefault(s, set()).add(module_of(src))
        needs.append((module_of(src), u))
    edges = set()
    for mod, undefined in needs:
        for s in undefined:
            for target in definers.get(s, ()):
                if target != mod:
                    edges.add((mod, target, "calls " + s))
    return edges


def cycles(edges):
    """Strongly connected components with more than one module (Tarjan)."""
    graph = {}
    for a, b, _ in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, onstack, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        onstack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in onstack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                onstack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def unit_of(path):
    """The unit (UNITS, or plugin/NAME) a source file or module is in."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == "plugin":
        cand = "plugin/" + parts[1]
        return cand
    best = None
    for u in UNITS:
        if path == u or path.startswith(u + "/"):
            if best is None or len(u) > len(best):
                best = u
    return best


def allowed(a, b):
    """Whether unit a may use unit b (the table, then the exceptions)."""
    if a is None or b is None or a == b:
        return True
    key = a if a in FOLDER_RULES else ("plugin/*" if a.startswith("plugin/") else None)
    if key is None:
        return False
    rule = FOLDER_RULES[key]
    if rule is None or b in rule:
        return True
    return (a, b) in EXCEPTIONS


def folder_violations(edges):
    """Edges between units that the table does not allow, sorted."""
    out = []
    for a, b, why in sorted(edges):
        ua, ub = unit_of(a), unit_of(b)
        if not allowed(ua, ub):
            out.append((ua, ub, a, b, why))
    return out


def planted_check():
    """The folder check on a small planted tree: it must catch each planted
    violation and pass each planted legal edge. Returns a list of what it
    got wrong (empty when right)."""
    import tempfile
    planted = {
        "abi/planted.h": '#include "integrators/sim_core.h"\n',          # abi reaches up
        "integrators/sim_core.h": "",
        "plugin/cpu-direct/planted.c": '#include "cpu-tree/tree_bits.h"\n',  # plugin -> plugin
        "plugin/cpu-tree/tree_bits.h": '#include "base/plugin_base.h"\n',   # legal
        "plugin/base/plugin_base.h": '#include "gravplug.h"\n',             # legal
        "abi/gravplug.h": "",
        "host_stub/planted.c": '#include "octree/keys.h"\n',               # host -> plugin
        "plugin/octree/keys.h": "",
        "host_stub/ic/planted.c": '#include "particle_set.h"\n',           # legal
        "host_stub/particles/particle_set.h": "",
        "integrators/core/planted.c": '#include "solver/force.h"\n',      # core -> bridge
        "integrators/solver/force.h": '#include "core/sim_core.h"\n',     # legal
        "integrators/core/sim_core.h": "",
    }
    want = {("abi", "integrators"), ("plugin/cpu-direct", "plugin/cpu-tree"),
            ("host_stub", "plugin/octree"), ("integrators/core", "integrators/solver")}
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        for rel, text in planted.items():
            os.makedirs(os.path.join(tmp, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(tmp, rel), "w") as f:
                f.write(text)
        os.chdir(tmp)
        try:
            got = {(ua, ub) for ua, ub, _, _, _ in folder_violations(include_edges(sorted(planted)))}
        finally:
            os.chdir(here)
    wrong = ["missed %s -> %s" % e for e in sorted(want - got)]
    wrong += ["flagged the legal %s -> %s" % e for e in sorted(got - want)]
    return wrong


def report_folders(n, edges):
    bad = folder_violations(edges)
    print(("ok" if not bad else "not ok"), n,
          "- every edge between folders is one the table allows (%d edges)" % len(edges))
    for ua, ub, a, b, why in bad:
        print("#   %s -> %s: %s -> %s (%s)" % (ua, ub, a, b, why))
    return not bad


def report(n, what, edges):
    found = cycles(edges)
    print(("ok" if not found else "not ok"), n, "-", what)
    for comp in found:
        members = set(comp)
        print("# loop among:", ", ".join(comp))
        for a, b, why in sorted(edges):
            if a in members and b in members:
                print("#   %s -> %s (%s)" % (a, b, why))
    return not found


def main():
    files = source_files()
    objs = objects()
    print("1..6")
    inc = include_edges(files)
    calls = call_edges(objs)
    wrong = planted_check()
    print(("ok" if not wrong else "not ok"), 1,
          "- the folder check catches the violations planted in a scratch tree")
    for w in wrong:
        print("#   " + w)
    ok = not wrong
    ok &= report_folders(2, inc | calls)
    ok &= report(3, "no #include loop among %d source files" % len(files), inc)
    ok &= report(4, "no call loop among the modules of %d objects" % len(objs), calls)
    ok &= report(5, "no loop of includes and calls together", inc | calls)
    # The check must see something, or it proves nothing.
    seen = len(objs) > 0 and len(calls) > 0
    print(("ok" if seen else "not ok"), 6, "- objects found under %s/ (build first)" % BUILD)
    return 0 if ok and seen else 1


if __name__ == "__main__":
    sys.exit(main())
