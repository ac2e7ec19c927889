#!/usr/bin/env python3
"""table.py -- sweep results as a markdown table (bench/results/*.md).

  bench/table.py bench/results/plummer-100k-1thread.csv [--sort time]
"""
import argparse, csv

def params(s):
    return dict(kv.split("=", 1) for kv in s.split(";") if "=" in kv)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.csv)))
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
