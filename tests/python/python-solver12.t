#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ABI 1.2 from Python: Solver.set_state_jerk, get_velocities,
compute_forces_ex (an Outputs namedtuple of the requested outputs) and
get_neighbours on cpu-direct, against numpy: third-order prediction and
velocities bit for bit, jerk against a naive numpy sum, nn and lists against
brute force, acc equal to forces(); the 1.1-shaped fixture
(tests/fixtures/abi11.c) raises UnsupportedError for the 1.2 calls."""
import os
from pathlib import Path

import pyprelude  # noqa: E402,F401  (python/ on the path; skips without numpy)
import numpy as np  # noqa: E402

from gravplug._tap import Tap  # noqa: E402

t = Tap()
with t.stop_unless("gravplug imports"):
    import gravplug as G

rng = np.random.default_rng(12)
n = 300
pos = rng.normal(size=(n, 3))
vel = rng.normal(size=(n, 3)) * 0.3
acc = rng.normal(size=(n, 3)) * 0.1
jerk = rng.normal(size=(n, 3)) * 0.05
tt = rng.uniform(0, 0.25, size=n)
mass = rng.uniform(0.5, 1.5, size=n) / n
mass[::10] = 0.0
eps = 0.01

s = G.Solver("cpu-direct", eps=eps)
t.ok(all(s.has(c) for c in ("set_state_jerk", "get_velocities", "compute_forces_ex",
                            "get_neighbours"))
     and G.Capability.JERK in s.capabilities and G.Capability.NEIGHBOURS in s.capabilities,
     "cpu-direct offers the 1.2 calls, GP_CAP_JERK and GP_CAP_NEIGHBOURS", s.abi_version)
t.raises(G.BadStateError, lambda: s.compute_forces_ex(), "compute_forces_ex before set_particles")
s.set_particles(pos, mass)
t.raises(G.BadStateError, lambda: s.get_neighbours(), "get_neighbours before any lists")

# ---- third order -------------------------------------------------------------
s.set_state_jerk(pos, vel, acc, jerk, tt)
tp = 0.6
s.predict(tp)
dt = (tp - tt)[:, None]
h = 0.5 * dt * dt
c = (dt * dt * dt) / 6
want_x = ((pos + dt * vel) + h * acc) + c * jerk
want_v = (vel + dt * acc) + h * jerk
t.ok(s.get_positions().tobytes() == want_x.tobytes(),
     "predict: numpy's third-order expression bit for bit")
t.ok(s.get_velocities().tobytes() == want_v.tobytes(),
     "get_velocities: v + dt*a + (0.5*dt*dt)*j bit for bit")
t.ok(s.get_velocities([5, 2]).tobytes() == want_v[[5, 2]].tobytes(),
     "get_velocities of a subset, in its order")

# ---- compute_forces_ex ---------------------------------------------------------
o = s.compute_forces_ex()
t.ok(isinstance(o, G.Outputs) and o.pot is None and o.jerk is None and o.nn_index is None
     and o.pair_step is None, "only acc unless asked for")
a0, p0 = s.forces()
o = s.compute_forces_ex(potential=True, jerk=True, nn=True, pair_step=True)
t.ok(o.acc.tobytes() == a0.tobytes() and o.pot.tobytes() == p0.tobytes(),
     "acc and pot are forces()' bits")

x, v = want_x, want_v
r = x[None, :, :] - x[:, None, :]            # r[i, j] = x_j - x_i
w = v[None, :, :] - v[:, None, :]
d2 = (r * r).sum(axis=2)
r2 = d2 + eps * eps
src = mass > 0
np.fill_diagonal(r2, np.inf)
rv = (r * w).sum(axis=2)
m = np.where(src, mass, 0.0)[None, :, None]
jk = (m * (w / r2[:, :, None] ** 1.5 - 3 * rv[:, :, None] * r / r2[:, :, None] ** 2.5)).sum(axis=1)
err = np.linalg.norm(o.jerk - jk, axis=1) / np.linalg.norm(jk, axis=1)
t.ok(err.max() < 1e-12, "jerk against a naive numpy sum", f"max rel {err.max():.3g}")
dd = np.where(src[None, :], d2, np.inf)
np.fill_diagonal(dd, np.inf)
nn = dd.argmin(axis=1)                       # first minimum: the lower index
t.ok(np.array_equal(o.nn_index, nn.astype(np.uint32))
     and o.nn_dist2.tobytes() == dd[np.arange(n), nn].tobytes(),
     "nn_index and nn_dist2 equal brute force")
t.ok(o.pair_step.shape == (n,) and np.all(o.pair_step > 0), "pair_step: n positive steps")

# ---- neighbour lists -----------------------------------------------------------
s.set_active([7, 3, 100])
o = s.compute_forces_ex(nb_radius=[0.5, 0.8, 0.0])
off, nb = s.get_neighbours()
want = [np.flatnonzero(dd[i] < rr * rr) for i, rr in zip([7, 3, 100], [0.5, 0.8, 0.0])]
t.ok(off.dtype == np.uint64 and off.shape == (4,) and off[0] == 0
     and all(np.array_equal(nb[off[k]:off[k + 1]], want[k]) for k in range(3)),
     "get_neighbours: CSR lists of the active particles, strictly inside the radius",
     [len(w_) for w_ in want])
step_med = float(np.median(s.compute_forces_ex(pair_step=True, nb_step=0.05).pair_step))
off, nb = s.get_neighbours()
t.ok(off.shape == (4,), "lists by step (median pair_step %.3g)" % step_med)
s.compute_forces_ex()
t.raises(G.BadStateError, lambda: s.get_neighbours(),
         "a compute_forces_ex without lists forgets them")
t.raises(G.InvalidArgumentError, lambda: s.compute_forces_ex(nb_step=-1.0),
         "a negative nb_step is refused")
t.raises(G.InvalidArgumentError, lambda: s.compute_forces_ex(nb_radius=[0.1, np.nan, 0.1]),
         "a NaN radius is refused")
# A radius is a number, as nb_step is: not a string, not a boolean.
for bad in ("0.3", True, ["0.3", "0.3", "0.3"], [True, False, True]):
    t.raises(TypeError, lambda bad=bad: s.compute_forces_ex(nb_radius=bad),
             f"nb_radius={bad!r} is refused like nb_step='0.3'", lambda e: "nb_radius" in str(e))
t.raises(TypeError, lambda: s.compute_forces_ex(nb_step="0.3"), "nb_step='0.3' is refused")
t.raises(G.InvalidArgumentError,
         lambda: s.set_state_jerk(pos, vel, acc, np.full((n, 3), np.nan), tt),
         "a NaN jerk is refused")
s.close()

# ---- a 1.1 plugin ----------------------------------------------------------------
old_so = Path(os.environ.get("GRAVPLUG_BUILD", Path(__file__).resolve().parents[2] / "build")) \
    / "tests" / "fixtures" / "gravplug-abi11.so"
if old_so.is_file():
    o11 = G.Solver(str(old_so), eps=0.01)
    o11.set_particles(pos, mass)
    t.ok(o11.abi_version == (1, 1) and not o11.has("compute_forces_ex") and o11.has("predict"),
         "the 1.1 fixture offers 1.1 and no 1.2 call", o11.abi_version)
    t.raises(G.UnsupportedError, lambda: o11.compute_forces_ex(jerk=True),
             "compute_forces_ex on it raises UnsupportedError", lambda e: "1.2" in str(e))
    t.raises(G.UnsupportedError, lambda: o11.get_velocities(), "... and get_velocities")
    o11.close()
else:
    t.skip(3, f"the 1.1 fixture {old_so} is not built (make {old_so})")
t.done_testing()
