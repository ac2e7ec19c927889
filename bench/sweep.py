#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""sweep.py -- run gpbench over a grid of settings and collect its RESULT lines.

  bench/sweep.py --out bench/results/cpu-tree/raw/plummer-100k.csv --model plummer --n 100000 \
      --set eps=0.01 --grid mac=bh,bmax --grid theta=0.5,0.7,0.9 [--grid order=monopole,quadrupole]
      [--repeats 5] [--sample 2000] [--threads 1] [--plugin cpu-tree]

Every combination of the --grid values is run (the acceleration MAC takes
delta_acc values with --grid-acc delta_acc=...). The CSV has one row per run
with the columns of gpbench's RESULT line; plot.py draws error against time.
"""
import argparse, csv, itertools, os, subprocess, sys

COLUMNS = ["tag", "plugin", "model", "n", "params", "threads", "t_median", "t_build",
           "t_moments", "t_walk", "pp_per_particle", "pc_per_particle",
           "acc_median", "acc_p99", "acc_max", "acc_mean", "pot_median", "pot_p99",
           "pot_max", "pot_mean", "n_active", "t_active", "cpu_median"]

def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--plugin", default="cpu-tree")
    ap.add_argument("--model", default="plummer")
    ap.add_argument("--n", default="100000")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--ic", action="append", default=[], help="model option name=value")
    ap.add_argument("--grid", action="append", default=[],
                    help="name=v1,v2,... (for the bh/bmax/multipole MACs)")
    ap.add_argument("--grid-acc", action="append", default=[],
                    help="name=v1,v2,... used instead of theta when mac=acceleration")
    ap.add_argument("--repeats", default="5")
    ap.add_argument("--sample", default="2000")
    ap.add_argument("--threads", default="1")
    ap.add_argument("--bench", default=os.path.join(here, "..", "build", "bench", "gpbench"))
    a = ap.parse_args()

    def expand(specs):
        names, values = [], []
        for g in specs:
            k, v = g.split("=", 1)
            names.append(k)
            values.append(v.split(","))
        return [dict(zip(names, combo)) for combo in itertools.product(*values)]

    runs = []
    for combo in expand(a.grid):
        if combo.get("mac") == "acceleration" and a.grid_acc:
            base = {k: v for k, v in combo.items() if k != "theta"}
            for extra in expand(a.grid_acc):
                c = dict(base); c.update(extra)
                if c not in runs: runs.append(c)
        elif combo not in runs:
            runs.append(combo)

    new = not os.path.exists(a.out)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS=a.threads)
    with open(a.out, "a", newline="") as f:
        w = csv.writer(f)
        if new: w.writerow(COLUMNS)
        for combo in runs:
            cmd = [a.bench, "--plugin", a.plugin, "--model", a.model, "--n", a.n,
                   "--repeats", a.repeats, "--sample", a.sample, "--csv"]
            for s in a.set: cmd += ["--set", s]
            for s in a.ic: cmd += ["--ic", s]
            for k, v in combo.items(): cmd += ["--set", f"{k}={v}"]
            print(" ".join(cmd), file=sys.stderr, flush=True)
            out = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if out.returncode != 0:
                print(out.stderr, file=sys.stderr)
                continue
            for line in out.stdout.splitlines():
                if line.startswith("RESULT,"):
                    row = line.split(",")
                    w.writerow(row)
                    f.flush()
                    print("   t %s s (cpu %s)  acc median %s  p99 %s" % (row[6], row[22], row[12], row[13]),
                          file=sys.stderr, flush=True)

if __name__ == "__main__":
    main()
