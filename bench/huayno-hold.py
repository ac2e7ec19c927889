# SPDX-License-Identifier: Apache-2.0
"""huayno-hold.py — AMUSE Huayno's HOLD on the N = 1000 Plummer problem
that bench/hold-vs-shared runs with gravplug's hold (bench/results/hold/raw/hold.md).

Run with the AMUSE venv's python (.ci/install-amuse, then
`pip install --no-build-isolation amuse-huayno==2024.6.0`):

    python bench/huayno-hold.py --write plummer1000.txt      # the shared ICs
    python bench/huayno-hold.py --ic plummer1000.txt --eps 0.01 --t 10 \
        --dt 0.125 --eta 0.03,0.02 --inttype HOLD_KDK,HOLD_DKD

Per run one TSV row: max and end |dE/E| over samples every --sample
(Huayno's own direct-summation energies), Huayno's evolve statistics summed
over the evolve_model calls (ttot: pairwise time-step evaluations, ktot: pairwise kick interactions,
dtot: particle drifts; tstot, kstot, dstot: the calls), wall seconds in
evolve_model and the worker's CPU seconds there (cpu_s: the user + system
time of this script's descendant processes, read from /proc around each
evolve_model; on a shared machine the fairer figure, as hold-vs-shared's).
"""
import argparse
import os
import sys
import time

import numpy as np


def write_ic(path, n, seed):
    from amuse.ic.plummer import new_plummer_model
    from amuse.units import nbody_system
    np.random.seed(seed)
    p = new_plummer_model(n)
    x = p.position.value_in(nbody_system.length)
    v = p.velocity.value_in(nbody_system.speed)
    m = p.mass.value_in(nbody_system.mass)
    with open(path, "w") as f:
        f.write("# AMUSE new_plummer_model(%d), numpy seed %d, N-body units\n" % (n, seed))
        for i in range(n):
            f.write("%.17g %.17g %.17g %.17g %.17g %.17g %.17g\n" % (*x[i], *v[i], m[i]))


def descendants_cpu():
    """User + system CPU seconds of this process's descendants (the Huayno
    worker and its launcher), from /proc; 0 where /proc is not there."""
    tick = os.sysconf("SC_CLK_TCK")
    parent, cpu = {}, {}
    for d in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        fields = st[st.rindex(")") + 2:].split()   # after "pid (comm) "
        parent[int(d)] = int(fields[1])
        cpu[int(d)] = (int(fields[11]) + int(fields[12])) / tick
    me, total = os.getpid(), 0.0
    for pid in cpu:
        p = pid
        while p in parent and p != me and p > 1:
            p = parent[p]
        if p == me and pid != me:
            total += cpu[pid]
    return total


def read_ic(path):
    a = np.loadtxt(path)
    return a[:, 0:3], a[:, 3:6], a[:, 6]


def run(ic, inttype, eta, eps, dt, t_end, sample):
    from amuse.community.huayno.interface import Huayno
    from amuse.datamodel import Particles
    from amuse.units import nbody_system
    x, v, m = ic
    # the sockets channel with the venv's own (MPICH) mpiexec: a system Open MPI
    # mpiexec cannot start an MPICH worker
    code = Huayno(channel_type="sockets", mpiexec=os.path.join(os.path.dirname(sys.executable), "mpiexec"))
    code.parameters.epsilon_squared = eps * eps | nbody_system.length ** 2
    code.parameters.timestep_parameter = eta
    code.parameters.timestep = dt | nbody_system.time
    code.set_integrator(inttype)
    p = Particles(len(m))
    p.position = x | nbody_system.length
    p.velocity = v | nbody_system.speed
    p.mass = m | nbody_system.mass
    code.particles.add_particles(p)
    e0 = (code.kinetic_energy + code.potential_energy).value_in(nbody_system.energy)
    emax = eend = 0.0
    wall = cpu = 0.0
    stats = [0] * 6   # Huayno resets its statistics at every evolve_model: sum them
    k = 1
    while k * sample <= t_end * (1 + 1e-12):
        c0 = descendants_cpu()
        t0 = time.time()
        code.evolve_model(k * sample | nbody_system.time)
        wall += time.time() - t0
        cpu += descendants_cpu() - c0
        stats = [a + int(b) for a, b in zip(stats, code.get_evolve_statistics()[:6])]
        e = (code.kinetic_energy + code.potential_energy).value_in(nbody_system.energy)
        eend = abs((e - e0) / e0)
        emax = max(emax, eend)
        k += 1
    code.stop()
    return emax, eend, stats, wall, cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--ic")
    ap.add_argument("--eps", type=float, default=0.01)
    ap.add_argument("--t", type=float, default=10.0)
    ap.add_argument("--dt", type=float, default=0.125)
    ap.add_argument("--sample", type=float, default=0.5)
    ap.add_argument("--eta", default="0.03")
    ap.add_argument("--inttype", default="HOLD_KDK")
    a = ap.parse_args()
    if a.write:
        write_ic(a.write, a.n, a.seed)
        return
    ic = read_ic(a.ic)
    print("# huayno-hold: %s n = %d eps = %g dt = %g t = 0 .. %g samples every %g"
          % (a.ic, len(ic[2]), a.eps, a.dt, a.t, a.sample))
    print("run\tdE_max\tdE_end\tttot\tktot\tdtot\ttstot\tkstot\tdstot\twall_s\tcpu_s")
    for it in a.inttype.split(","):
        for eta in a.eta.split(","):
            emax, eend, st, wall, cpu = run(ic, it, float(eta), a.eps, a.dt, a.t, a.sample)
            print("huayno-%s:eta=%s\t%.4e\t%.4e\t%s\t%.2f\t%.2f" % (it, eta, emax, eend,
                  "\t".join(str(x) for x in st), wall, cpu))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
