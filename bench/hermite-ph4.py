#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""hermite-ph4.py — gravplug's `hermite` on cpu-direct beside AMUSE's ph4
(both fourth-order Hermite on block steps) on one Plummer sphere: the same
initial conditions, softening and end time, an eta sweep on each side, and
per run the final and max |dE/E| (each code's own energies, sampled every
--sample, and the series of samples), the wall time of the evolve calls and the particle force
evaluations (gravplug: counter particle_forces; ph4: its total_steps, one
force and jerk evaluation per particle step).

Run with the AMUSE venv's python (.ci/install-amuse, with amuse-ph4):

    GRAVPLUG_BUILD=build PYTHONPATH=python $VENV/bin/python bench/hermite-ph4.py \\
        --n 1024 --eps 0.01 --t 2 --eta-gp 0.01,0.02,0.04 --eta-ph4 0.07,0.14,0.28

The runs alternate between the two codes so that both see the same load.
Prints one TSV row per run, and `uptime` before and after.
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np


def plummer(n, seed):
    from amuse.ic.plummer import new_plummer_model
    from amuse.units import nbody_system
    np.random.seed(seed)
    p = new_plummer_model(n)
    c = np.ascontiguousarray
    return (c(p.position.value_in(nbody_system.length)), c(p.velocity.value_in(nbody_system.speed)),
            c(p.mass.value_in(nbody_system.mass)))


def samples(t_end, sample):
    k, out = 1, []
    while k * sample <= t_end * (1 + 1e-12):
        out.append(k * sample)
        k += 1
    return out


def run_gravplug(ic, eta, eps, dt, t_end, sample, series):
    from gravplug import Gravity
    x, v, m = ic
    g = Gravity("cpu-direct", "hermite", solver_params={"eps": eps},
                integrator_params={"eta": eta, "dt": dt})
    g.set_particles(x, v, m)
    e0 = g.total_energy
    emax = eend = wall = 0.0
    for t in samples(t_end, sample):
        t0 = time.time()
        g.evolve_model(t)
        wall += time.time() - t0
        eend = abs((g.total_energy - e0) / e0)
        emax = max(emax, eend)
        series.append(eend)
    c = g.counters()
    g.close()
    return emax, eend, c["particle_forces"], c["steps"], wall


def run_ph4(ic, eta, eps, t_end, sample, series):
    from amuse.community.ph4.interface import ph4
    from amuse.datamodel import Particles
    from amuse.units import nbody_system
    x, v, m = ic
    code = ph4(channel_type="sockets", mpiexec=os.path.join(os.path.dirname(sys.executable), "mpiexec"))
    code.parameters.epsilon_squared = eps * eps | nbody_system.length ** 2
    code.parameters.timestep_parameter = eta
    code.parameters.manage_encounters = 0     # the plain Hermite integrator
    p = Particles(len(m))
    p.position = x | nbody_system.length
    p.velocity = v | nbody_system.speed
    p.mass = m | nbody_system.mass
    code.particles.add_particles(p)
    e0 = (code.kinetic_energy + code.potential_energy).value_in(nbody_system.energy)
    emax = eend = wall = 0.0
    for t in samples(t_end, sample):
        t0 = time.time()
        code.evolve_model(t | nbody_system.time)
        wall += time.time() - t0
        e = (code.kinetic_energy + code.potential_energy).value_in(nbody_system.energy)
        eend = abs((e - e0) / e0)
        emax = max(emax, eend)
        series.append(eend)
    steps, blocks = int(code.parameters.total_steps), int(code.parameters.block_steps)
    code.stop()
    return emax, eend, steps, blocks, wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--eps", type=float, default=0.01)
    ap.add_argument("--t", type=float, default=2.0)
    ap.add_argument("--dt", type=float, default=0.125, help="gravplug hermite's dt_max")
    ap.add_argument("--sample", type=float, default=0.5)
    ap.add_argument("--eta-gp", default="0.01,0.02,0.04")
    ap.add_argument("--eta-ph4", default="0.07,0.14,0.28")
    a = ap.parse_args()
    ic = plummer(a.n, a.seed)
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print("# hermite-ph4: Plummer n = %d (AMUSE new_plummer_model, numpy seed %d), eps = %g, t = 0 .. %g, "
          "|dE/E| sampled every %g; OMP_NUM_THREADS=%s" % (a.n, a.seed, a.eps, a.t, a.sample,
                                                          os.environ.get("OMP_NUM_THREADS", "(unset)")))
    print("# uptime before: " + up)
    print("run\tdE_max\tdE_end\tparticle_forces\tsteps\twall_s\tdE_series")
    gp = [e for e in a.eta_gp.split(",") if e]
    ph = [e for e in a.eta_ph4.split(",") if e]
    for i in range(max(len(gp), len(ph))):
        if i < len(gp):
            ser = []
            emax, eend, pf, st, wall = run_gravplug(ic, float(gp[i]), a.eps, a.dt, a.t, a.sample, ser)
            print("gravplug-hermite:eta=%s\t%.4e\t%.4e\t%d\t%d\t%.3f\t%s" % (gp[i], emax, eend, pf, st, wall,
                  ",".join("%.2e" % e for e in ser)))
            sys.stdout.flush()
        if i < len(ph):
            ser = []
            emax, eend, pf, st, wall = run_ph4(ic, float(ph[i]), a.eps, a.t, a.sample, ser)
            print("ph4:eta=%s\t%.4e\t%.4e\t%d\t%d\t%.3f\t%s" % (ph[i], emax, eend, pf, st, wall,
                  ",".join("%.2e" % e for e in ser)))
            sys.stdout.flush()
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print("# uptime after: " + up)


if __name__ == "__main__":
    main()
