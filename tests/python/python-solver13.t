#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ABI 1.3 from Python: Solver.compute_forces_ex's pair_step_even and
nb_step_even, set_source_groups and compute_field_ex on cpu-direct, against
numpy: acc with groups against a naive sum that skips the group, the even
step at most the plain one and equal to it at rest, compute_field_ex at the
particles (excluding each) equal to compute_forces_ex; the 1.2-shaped fixture
(tests/fixtures/abi12.c) raises UnsupportedError for the 1.3 calls."""
import os
from pathlib import Path

import pyprelude  # noqa: E402,F401  (python/ on the path; skips without numpy)
import numpy as np  # noqa: E402

from gravplug._tap import Tap  # noqa: E402

t = Tap()
with t.stop_unless("gravplug imports"):
    import gravplug as G

rng = np.random.default_rng(13)
n = 200
pos = rng.normal(size=(n, 3))
vel = rng.normal(size=(n, 3)) * 0.3
mass = rng.uniform(0.5, 1.5, size=n) / n
eps = 0.01

s = G.Solver("cpu-direct", eps=eps)
t.ok(s.abi_version[1] >= 3 and s.has("set_source_groups") and s.has("compute_field_ex")
     and G.Capability.SOURCE_GROUPS in s.capabilities,
     "cpu-direct offers the 1.3 calls and GP_CAP_SOURCE_GROUPS", s.abi_version)
s.set_particles(pos, mass)
s.set_state(pos, vel, np.zeros((n, 3)), np.zeros(n))

o = s.compute_forces_ex(pair_step=True, pair_step_even=True, nb_step_even=0.05)
off, nb = s.get_neighbours()
t.ok(o.pair_step_even.shape == (n,) and np.all(o.pair_step_even <= o.pair_step)
     and np.all(o.pair_step_even > 0), "pair_step_even: n positive steps, none above pair_step")
t.ok(off.shape == (n + 1,), "lists by nb_step_even", int(off[-1]))

group = (np.arange(n) % 4).astype(np.uint32)
group[::7] = 0xFFFFFFFF
s.set_source_groups(group)
o = s.compute_forces_ex(potential=True)
r = pos[None, :, :] - pos[:, None, :]
r2 = (r * r).sum(axis=2) + eps * eps
skip = (group[:, None] == group[None, :]) & (group[:, None] != 0xFFFFFFFF)
np.fill_diagonal(skip, True)
m = np.where(skip, 0.0, mass[None, :])
a = (m[:, :, None] * r / r2[:, :, None] ** 1.5).sum(axis=1)
err = np.linalg.norm(o.acc - a, axis=1) / np.linalg.norm(a, axis=1)
t.ok(err.max() < 1e-12, "groups: acc against a numpy sum that skips the group",
     f"max rel {err.max():.3g}")
f = s.compute_field_ex(pos, vel, exclude=np.arange(n), pair_step_even=True)
t.ok(np.allclose(f.acc, o.acc, rtol=1e-12, atol=0), "compute_field_ex at the particles, "
     "each excluding itself, feels the groups as the particle does")
s.set_source_groups(None)
a0, _ = s.forces()
t.ok(s.compute_forces_ex().acc.tobytes() == a0.tobytes(), "set_source_groups(None) clears them")
t.raises(ValueError, lambda: s.set_source_groups(group[:-1]), "groups of the wrong length")
t.raises(G.InvalidArgumentError, lambda: s.compute_field_ex(pos[:2], None, pair_step=True),
         "compute_field_ex: a pair step without velocities is refused")
t.raises(G.InvalidArgumentError, lambda: s.compute_forces_ex(nb_step_even=-1.0),
         "a negative nb_step_even is refused")
s.close()

old_so = Path(os.environ.get("GRAVPLUG_BUILD", Path(__file__).resolve().parents[2] / "build")) \
    / "tests" / "fixtures" / "gravplug-abi12.so"
if old_so.is_file():
    o12 = G.Solver(str(old_so), eps=0.01)
    o12.set_particles(pos, mass)
    t.ok(o12.abi_version == (1, 2) and not o12.has("set_source_groups") and o12.has("compute_forces_ex"),
         "the 1.2 fixture offers 1.2 and no 1.3 call", o12.abi_version)
    t.raises(G.UnsupportedError, lambda: o12.set_source_groups(group), "set_source_groups on it raises "
             "UnsupportedError", lambda e: "1.3" in str(e))
    t.raises(G.UnsupportedError, lambda: o12.compute_forces_ex(pair_step_even=True),
             "... and so does an even step")
    t.ok(o12.compute_forces_ex(pair_step=True).pair_step.shape == (n,), "its 1.2 outputs work")
    o12.close()
else:
    t.skip(4, f"the 1.2 fixture {old_so} is not built (make {old_so})")
t.done_testing()
