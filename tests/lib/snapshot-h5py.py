#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""snapshot-h5py.t -- a gravplug snapshot read by h5py as a Gadget/SWIFT
reader would: the Header and Units attributes, PartType1 datasets with
their shapes and types, and values identical to the text file gravic
writes from the same initial conditions. Skips without h5py."""
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
build = os.environ.get("GP_BUILD", os.path.dirname(here))
gravic = os.path.join(build, "bin", "gravic")

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"1..0 # SKIP h5py/numpy not importable ({e})")
    sys.exit(0)
if not os.access(gravic, os.X_OK):
    print(f"1..0 # SKIP {gravic} not built")
    sys.exit(0)

n_tests = 0
failed = 0


def ok(cond, what):
    global n_tests, failed
    n_tests += 1
    if not cond:
        failed += 1
    print(f"{'' if cond else 'not '}ok {n_tests} - {what}", flush=True)


with tempfile.TemporaryDirectory() as tmp:
    h5 = os.path.join(tmp, "g.h5")
    txt = os.path.join(tmp, "g.txt")
    for out in (h5, txt):
        subprocess.run([gravic, "galaxy", "2000", out, "seed=11"], check=True)
    with h5py.File(h5, "r") as f:
        hdr = f["Header"].attrs
        ok(list(hdr["NumPart_ThisFile"]) == [0, 2000, 0, 0, 0, 0], "Header/NumPart_ThisFile = [0, 2000, 0, 0, 0, 0]")
        total = hdr["NumPart_Total"].astype(np.uint64) + (hdr["NumPart_Total_HighWord"].astype(np.uint64) << np.uint64(32))
        ok(list(total) == [0, 2000, 0, 0, 0, 0], "NumPart_Total + HighWord << 32 gives the count")
        ok(float(hdr["Time"]) == 0.0 and float(hdr["BoxSize"]) == 0.0 and int(hdr["NumFilesPerSnapshot"]) == 1,
           "Time 0, BoxSize 0, NumFilesPerSnapshot 1")
        ok(list(hdr["MassTable"]) == [0.0] * 6, "MassTable all zero (per-particle masses)")
        units = f["Units"].attrs
        ok(float(units["G"]) == 1.0 and b"N-body" in bytes(units["System"]), "Units group says N-body units, G = 1")
        g = f["PartType1"]
        ok(g["Coordinates"].shape == (2000, 3) and g["Coordinates"].dtype == np.float64,
           "PartType1/Coordinates is 2000 x 3 float64")
        ok(g["Velocities"].shape == (2000, 3) and g["Masses"].shape == (2000,), "Velocities 2000 x 3, Masses 2000")
        ok(g["ParticleIDs"].dtype == np.uint64, "ParticleIDs are uint64")
        ref = np.loadtxt(txt)
        ok(np.array_equal(g["Coordinates"][:], ref[:, 0:3]) and np.array_equal(g["Velocities"][:], ref[:, 3:6]),
           "positions and velocities equal the text output bit for bit")
        ok(np.array_equal(g["Masses"][:], ref[:, 6]) and np.array_equal(g["ParticleIDs"][:], ref[:, 7].astype(np.uint64)),
           "masses and ids equal the text output")
        ok(abs(g["Masses"][:].sum() - 1.1) < 1e-12, "galaxy total mass 1.1 (halo 1 + bulge 0.05 + disk 0.05)")

print(f"1..{n_tests}")
sys.exit(1 if failed else 0)
