# SPDX-License-Identifier: Apache-2.0
"""abi13-even-step.py — what ABI 1.3's even pair step costs beside 1.2's
pair_step: one-thread CPU seconds of compute_forces_ex with acc alone, +
pair_step, + pair_step_even, + both, on cpu-direct (N = 4096) and cpu-tree
(N = 16384), best of 3 (bench/results/abi-outputs/raw/abi13.md).
Run from the repository root after `make`: python3 bench/abi13-even-step.py
"""
import sys, time, numpy as np
sys.path.insert(0, 'python')
import gravplug as G
rng = np.random.default_rng(1)
def plummer(n):
    r = 1/np.sqrt(rng.uniform(0.01, 1, n)**(-2/3) - 1)
    d = rng.normal(size=(n, 3)); d /= np.linalg.norm(d, axis=1)[:, None]
    return r[:, None] * d
for plug, n in (("cpu-direct", 4096), ("cpu-tree", 16384)):
    pos = plummer(n); vel = rng.normal(size=(n, 3)) * 0.3; mass = np.full(n, 1.0 / n)
    s = G.Solver(plug, eps=0.001, threads=1)
    s.set_particles(pos, mass); s.set_state(pos, vel, np.zeros((n, 3)), np.zeros(n))
    def t(**kw):
        best = 1e9
        for _ in range(3):
            c0 = time.process_time(); o = s.compute_forces_ex(**kw); best = min(best, time.process_time() - c0)
        return best, o
    a, _ = t()
    b, o1 = t(pair_step=True)
    c, o2 = t(pair_step_even=True)
    d, o3 = t(pair_step=True, pair_step_even=True)
    print(f"{plug} N={n} 1 thread CPU s: acc {a:.3f}  +pair_step {b:.3f}  +pair_step_even {c:.3f}  +both {d:.3f}  "
          f"even<=step {bool(np.all(o3.pair_step_even <= o3.pair_step))}")
    s.close()
