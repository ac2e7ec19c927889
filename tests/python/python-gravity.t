#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gravplug.Gravity (AMUSE-style, on the gp_sim integrators) and gravplug.ic
from Python: energy conservation, a Kepler orbit, field at points, solver
swap mid-run, error paths. Runs from a checkout without installing."""
import math

import pyprelude  # noqa: E402,F401  (python/ on the path; skips without numpy)
import numpy as np  # noqa: E402

from gravplug._tap import Tap  # noqa: E402

t = Tap()
with t.stop_unless("gravplug imports and finds libgravplug.so"):
    import gravplug as G
    from gravplug import ic
    G.where()

# ---- initial conditions ------------------------------------------------------
t.ok("plummer" in ic.models() and "galaxy" in ic.models(), "ic.models() lists plummer and galaxy")
p = ic.make("plummer", 512, seed=11)
q = ic.make("plummer", 512, seed=11)
t.ok(p.pos.shape == (512, 3) and p.pos.dtype == np.float64 and p.pos.flags.c_contiguous,
     "ic.make gives (n,3) float64 C-contiguous arrays")
t.ok(np.array_equal(p.pos, q.pos) and np.array_equal(p.vel, q.vel),
     "ic.make is reproducible bit for bit from the seed")
t.is_num(p.mass.sum(), 1.0, 1e-12, "Plummer total mass is 1 (N-body units)")
t.ok(np.abs(p.pos.T @ p.mass).max() < 1e-12, "returned in the centre-of-mass frame")
t.raises(G.InvalidArgumentError, lambda: ic.make("plummer", 10, bogus=1),
         "unknown ic option raises InvalidArgumentError", lambda e: "bogus" in str(e))
t.raises(G.InvalidArgumentError, lambda: ic.make("no-such-model", 10),
         "unknown ic model raises InvalidArgumentError")
t.raises(ValueError, lambda: ic.make("plummer", 1.5),
         "ic.make refuses n = 1.5 (it used to make 1 particle)", lambda e: "whole" in str(e))
t.ok(ic.make("plummer", 1e2).pos.shape == (100, 3), "ic.make takes a whole float such as 1e2")

# ---- Gravity: errors -----------------------------------------------------------
t.raises(G.UnknownParameterError, lambda: G.Gravity("cpu-direct", "leapfrog", thetaa=1),
         "unknown keyword raises UnknownParameterError naming solver and integrator params",
         lambda e: "eps" in str(e) and "dt" in str(e))
t.raises(G.GravplugError, lambda: G.Gravity("cpu-direct", "no-such-integrator"),
         "unknown integrator raises a GravplugError")
t.raises(G.PluginNotFoundError, lambda: G.Gravity("no-such-plugin"),
         "unknown solver raises PluginNotFoundError")
g = G.Gravity("cpu-direct", "leapfrog", eps=0.05, dt=1 / 128)
t.raises(G.BadStateError, lambda: g.evolve_model(1.0), "evolve_model before particles raises BadStateError")
t.raises(ValueError, lambda: g.particles.add_particles(p.pos, p.vel[:10], p.mass),
         "velocities of the wrong length raise ValueError")
dup = np.arange(512, dtype=np.uint64)
dup[300] = 7
t.raises(G.InvalidArgumentError, lambda: g.set_particles(p.pos, p.vel, p.mass, ids=dup),
         "set_particles with an id held twice raises InvalidArgumentError naming both particles",
         lambda e: "7 and 300" in str(e) and "id 7" in str(e))
# Ids are converted exactly or refused, naming the value: never truncated
# (0.5 -> 0), wrapped (-1 -> 2**64-1) or read from a string.
for bad, exc, said in (([0.5], ValueError, "0.5"), ([-1], ValueError, "-1"),
                       ([float("nan")], ValueError, "nan"), (["7"], TypeError, "ids[511] is '7'"),
                       ([7, "x"], TypeError, "ids[511] is 'x'")):
    ids = list(range(511)) + bad if len(bad) == 1 else list(range(510)) + bad
    t.raises(exc, lambda ids=ids: g.set_particles(p.pos, p.vel, p.mass, ids=ids),
             f"set_particles refuses ids ending {bad!r}, naming the value",
             lambda e, said=said: said in str(e) and "ids" in str(e))
g_ids = G.Gravity("cpu-direct", "leapfrog", eps=0.05, dt=1 / 128)
g_ids.set_particles(p.pos[:2], p.vel[:2], p.mass[:2], ids=[3.0, 2**62 * 1.0])
t.ok(g_ids.n == 2, "integral float ids (3.0, 2.0**62) are taken exactly")

# ---- energy conservation, leapfrog and block-rk2 -------------------------------
g.particles.add_particles(p.pos, p.vel, p.mass)
t.ok(len(g.particles) == 512 and g.n == 512, "add_particles: 512 particles in C")
e0 = g.kinetic_energy + g.potential_energy
g.evolve_model(0.25)
t.is_num(g.model_time, 0.25, 1e-12, "model_time after evolve_model(0.25)")
e1 = g.kinetic_energy + g.potential_energy
t.ok(abs((e1 - e0) / e0) < 2e-5,
     f"leapfrog dt=1/128 conserves energy: |dE/E| = {abs((e1 - e0) / e0):.2e} < 2e-5")

b = G.Gravity("cpu-direct", "block-rk2", eps=0.05, dt=1 / 16, eta=0.1)
b.particles.add_particles(p.pos, p.vel, p.mass)
e0 = b.total_energy
b.evolve_model(0.25)
e1 = b.total_energy
t.ok(abs((e1 - e0) / e0) < 1e-4,
     f"block-rk2 (eta=0.1) conserves energy: |dE/E| = {abs((e1 - e0) / e0):.2e} < 1e-4")
lv = b.level_counts()
t.ok(lv.sum() == 512, f"level_counts covers every particle ({lv.tolist()})")
t.ok(b.counters()["steps"] > 0, "counters() reports integrator steps", b.counters())

# ---- field at points agrees with a Solver on the same particles ----------------
x = np.array([0.3, -2.0, 5.0])
y = np.array([0.1, 0.5, 0.0])
z = np.array([-0.2, 0.0, 1.0])
ax, ay, az = g.get_gravity_at_point(0.0, x, y, z)
phi = g.get_potential_at_point(0.0, x, y, z)
with G.Solver("cpu-direct", eps=0.05) as s:
    s.set_particles(g.positions, g.masses)
    a_ref, p_ref = s.field(np.stack([x, y, z], axis=1))
    acc_ref, pot_ref = s.forces()
t.ok(np.allclose(np.stack([ax, ay, az], 1), a_ref, rtol=1e-13, atol=0),
     "get_gravity_at_point = Solver.field on the same particles")
t.ok(np.allclose(phi, p_ref, rtol=1e-13), "get_potential_at_point = Solver.field potentials")
t.is_num(phi[2], -1 / np.linalg.norm(g.positions.T @ g.masses - [5, 0, 1]), 2e-2,
         "potential far away is close to -M/r")
t.ok(np.allclose(g.accelerations, acc_ref, rtol=1e-12, atol=1e-12),
     "Gravity.accelerations = Solver.forces")
t.ok(np.allclose(g.potentials, pot_ref, rtol=1e-12),
     "Gravity.potentials (self term removed) = Solver.forces potentials")
t.is_num(0.5 * (g.masses * g.potentials).sum(), g.potential_energy, 1e-12,
         "potential_energy = 1/2 sum m phi")
ax2, _, _ = g.get_gravity_at_point(1.0, x[:1], y[:1], z[:1])
with G.Solver("cpu-direct", eps=math.hypot(0.05, 1.0)) as s:
    s.set_particles(g.positions, g.masses)
    t.is_num(ax2[0], s.field([[x[0], y[0], z[0]]])[0][0, 0], 1e-13,
             "per-point eps adds in quadrature to the solver's eps")
t.ok(g.get_solver_param("eps") in ("0.05", "0.050000000000000003") or
     float(g.get_solver_param("eps")) == 0.05, "and the solver's eps is restored")

# ---- a kick through particles.velocity --------------------------------------------
v = g.particles.velocity
k0 = g.kinetic_energy
g.particles.velocity = 2 * v
t.is_num(g.kinetic_energy, 4 * k0, 1e-12, "setting particles.velocity (a kick) updates the C state")
g.particles.velocity = v

# ---- a Kepler orbit returns after one period -------------------------------------
kp = ic.make("kepler", 2, seed=1, a=1.0, e=0.5, m1=0.5, m2=0.5)
k = G.Gravity("cpu-direct", "rk4", eps=0.0, dt=1 / 2048)
k.set_particles(kp.pos, kp.vel, kp.mass)
period = 2 * math.pi
k.evolve_model(period)
drift = np.abs(k.positions - kp.pos).max()
t.ok(drift < 1e-6, f"rk4 Kepler orbit (e=0.5) returns after one period: |dx| = {drift:.1e}")

# ---- swapping solvers mid-run ------------------------------------------------------
have_tree = "cpu-tree" in dict(G.list_plugins())
if have_tree:
    g.set_solver("cpu-tree", eps=0.05, theta=0.3)
    t.ok(g.solver_name == "cpu-tree", "set_solver swaps to cpu-tree mid-run")
    e0 = g.total_energy
    g.evolve_model(0.5)
    t.ok(abs((g.total_energy - e0) / e0) < 1e-3, "the run continues on cpu-tree, energy kept to 1e-3")
    st = g.solver_stats()
    t.ok(st.tree_builds + st.tree_refits > 0, "solver_stats() now come from the tree plugin", st)
else:
    t.skip(3, "cpu-tree plugin not built")

for obj in (g, b, k):
    obj.close()
t.raises(G.BadStateError, lambda: g.evolve_model(1.0), "evolve_model after close raises BadStateError")
t.done_testing()
