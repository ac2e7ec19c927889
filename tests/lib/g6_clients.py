# SPDX-License-Identifier: Apache-2.0
"""tests/lib/g6_clients.py DIR N TEND [CLIENTS] — one Plummer sphere integrated
by a real GRAPE-6 client twice: on libgravplug-g6 (the workers in DIR,
.ci/build-g6-workers) and in the client's own CPU mode (ph4's installed
worker; phiGRAPE's worker on AMUSE's lib/g6 in DIR/cpu). CLIENTS is a
comma-separated list (default ph4,phigrape). Prints TAP lines (three per
client, numbered from GP_TAP_FIRST) and, on stderr, one
"RESULT client mode N dE/E wall" line per run for bench/g6-clients.sh.

Checks: |dE/E| of the library run within a factor 2 of the CPU mode's
(or both below 1e-12), and the final positions within GP_G6_MAXDX
(default 1e-4 length units: the runs start alike and part only by
rounding and integration error over TEND)."""
import importlib.util
import os
import sys
import time

import numpy as np
from amuse.community.ph4.interface import ph4, ph4Interface
from amuse.ic.plummer import new_plummer_model
from amuse.units import nbody_system

DIR = os.path.abspath(sys.argv[1])
CPU_DIR = os.path.join(DIR, "cpu")
N, TEND = int(sys.argv[2]), float(sys.argv[3])
CLIENTS = sys.argv[4].split(",") if len(sys.argv) > 4 else ["ph4", "phigrape"]
MAXDX = float(os.environ.get("GP_G6_MAXDX", "1e-4"))
EPS2 = (0.01 | nbody_system.length) ** 2

# ph4's GPU worker from DIR (its own lookup would find the venv's folder)
_ph4_name = ph4Interface.name_of_the_muse_worker
ph4Interface.name_of_the_muse_worker = (
    lambda self, mode: os.path.join(DIR, "ph4_worker_gpu") if mode == self.MODE_GPU else _ph4_name(self, mode))


def phigrape_class():
    spec = importlib.util.spec_from_file_location("g6_phigrape_interface", os.path.join(DIR, "interface.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # AMUSE finds a class's file through its module
    spec.loader.exec_module(mod)
    iface = mod.PhiGRAPEInterface
    iface.name_of_the_worker = lambda self, mode, nw: os.path.join(DIR if mode == "g6lib-gravplug" else CPU_DIR,
                                                                    "phigrape_worker")
    return mod.PhiGRAPE


def run(client, on_library):
    np.random.seed(7)
    stars = new_plummer_model(N)
    if client == "ph4":
        code = ph4(mode="gpu") if on_library else ph4()
    else:
        # phiGRAPE's workers link an MPI other than mpi4py's, which cannot
        # spawn them (.ci/build-g6-workers): the sockets channel starts
        # each as a plain process, and without MPI_Init.
        code = phigrape_class()(mode="g6lib-gravplug" if on_library else "g6lib", channel_type="sockets",
                                initialize_mpi=False)
        code.parameters.initial_timestep_parameter = 0.01
        code.parameters.timestep_parameter = 0.02
    code.parameters.epsilon_squared = EPS2
    code.particles.add_particles(stars)
    e0 = code.kinetic_energy + code.potential_energy
    t0 = time.time()
    code.evolve_model(TEND | nbody_system.time)
    wall = time.time() - t0
    e1 = code.kinetic_energy + code.potential_energy
    pos = code.particles.position.value_in(nbody_system.length)
    code.stop()
    de = abs((e1 - e0) / e0)
    print(f"RESULT {client} {'library' if on_library else 'cpu'} {N} {de:.3e} {wall:.3f}", file=sys.stderr,
          flush=True)
    return de, wall, pos


n = int(os.environ.get("GP_TAP_FIRST", "1"))
fail = 0


def tap(good, what):
    global n, fail
    print(f"{'ok' if good else 'not ok'} {n} - {what}", flush=True)
    n += 1
    fail |= not good


for client in CLIENTS:
    try:
        de_c, wall_c, pos_c = run(client, False)
        de_l, wall_l, pos_l = run(client, True)
    except Exception as exc:  # a worker that does not start or dies
        tap(False, f"{client}: both runs finish ({type(exc).__name__}: {exc})")
        continue
    tap(True, f"{client}: both runs finish (N = {N}, t = {TEND})")
    ratio = de_l / de_c if de_c > 0 else float("inf")
    tap((de_l < 1e-12 and de_c < 1e-12) or 0.5 <= ratio <= 2.0,
        f"{client}: |dE/E| on the library {de_l:.3e} within 2x of the CPU mode's {de_c:.3e}")
    dx = float(np.abs(pos_l - pos_c).max())
    tap(dx < MAXDX, f"{client}: positions agree to {dx:.2e} (< {MAXDX:g})")
    print(f"# {client}: wall {wall_l:.2f} s on the library, {wall_c:.2f} s in its CPU mode", flush=True)
sys.exit(fail)
