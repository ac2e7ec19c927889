#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A star cluster orbiting in a galaxy: two gravity codes coupled by a bridge.

The galaxy (halo + bulge + disk, gravplug.ic "galaxy" model) lives in one
gravplug.Gravity object on the cpu-tree plugin; the cluster (a Plummer
sphere) lives in a second one on cpu-direct. They are coupled as AMUSE's
bridge couples codes (Fujii et al. 2007), kick-drift-kick:

    kick:  cluster velocities += dt/2 * galaxy.get_gravity_at_point(cluster)
    drift: cluster.evolve_model(t + dt)    (its own internal dynamics)
    kick:  again, dt/2

By default the galaxy is a fixed external field (it is only asked for its
gravity at the cluster's stars); --live-galaxy evolves it as well and kicks
it with the cluster's field (the full, two-way bridge).

It prints what one would check: the cluster's orbit (centre-of-mass radius
and angle), its internal energy (kinetic in its own frame + its own
potential), the conserved total of the cluster in the galaxy's field, and
the fraction of stars still bound; and it writes a PNG with the orbit, the
cluster's final shape and the energies.

    python3 examples/python/bridge_cluster_galaxy.py [--orbits 1] [--output DIR] [--png bridge.png]

Like the config examples, it writes into out/examples/bridge/ (relative to
the current directory; --output changes it), never into the current
directory itself.
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

try:
    import gravplug
except ImportError:      # running from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
    import gravplug
from gravplug import ic


def cluster_diagnostics(cluster, galaxy):
    """Internal energy, energy in the galaxy field, bound fraction, com."""
    pos, vel, m = cluster.positions, cluster.velocities, cluster.masses
    M = m.sum()
    com, vcom = pos.T @ m / M, vel.T @ m / M
    v_rel = vel - vcom
    phi_self = cluster.potentials                       # self term removed
    e_kin_int = 0.5 * (m * (v_rel ** 2).sum(1)).sum()
    e_int = e_kin_int + 0.5 * (m * phi_self).sum()
    phi_gal = galaxy.get_potential_at_point(0.0, pos[:, 0], pos[:, 1], pos[:, 2])
    e_tot = (0.5 * (m * (vel ** 2).sum(1)).sum() + 0.5 * (m * phi_self).sum()
             + (m * phi_gal).sum())
    bound = (0.5 * (v_rel ** 2).sum(1) + phi_self) < 0  # bound to the cluster
    # The cluster's position: centre of mass of the stars still bound (the
    # escapers' tidal tails would drag the plain centre of mass away).
    core = pos[bound].T @ m[bound] / m[bound].sum() if bound.any() else com
    return dict(com=core, vcom=vcom, e_int=e_int, e_tot=e_tot,
                bound=m[bound].sum() / M)


def kick(cluster, galaxy, dt):
    pos = cluster.positions
    ax, ay, az = galaxy.get_gravity_at_point(0.0, pos[:, 0], pos[:, 1], pos[:, 2])
    cluster.set_state(vel=cluster.velocities + dt * np.stack([ax, ay, az], axis=1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-galaxy", type=int, default=20000)
    ap.add_argument("--n-cluster", type=int, default=256)
    ap.add_argument("--cluster-mass", type=float, default=1e-3, help="in galaxy units (halo mass 1)")
    ap.add_argument("--cluster-radius", type=float, default=0.04, help="Plummer virial radius")
    ap.add_argument("--r0", type=float, default=2.0, help="initial orbital radius")
    ap.add_argument("--ecc-factor", type=float, default=0.8,
                    help="initial speed / circular speed (1: circular)")
    ap.add_argument("--orbits", type=float, default=1.0, help="how many circular periods")
    ap.add_argument("--steps-per-orbit", type=int, default=256, help="bridge steps per period")
    ap.add_argument("--live-galaxy", action="store_true", help="evolve the galaxy too (two-way)")
    ap.add_argument("--output", default="out/examples/bridge",
                    help="directory for the PNG (created if missing)")
    ap.add_argument("--png", default="bridge_cluster_galaxy.png",
                    help="file name inside --output (or an absolute path)")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    # The galaxy: halo + bulge + disk in halo units (G = 1, rs = 1, M = 1).
    gal = ic.make("galaxy", args.n_galaxy, seed=args.seed)
    galaxy = gravplug.Gravity("cpu-tree", "leapfrog", eps=0.05, theta=0.5, dt=1 / 16)
    galaxy.set_particles(gal.pos, gal.vel, gal.mass)

    # The cluster: a Plummer sphere scaled to (mass, virial radius), on an
    # orbit in the galaxy's plane starting at (r0, 0, 0).
    cl = ic.make("plummer", args.n_cluster, seed=args.seed + 1)
    m_c, r_c = args.cluster_mass, args.cluster_radius
    pos = cl.pos * r_c
    vel = cl.vel * np.sqrt(m_c / r_c)
    ax, _, _ = galaxy.get_gravity_at_point(0.0, [args.r0], [0.0], [0.0])
    v_circ = float(np.sqrt(-ax[0] * args.r0))
    period = 2 * np.pi * args.r0 / v_circ
    pos += [args.r0, 0.0, 0.0]
    vel += [0.0, args.ecc_factor * v_circ, 0.0]
    t_cross = r_c ** 1.5 / np.sqrt(m_c)
    cluster = gravplug.Gravity("cpu-direct", "leapfrog", eps=r_c / 50,
                               dt=t_cross / 64)
    cluster.set_particles(np.ascontiguousarray(pos), np.ascontiguousarray(vel), cl.mass * m_c)

    dt = period / args.steps_per_orbit
    n_steps = int(round(args.orbits * args.steps_per_orbit))
    print(f"# galaxy: {args.n_galaxy} particles on {galaxy.solver_name}; cluster: "
          f"{args.n_cluster} stars, M = {m_c:g}, r_vir = {r_c:g}, on {cluster.solver_name}")
    print(f"# v_circ({args.r0:g}) = {v_circ:.4f}, circular period {period:.3f}, "
          f"cluster crossing time {t_cross:.3f}; bridge dt = {dt:.4f}, "
          f"{'live' if args.live_galaxy else 'static'} galaxy")
    print(f"{'t':>8} {'r_com':>8} {'angle':>7} {'E_int':>12} {'dE_int/E':>9} "
          f"{'dE_tot/E':>9} {'bound':>6}")

    d0 = cluster_diagnostics(cluster, galaxy)
    track = {k: [] for k in ("t", "x", "y", "e_int", "e_tot", "bound")}

    def record(t):
        d = cluster_diagnostics(cluster, galaxy)
        track["t"].append(t)
        track["x"].append(d["com"][0])
        track["y"].append(d["com"][1])
        for k in ("e_int", "e_tot", "bound"):
            track[k].append(d[k])
        return d

    def report(t, d):
        r = np.hypot(*d["com"][:2])
        ang = np.degrees(np.arctan2(d["com"][1], d["com"][0]))
        print(f"{t:8.3f} {r:8.4f} {ang:7.1f} {d['e_int']:12.5e} "
              f"{(d['e_int'] - d0['e_int']) / abs(d0['e_int']):+9.1e} "
              f"{(d['e_tot'] - d0['e_tot']) / abs(d0['e_tot']):+9.1e} {d['bound']:6.3f}")

    report(0.0, record(0.0))
    wall = time.perf_counter()
    t = 0.0
    sample_every = max(1, n_steps // 50)          # 50 points for the plot
    report_every = max(1, n_steps // 10)          # 10 lines of output

    def kick_all(h):
        kick(cluster, galaxy, h)
        if args.live_galaxy:
            kick(galaxy, cluster, h)

    # Kick-drift-kick; the closing half kick of one step and the opening half
    # kick of the next are merged into one full kick, except where the state
    # is sampled (velocities must be synchronised there).
    kick_all(dt / 2)
    for step in range(1, n_steps + 1):
        cluster.evolve_model(t + dt)
        if args.live_galaxy:
            galaxy.evolve_model(t + dt)
        t += dt
        if step % sample_every == 0 or step == n_steps:
            kick_all(dt / 2)
            d = record(t)
            if step % report_every == 0 or step == n_steps:
                report(t, d)
            if step < n_steps:
                kick_all(dt / 2)
        else:
            kick_all(dt)
    wall = time.perf_counter() - wall
    c = cluster.counters()
    print(f"# {n_steps} bridge steps in {wall:.1f} s wall; cluster: {c['steps']} leapfrog "
          f"steps; galaxy field calls: {galaxy.solver_stats().field_calls}")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("# matplotlib not installed: no PNG")
        return
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.8))
    gp = galaxy.positions
    sel = np.abs(gp[:, 2]) < 0.5
    ax[0].scatter(gp[sel, 0], gp[sel, 1], s=0.3, c="0.7", lw=0)
    ax[0].plot(track["x"], track["y"], "C3-", lw=1.2, label="cluster (bound stars' centre)")
    cp = cluster.positions
    ax[0].scatter(cp[:, 0], cp[:, 1], s=1.5, c="C0", lw=0, label="cluster stars (end)")
    lim = 1.6 * args.r0
    ax[0].set(xlim=(-lim, lim), ylim=(-lim, lim), aspect="equal", xlabel="x", ylabel="y",
              title="orbit in the galaxy (|z| < 0.5)")
    ax[0].legend(loc="lower left", fontsize=8)
    com = np.array([track["x"][-1], track["y"][-1]])
    w = 6 * r_c
    ax[1].scatter(cp[:, 0] - com[0], cp[:, 1] - com[1], s=3, c="C0", lw=0)
    ax[1].set(xlim=(-w, w), ylim=(-w, w), aspect="equal", xlabel="x - x_com",
              ylabel="y - y_com", title=f"cluster at t = {t:.2f}, around its bound centre")
    tt = np.array(track["t"]) / period
    e_int, e_tot = np.array(track["e_int"]), np.array(track["e_tot"])
    ax[2].plot(tt, (e_int - e_int[0]) / abs(e_int[0]), "C0", label="internal energy, all stars")
    ax[2].plot(tt, track["bound"], "C2", label="bound mass fraction")
    ax[2].set(xlabel="t / circular period", ylabel="relative change / fraction",
              title="cluster: tidal heating and conservation")
    right = ax[2].twinx()
    right.plot(tt, (e_tot - e_tot[0]) / abs(e_tot[0]), "C3", label="total energy in galaxy field")
    right.set_ylabel("relative change of the total (bridge error)", color="C3")
    lines = ax[2].get_lines() + right.get_lines()
    ax[2].legend(lines, [ln.get_label() for ln in lines], fontsize=8, loc="upper left")
    fig.tight_layout()
    png = Path(args.output) / args.png
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)
    print(f"# wrote {png}")
    cluster.close()
    galaxy.close()


if __name__ == "__main__":
    main()
