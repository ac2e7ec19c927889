#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""table.py -- sweep results as a markdown table (bench/results/*/README.md).

  bench/table.py bench/results/cpu-tree/raw/plummer-100k-1thread.csv [--sort time]
"""
import argparse, csv

def params(s):
    return dict(kv.split("=", 1) for kv in s.split(";") if "=" in kv)

def nakasato(rows):
    groups = {}
    for r in rows:
        p = params(r["params"])
        key = (p.get("order", "quadrupole"), p.get("precision", "mixed"))
        groups.setdefault(key, {})[(float(p["theta"]), int(r["n"]))] = r
    for key, cells in groups.items():
        ns = sorted({n for _, n in cells})
        thetas = sorted({t for t, _ in cells})
        print(f"\n{key[0]}, {key[1]} precision: mean relative acceleration error "
              f"(in brackets: interactions per particle)\n")
        print("| theta | " + " | ".join(f"N={n // 1000}K" for n in ns) + " |")
        print("|---|" + "---|" * len(ns))
        for t in thetas:
            cols = []
            for n in ns:
                r = cells.get((t, n))
                cols.append("-" if r is None else
                            f"{float(r['acc_mean']):.2e} ({float(r['pp_per_particle']) + float(r['pc_per_particle']):.0f})")
            print(f"| {t} | " + " | ".join(cols) + " |")
        t5 = [cells[(0.5, n)] for n in ns if (0.5, n) in cells]
        if t5:
            print(f"\nmean relative potential error at theta 0.5: " +
                  ", ".join(f"{float(r['pot_mean']):.2e} (N={int(r['n']) // 1000}K)" for r in t5))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--nakasato", action="store_true",
                    help="theta x N table of the mean relative error (Nakasato 2012 tables 6-7)")
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.csv)))
    if a.nakasato:
        nakasato(rows)
        return
    print("| mac | order | precision | theta / delta_acc | wall s | CPU s | build s | pp+pc per particle | acc median | acc 99% | acc max | acc mean | pot median | pot 99% |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    def key(r):
        p = params(r["params"])
        return (p.get("mac", ""), p.get("order", "quadrupole"), p.get("precision", "mixed"),
                float(p.get("delta_acc", p.get("theta", "0.5"))))
    for r in sorted(rows, key=key):
        p = params(r["params"])
        knob = p.get("delta_acc") if p.get("mac") == "acceleration" else p.get("theta", "0.5")
        inter = float(r["pp_per_particle"]) + float(r["pc_per_particle"])
        print(f"| {p.get('mac', '(default)')} | {p.get('order', 'quadrupole')} | {p.get('precision', 'mixed')} | {knob} "
              f"| {float(r['t_median']):.3f} | {float(r['cpu_median']):.3f} | {float(r['t_build']):.3f} | {inter:.0f} "
              f"| {float(r['acc_median']):.2e} | {float(r['acc_p99']):.2e} | {float(r['acc_max']):.2e} "
              f"| {float(r['acc_mean']):.2e} | {float(r['pot_median']):.2e} | {float(r['pot_p99']):.2e} |")

if __name__ == "__main__":
    main()
