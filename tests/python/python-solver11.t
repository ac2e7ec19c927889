#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ABI 1.1 from Python: Solver.set_state, predict, get_positions,
set_source_subset, update_masses on cpu-direct (numpy checks like the 1.0
calls, predictions equal to numpy's evaluation of the ABI expression bit for
bit, subsets and masses against references); a 1.0-only plugin
(tests/fixtures/sim-abi10.c) raises UnsupportedError for them; Gravity.solver_path
and Gravity.set_masses mid-run."""
import os
from pathlib import Path

import pyprelude  # noqa: E402,F401  (python/ on the path; skips without numpy)
import numpy as np  # noqa: E402

from gravplug._tap import Tap  # noqa: E402

t = Tap()
with t.stop_unless("gravplug imports"):
    import gravplug as G

rng = np.random.default_rng(3)
n = 200
pos = rng.normal(size=(n, 3))
vel = rng.normal(size=(n, 3))
acc = rng.normal(size=(n, 3))
mass = rng.uniform(0.5, 1.5, size=n) / n
pos[0] = [-0.0, 0.0, -0.0]
vel[0] = [0.0, -0.0, 1.0]

s = G.Solver("cpu-direct", eps=0.01)
t.ok(s.has("predict") and s.has("update_masses") and G.Capability.PREDICT in s.capabilities,
     "cpu-direct offers the 1.1 calls and GP_CAP_PREDICT", s.abi_version)
t.raises(G.UnknownParameterError, lambda: s.has("no_such_call"), "has() of a non-member raises")
t.raises(G.BadStateError, lambda: s.set_state(pos, vel, acc, 0.0),
         "set_state before set_particles raises BadStateError")
s.set_particles(pos, mass)

# ---- set_state / predict / get_positions ----------------------------------
tt = rng.uniform(-1, 1, size=n)
tt[0] = 0.5
s.set_state(pos, vel, acc, tt)
s.predict(0.5)
got = s.get_positions()
dt = (0.5 - tt)[:, None]
h = 0.5 * dt * dt
want = (pos + dt * vel) + h * acc          # the ABI's order; numpy never fuses
t.ok(got.tobytes() == want.tobytes(),
     "predict + get_positions equal numpy's evaluation of the ABI expression bit for bit "
     "(signed zeros and dt = 0 included)")
idx = np.array([5, 3, 199, 0])
t.ok(s.get_positions(idx).tobytes() == want[idx].tobytes(), "get_positions of a subset, in idx order")
out = np.empty((4, 3))
t.ok(s.get_positions(idx, out=out) is out, "get_positions fills out= without a copy")
s.set_state(pos[idx] + 1, vel[idx], acc[idx], 2.0, idx=idx)   # scalar t
t.ok(s.get_positions(idx).tobytes() == (pos[idx] + 1).tobytes(),
     "set_state of a subset (scalar t) moves those sources to pos until predict")

t.raises(TypeError, lambda: s.set_state(pos.astype(np.float32), vel, acc, 0.0),
         "float32 positions are refused before C (TypeError)")
t.raises(ValueError, lambda: s.set_state(pos[:, :2].copy(), vel, acc, 0.0),
         "an (n, 2) array is refused (ValueError)")
t.raises(ValueError, lambda: s.set_state(pos[:3], vel[:3], acc[:3], 0.0, idx=[1, 2]),
         "3 rows for 2 indices are refused (ValueError)")
t.raises(ValueError, lambda: s.get_positions([0, n]), "an index >= n is refused (ValueError)")
t.raises(ValueError, lambda: s.get_positions([0, 1], out=np.zeros((3, 3))),
         "an out= of the wrong shape is refused (ValueError)")
bad = vel.copy()
bad[7, 1] = np.nan
e = t.raises(G.InvalidArgumentError, lambda: s.set_state(pos, bad, acc, 0.0),
             "a NaN velocity is refused by the plugin with its sentence")
t.raises(G.InvalidArgumentError, lambda: s.get_positions([1, 1]),
         "a repeated index is refused by the plugin")
t.raises(G.InvalidArgumentError, lambda: s.predict(float("inf")), "predict(inf) is refused")
t.raises(TypeError, lambda: s.predict("soon"), "predict('soon') is a TypeError")

# ---- source subset -----------------------------------------------------------
s.set_particles(pos, mass)
src = np.arange(0, n, 3)
s.set_source_subset(src)
a, p = s.forces()
d = pos[None, src, :] - pos[:, None, :]                   # (n, k, 3)
r2 = (d * d).sum(-1) + 0.01 ** 2
self_pair = src[None, :] == np.arange(n)[:, None]
w = np.where(self_pair, 0.0, mass[src][None, :] / r2 ** 1.5)
ref = (w[:, :, None] * d).sum(1)
t.ok(np.allclose(a, ref, rtol=1e-12, atol=1e-14),
     "forces from a source subset equal a direct sum over it (self skipped)",
     float(np.abs(a - ref).max()))
s.set_source_subset(None)
a_all, _ = s.forces()
t.ok(not np.allclose(a_all, a), "set_source_subset(None) restores all sources")

# ---- update_masses --------------------------------------------------------------
m2 = mass.copy()
m2[::4] *= 0.5
t.raises(ValueError, lambda: s.update_masses(m2[::4], idx=np.arange(0, n, 4)),
         "a strided mass array is refused, not copied silently (ValueError)")
s.update_masses(np.ascontiguousarray(m2[::4]), idx=np.arange(0, n, 4))
a_in_place, _ = s.forces()
fresh = G.Solver("cpu-direct", eps=0.01)
fresh.set_particles(pos, m2)
a_fresh, _ = fresh.forces()
t.ok(a_in_place.tobytes() == a_fresh.tobytes(),
     "update_masses of a subset gives the forces of a fresh set_particles bit for bit")
t.raises(G.InvalidArgumentError, lambda: s.update_masses(-m2), "negative masses are refused")
t.raises(ValueError, lambda: s.update_masses(m2[:3]), "3 masses for n particles are refused")

# ---- a 1.0-only plugin ---------------------------------------------------------------
old_so = Path(os.environ.get("GRAVPLUG_BUILD", Path(__file__).resolve().parents[2] / "build")) \
    / "tests" / "fixtures" / "gravplug-sim-abi10.so"
if old_so.is_file():
    o = G.Solver(str(old_so), eps=0.01)
    o.set_particles(pos, mass)
    t.ok(o.abi_version == (1, 0) and not o.has("predict") and not o.has("set_state"),
         "a 1.0 plugin (1.0 table size) offers none of the 1.1 calls", o.abi_version)
    t.raises(G.UnsupportedError, lambda: o.predict(1.0),
             "... and predict raises UnsupportedError with a sentence",
             lambda e: "1.1" in str(e))
    a_old, _ = o.forces()
    t.ok(a_old.tobytes() == a_all.tobytes(), "... while its 1.0 calls work")
else:
    t.skip(3, f"the 1.0 fixture {old_so} is not built (make {old_so})")

# ---- Gravity: solver_path and set_masses mid-run ---------------------------------------
def run(path, change):
    g = G.Gravity("cpu-direct", "block-rk2", eps=0.05, dt=0.25, eta=0.05)
    g.solver_path = path
    g.set_particles(pos, vel, mass)
    g.evolve_model(0.5)
    if change:
        g.set_masses(m2)
    g.evolve_model(1.0)
    out = (g.positions, g.velocities, g.solver_path_in_use, g.counters())
    g.close()
    return out


a11, a10, plain = run("auto", True), run("1.0", True), run("auto", False)
t.ok(a11[2] == "1.1" and a10[2] == "1.0" and a11[3]["state_steps"] > 0
     and a10[3]["state_steps"] == 0, "Gravity.solver_path chooses the path (in use: 1.1 / 1.0)")
t.ok(a11[0].tobytes() == a10[0].tobytes() and a11[1].tobytes() == a10[1].tobytes(),
     "set_masses mid-run: in place (1.1) and fresh set_particles (1.0) give the same bits")
t.ok(not np.array_equal(a11[0], plain[0]), "... and the mass change changes the run")
g = G.Gravity("cpu-direct", "block-rk2", eps=0.05)
t.raises(G.InvalidArgumentError, lambda: setattr(g, "solver_path", "2.0"),
         "an unknown solver path is refused", lambda e: "auto" in str(e))
t.ok(g.solver_path == "auto", "... and the setting is unchanged")
g.close()
t.done_testing()
