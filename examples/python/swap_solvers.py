#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Swap gravity solvers at runtime, from one script.

Part 1 — same particles, two plugins: the exact cpu-direct and the
approximate cpu-tree compute forces on the same galaxy-like model; the
script prints the tree's relative force error distribution (median, 90th,
99th percentile, max) against direct summation, and the time of each call,
for a few opening angles.

Part 2 — swap mid-run: one gravplug.Gravity run starts on cpu-direct and
switches to cpu-tree half way (Gravity.set_solver); its final positions are
compared with a run on cpu-direct alone.

    python3 examples/python/swap_solvers.py [--n 16384] [--model galaxy]

Finds libgravplug.so and the plugins from the build tree (run `make`
first) or an installation; see docs/PYTHON.md.
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


def timed(fn, repeat=3):
    """Best wall time of `repeat` calls, and the last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def error_table(acc, ref):
    err = np.linalg.norm(acc - ref, axis=1) / np.linalg.norm(ref, axis=1)
    q = np.percentile(err, [50, 90, 99])
    return q[0], q[1], q[2], err.max()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=16384, help="particles (default 16384)")
    ap.add_argument("--model", default="galaxy", help="ic model (galaxy, plummer, hernquist...)")
    ap.add_argument("--eps", type=float, default=0.01, help="softening (default 0.01)")
    ap.add_argument("--thetas", default="0.3,0.5,0.7,1.0", help="tree opening angles")
    ap.add_argument("--trees", default="cpu-tree,cuda-tree",
                    help="tree plugins to compare (those that fail to start are skipped)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--run-n", type=int, default=2048, help="particles for part 2")
    ap.add_argument("--run-t", type=float, default=0.5, help="end time for part 2")
    args = ap.parse_args()

    print(f"# gravplug {gravplug.__version__}: library {gravplug.where()['library']}")
    plugins = dict(gravplug.list_plugins())
    print(f"# plugins found: {', '.join(plugins)}")
    if "cpu-tree" not in plugins:
        sys.exit("cpu-tree is not built; run `make` first")

    p = ic.make(args.model, args.n, seed=args.seed)
    print(f"# {args.model}, N = {len(p)}, eps = {args.eps}; times are the best of 3 calls")

    # ---- part 1: one set of particles, two plugins ---------------------------
    with gravplug.Solver("cpu-direct", eps=args.eps) as direct:
        direct.set_particles(p.pos, p.mass)
        t_direct, (ref, ref_pot) = timed(direct.forces)
    print(f"\ncpu-direct: {t_direct * 1e3:9.1f} ms per force call "
          f"({len(p) ** 2 / t_direct / 1e9:.2f} G interactions/s)")

    print(f"\n{'solver':<10} {'theta':>5} {'ms/call':>9} {'speedup':>8} "
          f"{'median':>9} {'90%':>9} {'99%':>9} {'max':>9}  interactions/particle")
    for name in args.trees.split(","):
        if name not in plugins:
            print(f"{name:<10} (not built)")
            continue
        for theta in (float(x) for x in args.thetas.split(",")):
            try:
                tree = gravplug.Solver(name, eps=args.eps, theta=theta)
            except gravplug.DeviceError as e:       # a GPU plugin without a GPU
                print(f"{name:<10} skipped: {e.sentence}")
                break
            with tree:
                tree.set_particles(p.pos, p.mass)
                before = tree.stats()
                t_tree, (acc, _) = timed(tree.forces)
                after = tree.stats()
            calls = after.force_calls - before.force_calls
            inter = (after.pp_interactions + after.pc_interactions
                     - before.pp_interactions - before.pc_interactions) / calls / len(p)
            med, p90, p99, mx = error_table(acc, ref)
            print(f"{name:<10} {theta:5.2f} {t_tree * 1e3:9.1f} {t_direct / t_tree:8.1f} "
                  f"{med:9.2e} {p90:9.2e} {p99:9.2e} {mx:9.2e}  {inter:8.0f}")

    # ---- part 2: swap solvers in the middle of a run --------------------------
    q = ic.make(args.model, args.run_n, seed=args.seed + 1)
    runs = {}
    for label, swap in (("cpu-direct only", False), ("direct -> tree at t/2", True)):
        with gravplug.Gravity("cpu-direct", "block-rk2", eps=args.eps, dt=1 / 32, eta=0.2) as g:
            g.set_particles(q.pos, q.vel, q.mass)
            e0 = g.total_energy
            t0 = time.perf_counter()
            g.evolve_model(args.run_t / 2)
            if swap:
                g.set_solver("cpu-tree", eps=args.eps, theta=0.5)
            g.evolve_model(args.run_t)
            wall = time.perf_counter() - t0
            runs[label] = (g.positions, (g.total_energy - e0) / abs(e0), wall,
                           g.solver_name, g.counters())
    print(f"\nrun of N = {args.run_n} to t = {args.run_t} with block-rk2:")
    ref_pos = runs["cpu-direct only"][0]
    for label, (pos, de, wall, name, c) in runs.items():
        dx = np.linalg.norm(pos - ref_pos, axis=1)
        print(f"  {label:<24} ends on {name:<10} dE/E = {de:+.2e}  "
              f"max |x - x_direct| = {dx.max():.2e}  steps {c['steps']}  "
              f"wall {wall:.2f} s")


if __name__ == "__main__":
    main()
