#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""plot.py -- error against time for sweep results (like GOTHIC's figure 3).

  bench/plot.py bench/results/cpu-tree/raw/plummer-100k-1thread.csv [--time cpu|wall] [--out file.png]

One line per (mac, order), one point per accuracy setting (joined in the
order of theta or delta_acc); left panel median
relative acceleration error, right panel 99th percentile, both against the
time per force evaluation (tree build included). Writes a PNG next to the CSV.
"""
import argparse, csv, os
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

def params(s):
    return dict(kv.split("=", 1) for kv in s.split(";") if "=" in kv)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--time", choices=["cpu", "wall", "interactions"], default="cpu",
                    help="x axis: process CPU seconds, wall seconds, or interactions per particle")
    ap.add_argument("--out")
    ap.add_argument("--title")
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.csv)))
    series = {}
    for r in rows:
        p = params(r["params"])
        key = (p.get("mac", "bmax"), p.get("order", "quadrupole"), p.get("precision", "mixed"))
        acc = float(r["acc_median"])
        if acc != acc:   # NaN: no reference
            continue
        if a.time == "interactions":
            t = float(r["pp_per_particle"]) + float(r["pc_per_particle"])
        else:
            t = float(r["cpu_median"] if a.time == "cpu" else r["t_median"])
        knob = p.get("delta_acc") if key[0] == "acceleration" else p.get("theta", "0.5")
        series.setdefault(key, []).append((float(knob), t, acc, float(r["acc_p99"])))
    fig, axes = plt.subplots(1, 2, figsize=(12, 5), sharex=True)
    styles = {"bh": "o", "bmax": "s", "multipole": "^", "acceleration": "D"}
    for key in sorted(series):
        pts = sorted(series[key])
        mac, order, prec = key
        label = f"{mac}, {order}" + ("" if prec == "mixed" else f", {prec}")
        ls = "-" if order == "quadrupole" else "--"
        for ax, col in zip(axes, (1, 2)):
            ax.plot([q[1] for q in pts], [q[col + 1] for q in pts], ls, marker=styles.get(mac, "x"),
                    label=label)
    for ax, what in zip(axes, ("median", "99th percentile")):
        ax.set_xscale("log"); ax.set_yscale("log")
        if a.time == "interactions":
            ax.set_xlabel("interactions per particle (particle-particle + particle-cell)")
        else:
            ax.set_xlabel(("process CPU" if a.time == "cpu" else "wall-clock") + " seconds per force evaluation (build included)")
        ax.set_ylabel(f"{what} relative acceleration error")
        ax.grid(True, which="both", alpha=0.3)
    r0 = rows[0]
    axes[0].set_title(a.title or f"{r0['plugin']}, {r0['model']}, N = {r0['n']}, {r0['threads']} thread(s)")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    out = a.out or os.path.splitext(a.csv)[0] + ("-interactions.png" if a.time == "interactions" else ".png")
    fig.savefig(out, dpi=110)
    print(out)

if __name__ == "__main__":
    main()
