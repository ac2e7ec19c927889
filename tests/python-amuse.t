#!/usr/bin/env python3
"""gravplug.amuse.Gravplug inside the real AMUSE framework: a stock AMUSE
script (units, converter, particle sets, channels, bridge) with a gravplug
plugin as its gravity code.

Skips when AMUSE is not importable. AMUSE lives best in its own venv:
GRAVPLUG_AMUSE_PYTHON=/path/to/venv/bin/python makes this test re-run
itself under that interpreter (docs/PYTHON.md says how to build one).
"""
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1] / "python"))

try:
    import numpy as np
    import amuse  # noqa: F401
    from amuse.rfi import python_code  # noqa: F401  (needs mpi4py)
except ImportError as exc:
    # .ci/install-amuse puts a venv here; GRAVPLUG_AMUSE_PYTHON overrides it
    venv = os.environ.get("GRAVPLUG_AMUSE_VENV",
                          os.path.expanduser("~/.local/share/gravplug/amuse-venv"))
    default = os.path.join(venv, "bin", "python")
    alt = os.environ.get("GRAVPLUG_AMUSE_PYTHON") or (default if os.path.exists(default) else None)
    if alt and os.path.abspath(alt) != os.path.abspath(sys.executable) \
            and not os.environ.get("GRAVPLUG_AMUSE_REEXEC"):
        os.environ["GRAVPLUG_AMUSE_REEXEC"] = "1"
        os.environ["PYTHONPATH"] = os.pathsep.join(
            [str(HERE.parents[1] / "python")] + [p for p in [os.environ.get("PYTHONPATH")] if p])
        os.execv(alt, [alt, str(HERE)])
    print(f"1..0 # SKIP AMUSE not usable here ({exc}); set GRAVPLUG_AMUSE_PYTHON "
          f"to a Python with amuse-framework and mpi4py, or run .ci/install-amuse")
    sys.exit(0)

from gravplug._tap import Tap  # noqa: E402

t = Tap()
try:
    import gravplug
    from gravplug.amuse import Gravplug
    gravplug.where()
except Exception as e:  # noqa: BLE001
    t.ok(False, "gravplug.amuse imports and libgravplug.so is found", str(e))
    t.done_testing()

from amuse.couple import bridge  # noqa: E402
from amuse.datamodel import Particles  # noqa: E402
from amuse.ic.plummer import new_plummer_model  # noqa: E402
from amuse.units import nbody_system, units  # noqa: E402

# ---- a stock AMUSE script, in physical units through a converter -------------
conv = nbody_system.nbody_to_si(1000 | units.MSun, 1 | units.parsec)
np.random.seed(3)
stars = new_plummer_model(128, convert_nbody=conv)
gravity = Gravplug(conv, solver="cpu-direct", integrator="leapfrog")
gravity.parameters.epsilon_squared = (0.01 | units.parsec) ** 2
gravity.parameters.dt = conv.to_si(1 / 256. | nbody_system.time)
gravity.particles.add_particles(stars)
t.ok(len(gravity.particles) == 128, "particles.add_particles: 128 stars in the code")
t.ok(gravity.parameters.solver == "cpu-direct", "parameters.solver reads back")

e0 = gravity.kinetic_energy + gravity.potential_energy
t.ok(e0.unit.base_system == units.J.unit.base_system or e0.value_in(units.J) < 0,
     f"energies come back in SI units ({e0.as_quantity_in(units.J)})")
t_end = conv.to_si(0.25 | nbody_system.time)
gravity.evolve_model(t_end)
e1 = gravity.kinetic_energy + gravity.potential_energy
t.ok(abs(gravity.model_time - t_end) < 1e-9 * t_end,
     f"evolve_model reaches {t_end.as_quantity_in(units.Myr)}")
de = abs((e1 - e0) / e0)
t.ok(de < 1e-4, f"energy conserved to {de:.1e} over 1/4 N-body time")

channel = gravity.particles.new_channel_to(stars)
channel.copy()
t.ok(abs(stars[0].x - gravity.particles[0].x) < 1e-12 * abs(stars[0].x) + (1e-20 | units.m),
     "a channel copies the evolved positions back")
moved = (stars.position - new_plummer_model(128, convert_nbody=conv).position).lengths()
t.ok(moved.max() > (0 | units.m), "stars moved during the run")

# ---- field at points matches gravplug.Solver on the same particles ------------
pts = [0.3, -1.0, 2.0] | units.parsec
ax, ay, az = gravity.get_gravity_at_point(0 * pts, pts, 0 * pts, 0 * pts)
phi = gravity.get_potential_at_point(0 * pts, pts, 0 * pts, 0 * pts)
pos_nb = conv.to_nbody(gravity.particles.position).value_in(nbody_system.length)
m_nb = conv.to_nbody(gravity.particles.mass).value_in(nbody_system.mass)
with gravplug.Solver("cpu-direct", eps=conv.to_nbody(0.01 | units.parsec).value_in(nbody_system.length)) as s:
    s.set_particles(np.ascontiguousarray(pos_nb), np.ascontiguousarray(m_nb))
    x_nb = conv.to_nbody(pts).value_in(nbody_system.length)
    a_ref, p_ref = s.field(np.stack([x_nb, 0 * x_nb, 0 * x_nb], 1))
    acc_ref, pot_ref = s.forces()
a_got = conv.to_nbody(ax).value_in(nbody_system.acceleration)
p_got = conv.to_nbody(phi).value_in(nbody_system.potential)
t.ok(np.allclose(a_got, a_ref[:, 0], rtol=1e-9), "get_gravity_at_point (SI) = Solver.field", a_got, a_ref[:, 0])
t.ok(np.allclose(p_got, p_ref, rtol=1e-9), "get_potential_at_point (SI) = Solver.field")
ax_p = conv.to_nbody(gravity.particles.ax).value_in(nbody_system.acceleration)
pot_p = conv.to_nbody(gravity.particles.potential_in_code).value_in(nbody_system.potential)
t.ok(np.allclose(ax_p, acc_ref[:, 0], rtol=1e-9, atol=1e-9 * np.abs(acc_ref).max()),
     "particles.ax (get_acceleration) = Solver.forces")
t.ok(np.allclose(pot_p, pot_ref, rtol=1e-9), "particles.potential_in_code (get_potential) = Solver.forces")

# ---- a bad plugin parameter: an AMUSE error, the gravplug sentence kept -------
gravity.set_plugin_parameter("no_such_param", "1")
try:
    gravity.evolve_model(2 * t_end)
    t.ok(False, "a bad plugin parameter makes evolve_model fail")
except Exception as exc:  # noqa: BLE001 — AMUSE raises its own exception types
    t.ok("evolve_model" in str(exc) or "-1" in str(exc),
         "a bad plugin parameter makes evolve_model fail with an AMUSE error", str(exc))
msg = gravity.get_last_error()
t.ok("no_such_param" in str(msg), "get_last_error() returns the gravplug sentence", msg)
gravity.stop()

# ---- bridge: a cluster orbiting in a galaxy computed by a second instance ----
NG = 4000
galaxy_pos = gravplug.ic.make("hernquist", NG, seed=5)
have_tree = "cpu-tree" in dict(gravplug.list_plugins())
galaxy = Gravplug(solver="cpu-tree" if have_tree else "cpu-direct",
                  plugin_params={"theta": 0.4} if have_tree else None)
galaxy.parameters.epsilon_squared = 0.3 ** 2 | nbody_system.length ** 2
gp = Particles(NG)
gp.mass = galaxy_pos.mass * 100 | nbody_system.mass
gp.position = galaxy_pos.pos | nbody_system.length
gp.velocity = galaxy_pos.vel * 10 | nbody_system.speed
galaxy.particles.add_particles(gp)

cluster_stars = new_plummer_model(64)
cluster_stars.mass *= 0.01
cluster_stars.position *= 0.05
cluster_stars.velocity *= 0.2 ** 0.5          # virial: v ~ sqrt(M / R)
cluster_stars.position += [3.0, 0, 0] | nbody_system.length
vcirc = (galaxy.get_gravity_at_point(0 | nbody_system.length, 3 | nbody_system.length,
                                     0 | nbody_system.length, 0 | nbody_system.length)[0]
         * (-3 | nbody_system.length))[0].sqrt()
cluster_stars.velocity += [0, 1, 0] * vcirc
cluster = Gravplug(solver="cpu-direct", integrator="leapfrog")
cluster.parameters.epsilon_squared = 0.005 ** 2 | nbody_system.length ** 2
cluster.parameters.dt = 1 / 512. | nbody_system.time
cluster.particles.add_particles(cluster_stars)

r0 = cluster.particles.center_of_mass().length()
period = 2 * np.pi * r0 / vcirc
sys_ = bridge.Bridge(timestep=period / 48)    # 12 kick-drift-kick steps
sys_.add_system(cluster, (galaxy,))
sys_.evolve_model(period / 4)
com = cluster.particles.center_of_mass()
r1 = com.length()
angle = np.degrees(np.arctan2(com.y.value_in(nbody_system.length), com.x.value_in(nbody_system.length)))
# Without the galaxy's kicks the cluster would drift straight to r = 5.6, 57 deg.
t.ok(abs(r1 - r0) < 0.15 * r0,
     f"bridge: the cluster stays on its circular orbit (r {r0.number:.3f} -> {r1.number:.3f})")
t.ok(70 < angle < 110, f"bridge: a quarter period turns the orbit by ~90 deg ({angle:.1f})")
t.ok(abs(sys_.model_time - period / 4) < period / 48,
     f"bridge model_time reached ({sys_.model_time.number:.3f} of {(period / 4).number:.3f})")
cluster.stop()
galaxy.stop()
t.done_testing()
