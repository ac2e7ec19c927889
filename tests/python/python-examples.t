#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python examples still run: examples/python/*.py at small sizes,
checking what each prints (and the bridge's PNG when matplotlib is there)."""
import os
import re
import subprocess
import sys
import tempfile

from pyprelude import REPO  # noqa: E402  (python/ on the path; skips without numpy)

from gravplug._tap import Tap  # noqa: E402

t = Tap()
env = dict(os.environ)
env["PYTHONPATH"] = os.pathsep.join([str(REPO / "python")] + [p for p in [env.get("PYTHONPATH")] if p])


def run(script, *args, cwd=None):
    r = subprocess.run([sys.executable, str(REPO / "examples" / "python" / script), *args],
                       capture_output=True, text=True, env=env, timeout=300, cwd=cwd)
    return r.returncode, r.stdout, r.stderr


rc, out, err = run("swap_solvers.py", "--n", "1024", "--thetas", "0.5", "--trees", "cpu-tree",
                   "--run-n", "256", "--run-t", "0.125")
t.ok(rc == 0, "swap_solvers.py runs", out[-2000:], err[-2000:])
m = re.search(r"^cpu-tree\s+0\.50\s+\S+\s+\S+\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)", out, re.M)
t.ok(m and 0 < float(m.group(1)) < 1e-2 and float(m.group(1)) <= float(m.group(3)),
     "it prints the tree's error distribution (median < 1e-2, median <= 99th)", out[-1500:])
m = re.search(r"direct -> tree at t/2\s+ends on cpu-tree .*max \|x - x_direct\| = (\S+)", out)
t.ok(m and float(m.group(1)) < 1e-3, "the mid-run swap ends on cpu-tree, close to the direct run", out[-800:])

with tempfile.TemporaryDirectory() as tmp:
    # run from an empty directory with the default output: the PNG goes to
    # out/examples/bridge/ as the config examples' output does, not into it
    png = os.path.join(tmp, "out", "examples", "bridge", "bridge_cluster_galaxy.png")
    rc, out, err = run("bridge_cluster_galaxy.py", "--n-galaxy", "4000", "--n-cluster", "64",
                       "--orbits", "0.1", "--steps-per-orbit", "100", cwd=tmp)
    t.ok(rc == 0, "bridge_cluster_galaxy.py runs", out[-2000:], err[-2000:])
    t.ok(set(os.listdir(tmp)) <= {"out"},
         f"it writes nothing into the current directory but out/ ({sorted(os.listdir(tmp))})")
    rows = [ln.split() for ln in out.splitlines() if ln and not ln.startswith("#")][1:]
    ok_rows = rows and all(len(r) == 7 for r in rows)
    t.ok(ok_rows and len(rows) >= 5, f"it prints the orbit table ({len(rows)} rows)", out[-1500:])
    if ok_rows:
        de_tot = max(abs(float(r[5])) for r in rows)
        t.ok(de_tot < 1e-3, f"the bridge conserves the cluster's total energy ({de_tot:.1e} < 1e-3)")
        t.ok(float(rows[-1][2]) > 20, f"the cluster moved along its orbit ({rows[-1][2]} deg)")
    else:
        t.skip(2, "no table to read")
    try:
        import matplotlib  # noqa: F401
        t.ok(os.path.getsize(png) > 10000, "it writes the PNG")
    except ImportError:
        t.skip(1, "matplotlib not installed")
t.done_testing()
