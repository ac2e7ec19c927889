#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""layering.py — no two source files include or call each other in a loop.

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
INCLUDE_ROOTS = [".", "abi", "plugin", "integrators", "host_stub", "host_stub/ic", "tests"]


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


def call_edges(objs):
    definers = {}
    needs = []
    for obj, src in objs:
        d, u = nm_symbols(obj)
        for s in d:
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
    print("1..4")
    inc = include_edges(files)
    calls = call_edges(objs)
    ok = report(1, "no #include loop among %d source files" % len(files), inc)
    ok &= report(2, "no call loop among the modules of %d objects" % len(objs), calls)
    ok &= report(3, "no loop of includes and calls together", inc | calls)
    # The check must see something, or it proves nothing.
    seen = len(objs) > 0 and len(calls) > 0
    print(("ok" if seen else "not ok"), 4, "- objects found under %s/ (build first)" % BUILD)
    return 0 if ok and seen else 1


if __name__ == "__main__":
    sys.exit(main())
