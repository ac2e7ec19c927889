#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How fast AMUSE talks to Gravplug, against BHTree, in one run.

    PATH=$VENV/bin:$PATH PYTHONPATH=python $VENV/bin/python bench/amuse-bench.py [--quick]

($VENV: the venv of .ci/install-amuse, with amuse-bhtree and amuse-ph4.)
Measures, alternating the two codes so both see the same machine load:
  start      constructing the code (worker start) and stop()
  read-back  copying N particles' state (mass, position, velocity, radius)
             out of the code through a channel (made once, outside the
             timing), N = 1e3, 1e4, 1e5; and a full channel.copy() (every
             attribute the code's set has: Gravplug's ax, ay, az and
             potential_in_code cost one field evaluation per state)
  field      one get_gravity_at_point call on 1 and on 1000 points, the
             field of 2000 particles
  bridge     a 200-star ph4 cluster orbiting in a 2000-body field code,
             coupled by amuse.couple.bridge (the field is kicked by nothing
             and not evolved): the whole run, and the field code's own part
             of it (its get_gravity_at_point calls, timed around each);
             the rest is ph4's and AMUSE's, the same code for both
Prints medians as a Markdown table, with uptime before and after.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from amuse.community.bhtree.interface import BHTree  # noqa: E402
from amuse.couple import bridge  # noqa: E402
from amuse.ic.plummer import new_plummer_model  # noqa: E402
from amuse.support.literature import TrackLiteratureReferences  # noqa: E402
from amuse.units import nbody_system as nb  # noqa: E402

from gravplug.amuse import Gravplug  # noqa: E402

STATE = ["mass", "x", "y", "z", "vx", "vy", "vz", "radius"]


def codes():
    return {"Gravplug cpu-tree": lambda: Gravplug(solver="cpu-tree"), "BHTree": BHTree}


def timed(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def median_of(fs, repeats):
    """{name: median seconds}, the names run in turn within each repeat."""
    out = {k: [] for k in fs}
    for _ in range(repeats):
        for k, f in fs.items():
            out[k].append(f())
    return {k: statistics.median(v) for k, v in out.items()}


def bench_start(repeats):
    def one(new):
        def run():
            t0 = time.perf_counter()
            c = new()
            dt = time.perf_counter() - t0
            c.stop()
            return dt
        return run
    return median_of({k: one(v) for k, v in codes().items()}, repeats)


def bench_readback(n, repeats):
    np.random.seed(1)
    stars = new_plummer_model(n)
    stars.radius = 0 | nb.length
    made = {}
    for k, new in codes().items():
        c = new()
        c.parameters.epsilon_squared = 0.01 | nb.length ** 2
        c.parameters.timestep = 1 / 256. | nb.time
        c.particles.add_particles(stars)
        c.evolve_model(1 / 256. | nb.time)          # the state comes from a run
        made[k] = (c, c.particles.new_channel_to(stars.copy()))   # made once, as a script does
    state = median_of({k: (lambda ch=ch: timed(lambda: ch.copy_attributes(STATE)))
                       for k, (c, ch) in made.items()}, repeats)
    full = median_of({k: (lambda ch=ch: timed(ch.copy)) for k, (c, ch) in made.items()}, repeats)
    for c, _ in made.values():
        c.stop()
    return state, full


def bench_field(repeats):
    np.random.seed(2)
    stars = new_plummer_model(2000)
    pts = new_plummer_model(1000)
    made = {}
    for k, new in codes().items():
        c = new()
        c.parameters.epsilon_squared = 0.01 | nb.length ** 2
        c.particles.add_particles(stars)
        c.get_gravity_at_point(0 | nb.length, 0 | nb.length, 0 | nb.length, 0 | nb.length)
        made[k] = c
    eps = 0.01 | nb.length
    one = median_of({k: (lambda c=c: timed(lambda: c.get_gravity_at_point(
        eps, 0.1 | nb.length, 0.2 | nb.length, 0.3 | nb.length))) for k, c in made.items()}, repeats)
    many = median_of({k: (lambda c=c: timed(lambda: c.get_gravity_at_point(
        eps * np.ones(1000), pts.x, pts.y, pts.z))) for k, c in made.items()}, repeats)
    for c in made.values():
        c.stop()
    return one, many


def bench_bridge(steps, repeats):
    from amuse.community.ph4.interface import ph4

    def run(new_field):
        np.random.seed(4)
        field_stars = new_plummer_model(2000)
        cluster_stars = new_plummer_model(200)
        cluster_stars.mass *= 0.01
        cluster_stars.position = cluster_stars.position * 0.05 + ([1.5, 0, 0] | nb.length)
        cluster_stars.velocity = cluster_stars.velocity * 0.2 ** 0.5 + ([0, 0.5, 0] | nb.speed)
        field = new_field()
        field.parameters.epsilon_squared = 0.05 ** 2 | nb.length ** 2
        field.particles.add_particles(field_stars)
        in_field = [0.0]
        field_call = field.get_gravity_at_point

        def timed_field(*args, **kwargs):
            t = time.perf_counter()
            out = field_call(*args, **kwargs)
            in_field[0] += time.perf_counter() - t
            return out
        field.get_gravity_at_point = timed_field
        cluster = ph4()
        cluster.parameters.epsilon_squared = 0.005 ** 2 | nb.length ** 2
        cluster.particles.add_particles(cluster_stars)
        b = bridge.Bridge(timestep=1 / 64. | nb.time)
        b.add_system(cluster, (field,))
        t0 = time.perf_counter()
        b.evolve_model(steps / 64. | nb.time)
        dt = time.perf_counter() - t0
        cluster.stop()
        field.stop()
        return dt, in_field[0]
    runs = {k: [] for k in codes()}
    for _ in range(repeats):
        for k, new in codes().items():
            runs[k].append(run(new))
    whole = {k: statistics.median(r[0] for r in v) for k, v in runs.items()}
    field = {k: statistics.median(r[1] for r in v) for k, v in runs.items()}
    return whole, field


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main():
    TrackLiteratureReferences.suppress_output()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats, N up to 1e4")
    args = ap.parse_args()
    reps = 3 if args.quick else 5
    print(f"# {uptime()}")
    print(f"# python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    rows = []
    s = bench_start(reps)
    rows.append(("worker start (constructor)", s))
    for n in (1000, 10000) + (() if args.quick else (100000,)):
        state, full = bench_readback(n, reps)
        rows.append((f"read-back N={n:,}: mass, position, velocity, radius", state))
        rows.append((f"read-back N={n:,}: channel.copy() (all attributes)", full))
    one, many = bench_field(4 * reps)
    rows.append(("get_gravity_at_point, 1 point (field of 2000)", one))
    rows.append(("get_gravity_at_point, 1000 points (field of 2000)", many))
    steps = 16 if args.quick else 64
    br, br_field = bench_bridge(steps, max(1, reps // 2))
    rows.append((f"bridge: 200-star ph4 cluster in a 2000-body field, {steps} steps", br))
    rows.append((f"bridge: of that, the field code's {steps + 1} get_gravity_at_point calls", br_field))
    names = list(codes())
    print("| what | " + " | ".join(names) + " | ratio |")
    print("|---|" + "---:|" * (len(names) + 1))
    for what, r in rows:
        cells = " | ".join(f"{r[k] * 1e3:.1f} ms" if r[k] < 1 else f"{r[k]:.3f} s" for k in names)
        print(f"| {what} | {cells} | {r[names[0]] / r[names[1]]:.2f} |")
    print(f"# {uptime()}")


if __name__ == "__main__":
    main()
