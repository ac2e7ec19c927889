#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""plot-gravplot.t -- host_stub/plot/gravplot.py on a synthetic diagnostics
log (the columns of docs/CONFIG.md) and two snapshots written with h5py in
the Gadget layout: it writes energy.png, lagrangian.png, levels.png and
xy.png, each a real non-blank PNG under 200 KB; it leaves levels.png out
for a shared-step log; it refuses a log without a needed column, naming
it. Skips without matplotlib or h5py."""
import os
import re
import subprocess
import sys
import tempfile

SOURCE = os.environ.get("GP_SOURCE", "@GP_SOURCE@")
script = os.path.join(SOURCE, "host_stub", "plot", "gravplot.py")

try:
    import h5py
    import matplotlib.image as mpimg
    import numpy as np
except ImportError as e:
    print(f"1..0 # SKIP matplotlib/h5py/numpy not importable ({e})")
    sys.exit(0)
if not os.path.exists(script):
    print(f"1..0 # SKIP {script} not found (set GP_SOURCE to the source tree)")
    sys.exit(0)

n_tests = failed = 0


def ok(cond, what):
    global n_tests, failed
    n_tests += 1
    failed += not cond
    print(f"{'' if cond else 'not '}ok {n_tests} - {what}", flush=True)


COLS = ["time", "K", "W", "E", "dE_rel", "px", "py", "pz", "Lx", "Ly", "Lz", "virial",
        "r10", "r25", "r50", "r75", "r90", "levels", "steps", "force_calls", "particle_forces",
        "interactions", "solver", "wall"]


def write_log(path, levels=True, drop=None):
    cols = [c for c in COLS if c != drop]
    with open(path, "w") as f:
        f.write("# gravhost test\n# plugin: cpu-tree (asked: auto)\n# integrator: block-rk2 dt=0.0625\n# n: 3000\n")
        f.write("\t".join(cols) + "\n")
        for i in range(33):
            t = i / 16
            row = {"time": t, "K": 0.25, "W": -0.5, "E": -0.25, "dE_rel": 1e-5 * np.sin(t), "px": 0, "py": 0,
                   "pz": 0, "Lx": 0, "Ly": 0, "Lz": 0, "virial": 1 + 0.01 * np.cos(t),
                   "r10": 0.3, "r25": 0.5, "r50": 0.78, "r75": 1.3, "r90": 2.1,
                   "levels": "100,2000,900" if levels else "3000", "steps": i, "force_calls": 3 * i,
                   "particle_forces": 2000 * i, "interactions": 10 ** 6 * i,
                   "solver": "cpu-tree" if t < 1 else "cpu-direct", "wall": 0.1 * i}
            f.write("\t".join(str(row[c]) for c in cols) + "\n")


def write_snap(path, time, seed):
    rng = np.random.default_rng(seed)
    n = 3000
    pos = rng.normal(size=(n, 3)) * 0.5
    with h5py.File(path, "w") as f:
        h = f.create_group("Header")
        h.attrs["Time"] = time
        h.attrs["MassTable"] = np.zeros(6)
        h.attrs["NumPart_ThisFile"] = np.array([0, n, 0, 0, 0, 0], dtype=np.uint32)
        g = f.create_group("PartType1")
        g["Coordinates"] = pos
        g["Velocities"] = np.zeros_like(pos)
        g["Masses"] = np.full(n, 1.0 / n)
        g["ParticleIDs"] = np.arange(n, dtype=np.uint64)


def png_ok(path):
    if not os.path.exists(path):
        return False, "missing"
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        sig = f.read(8)
    img = mpimg.imread(path)
    return (sig == b"\x89PNG\r\n\x1a\n" and size < 200_000 and float(img.std()) > 0.01,
            f"{size} bytes, pixel std {img.std():.3f}")


with tempfile.TemporaryDirectory() as tmp:
    run = os.path.join(tmp, "run")
    os.makedirs(run)
    write_log(os.path.join(run, "diagnostics.tsv"))
    write_snap(os.path.join(run, "snap_0000.h5"), 0.0, 1)
    write_snap(os.path.join(run, "snap_0001.h5"), 2.0, 2)
    p = subprocess.run([sys.executable, script, run], capture_output=True, text=True)
    ok(p.returncode == 0, f"gravplot RUN_DIR exits 0 ({p.stderr.strip() or p.stdout.strip()})")
    for name in ("energy.png", "lagrangian.png", "levels.png", "xy.png"):
        good, why = png_ok(os.path.join(run, name))
        ok(good, f"{name}: a non-blank PNG under 200 KB ({why})")

    # `make run` draws every plot once: one call, both projections
    both = os.path.join(tmp, "both")
    p = subprocess.run([sys.executable, script, run, "--out", both, "--axes", "xy,xz"], capture_output=True, text=True)
    made = sorted(os.listdir(both)) if os.path.isdir(both) else []
    ok(p.returncode == 0 and "xy.png" in made and "xz.png" in made and "energy.png" in made,
       f"--axes xy,xz draws both projections and the log plots in one call ({made})")
    p = subprocess.run(["make", "-s", "-n", "-C", SOURCE, "run"], capture_output=True, text=True)
    calls = len(re.findall(r"python\S*\s+\S*gravplot\.py\b", p.stdout))
    ok(calls == 1, f"`make run` calls gravplot.py once, so energy/lagrangian/levels are drawn once ({calls} calls)")

    shared = os.path.join(tmp, "shared")
    os.makedirs(shared)
    write_log(os.path.join(shared, "log.tsv"), levels=False)
    p = subprocess.run([sys.executable, script, "--log", os.path.join(shared, "log.tsv"), "--out",
                        os.path.join(shared, "png")], capture_output=True, text=True)
    made = sorted(os.listdir(os.path.join(shared, "png"))) if os.path.isdir(os.path.join(shared, "png")) else []
    ok(p.returncode == 0 and made == ["energy.png", "lagrangian.png"],
       f"--log/--out with one time-step level: energy and Lagrangian plots only ({made})")

    write_log(os.path.join(shared, "bad.tsv"), drop="dE_rel")
    p = subprocess.run([sys.executable, script, "--log", os.path.join(shared, "bad.tsv")], capture_output=True,
                       text=True)
    ok(p.returncode == 1 and "no column 'dE_rel'" in p.stderr,
       f"refuses a log without dE_rel, naming it ({p.stderr.strip()})")
    p = subprocess.run([sys.executable, script, "--snapshot", os.path.join(tmp, "nope.h5"), "--out", tmp],
                       capture_output=True, text=True)
    ok(p.returncode == 1 and "nope.h5" in p.stderr, f"refuses a missing snapshot ({p.stderr.strip()})")

print(f"1..{n_tests}")
sys.exit(1 if failed else 0)
