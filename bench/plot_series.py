#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""plot_series.py -- signed energy error against time, one line per run.

  bench/plot_series.py SERIES.tsv[=TAG] [...] --out drift.png [--title T]

Reads the "spec t dE" lines that bench/hold-vs-shared writes with --series
(tab-separated: run spec, time, signed relative energy error) and draws
dE(t) for every run, so a steady drift and a bounded wander are told apart
at a glance. Runs are drawn in the order they first appear; FILE=TAG
appends " [TAG]" to the labels of that file's runs (the same spec run on
two solvers, say).
"""
import argparse
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt


def read(paths):
    runs = {}
    for arg in paths:
        path, _, tag = arg.partition("=")
        with open(path) as f:
            for line in f:
                if not line.strip() or line.startswith("#"):
                    continue
                spec, t, de = line.split("\t")[:3]
                if tag:
                    spec += " [%s]" % tag
                runs.setdefault(spec, []).append((float(t), float(de)))
    return runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("series", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    runs = read(a.series)
    if not runs:
        raise SystemExit("plot_series.py: no 'spec t dE' lines in %s" % ", ".join(a.series))
    fig, ax = plt.subplots(figsize=(10, 4.5))
    for spec, pts in runs.items():
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], label=spec, lw=1.2)
    ax.axhline(0.0, color="grey", lw=0.6)
    ax.set_xlabel("time (N-body units)")
    ax.set_ylabel("(E(t) - E(0)) / |E(0)|")
    ax.set_yscale("symlog", linthresh=1e-5)
    ax.set_title(a.title)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)


if __name__ == "__main__":
    main()
