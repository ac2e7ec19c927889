#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""equal-error.py — cost at equal energy error, from hold-vs-shared and
huayno-hold.py rows (bench/results/hold/raw/).

    python3 bench/equal-error.py FILE... [--at 1e-4,3e-5,1e-5,3e-6,1e-6]

Reads every TSV row of either program (a leading "repN" column is taken as
the repetition), groups the runs by scheme (the spec before ":", "huayno-"
kept) and, per scheme and repetition, interpolates pairs (ours: the
solver's interactions, on cpu-direct active x sources, criterion calls
included; Huayno: ttot + ktot), wall and CPU seconds on log-log between the
two runs whose max |dE/E| brackets each target error. Prints one row per
scheme, target and repetition; a target outside a scheme's runs is left out.
"""
import math
import sys


def rows(path):
    head = None
    for line in open(path):
        if line.startswith("#"):
            continue
        f = line.rstrip("\n").split("\t")
        rep = "rep1"
        if f[0].startswith("rep"):
            rep, f = f[0], f[1:]
        if f[0] == "run":
            head = f
            continue
        if len(f) < 10 or ":" not in f[0]:
            continue
        spec = f[0]
        try:
            if spec.startswith("huayno-"):
                # run dE_max dE_end ttot ktot dtot tstot kstot dstot wall_s cpu_s
                yield rep, spec, float(f[1]), int(f[3]) + int(f[4]), float(f[9]), float(f[10]) if len(f) > 10 else float("nan")
            else:
                # hold-vs-shared: interactions col 7, wall col 10, cpu col 13
                yield rep, spec, float(f[1]), int(f[7]), float(f[10]), float(f[13])
        except (ValueError, IndexError):
            continue


def interp(points, e):
    """points: (err, pairs, wall, cpu) sorted by err; log-log at err e."""
    for a, b in zip(points, points[1:]):
        lo, hi = (a, b) if a[0] <= b[0] else (b, a)
        if lo[0] <= e <= hi[0] and lo[0] > 0:
            f = 0.0 if hi[0] == lo[0] else math.log(e / lo[0]) / math.log(hi[0] / lo[0])
            return [math.exp(math.log(lo[k]) + f * math.log(hi[k] / lo[k])) if lo[k] > 0 and hi[k] > 0 else float("nan")
                    for k in (1, 2, 3)]
    return None


def main():
    at = [1e-4, 3e-5, 1e-5, 3e-6, 1e-6]
    files = []
    args = sys.argv[1:]
    while args:
        a = args.pop(0)
        if a == "--at":
            at = [float(x) for x in args.pop(0).split(",")]
        else:
            files.append(a)
    groups = {}
    for path in files:
        for rep, spec, err, pairs, wall, cpu in rows(path):
            scheme = spec.split(":")[0]
            groups.setdefault((scheme, rep), []).append((err, pairs, wall, cpu))
    print("scheme\trep\tdE\tpairs_M\twall_s\tcpu_s\truns")
    for (scheme, rep), pts in sorted(groups.items()):
        pts.sort()
        for e in at:
            v = interp(pts, e)
            if v:
                print("%s\t%s\t%.0e\t%.1f\t%.2f\t%.2f\t%d" % (scheme, rep, e, v[0] / 1e6, v[1], v[2], len(pts)))


if __name__ == "__main__":
    main()
