#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""block-pays — do block time steps pay? The same model evolved with the
block schemes at several eta and with leapfrog at several dt, each run's
largest |dE/E| and wall time measured by bench/hold-vs-shared (energies
from cpu-direct, outside the timing); leapfrog's wall time and particle
forces interpolated (log-log) to each block run's error. Writes a Markdown
table and a plot.

    python3 bench/block-pays.py [--model galaxy] [--n 8000] [--t 2] [--ic NAME=VALUE,...]
        [--plugin cpu-tree] [--threads 2] [--dt 0.25]
        [--schemes block-rk2,block-kdk] [--etas 0.1,0.2,0.3] [--criterion C]
        [--params NAME=VALUE,...]
        [--leapfrog 5,6,7,8] [--repeats 3] [--sample 0.25]
        [--out bench/results/block-steps/raw/block-pays]

--leapfrog K1,K2,...: leapfrog runs at dt = 2^-K. Each run is repeated
--repeats times (the median wall time is used: this machine is shared).
Writes OUT.md (appended: one section per call, with the machine, its load
and the command) and OUT-NAME.png, NAME = model-n.

Columns: wall_ratio = block wall / leapfrog wall at the same max |dE/E|
(below 1: the block run pays); pf_ratio the same for particle forces;
cost_per_pf = (block wall / block particle forces) / (leapfrog wall /
leapfrog particle forces), the price of one particle force in a block step
against one in a shared step (medians over the leapfrog runs); cpu_ratio
= wall_ratio with the process's CPU seconds instead of wall seconds
(the same with the machine to itself; on a shared machine one thread's
CPU time leaves out the time other tenants held its core). Run it with
OMP_WAIT_POLICY=passive: OpenMP's spinning threads count as CPU time.
"""
import argparse
import datetime
import math
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HVS = ROOT / "build" / "bench" / "hold-vs-shared"


def args_parse():
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("--model", default="galaxy")
    a.add_argument("--ic", default=None,
                   help="the model's options, name=value[,name=value...] (docs/IC.md); "
                        "make run's model is --model galaxy --n 50000 --ic disk_mass=0.1")
    a.add_argument("--n", type=int, default=8000)
    a.add_argument("--t", type=float, default=2.0)
    a.add_argument("--plugin", default="cpu-tree")
    a.add_argument("--threads", default=None)
    a.add_argument("--eps", default="0.01")
    a.add_argument("--dt", default="0.25", help="the block schemes' largest step")
    a.add_argument("--schemes", default="block-rk2,block-kdk")
    a.add_argument("--etas", default="0.1,0.2,0.3")
    a.add_argument("--criterion", default=None, help="the block schemes' time-step criterion")
    a.add_argument("--params", default=None,
                   help="more block-scheme settings, name=value[,name=value...] (e.g. shadow=shift)")
    a.add_argument("--solver", default=None,
                   help="more plugin parameters for every run, name=value[,name=value...] "
                        "(e.g. mac=acceleration,delta_acc=0.004)")
    a.add_argument("--leapfrog", default="5,6,7,8")
    a.add_argument("--repeats", type=int, default=3)
    a.add_argument("--sample", default="0.25")
    a.add_argument("--out", default=str(ROOT / "bench" / "results" / "block-steps" / "raw" / "block-pays"))
    return a.parse_args()


def run_once(o, specs):
    cmd = [str(HVS), "--model", o.model, "--n", str(o.n), "--t", str(o.t), "--plugin", o.plugin,
           "--eps", o.eps, "--sample", o.sample]
    if o.threads:
        cmd += ["--threads", o.threads]
    if o.ic:
        cmd += ["--ic", o.ic]
    if o.solver:
        cmd += ["--solver", o.solver]
    for s in specs:
        cmd += ["--run", s]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return cmd, hvs_rows(out)


def hvs_rows(out):
    """hold-vs-shared's TSV rows by run spec (those printed before its
    summary; a run cut short leaves the ones it finished)."""
    rows, header = {}, None
    for line in (out or "").splitlines():
        if line.startswith("run\t"):
            header = line.split("\t")
            continue
        if line.startswith("# against"):
            break
        if header and line and not line.startswith("#"):
            f = line.split("\t")
            if len(f) == len(header):
                rows[f[0]] = dict(zip(header, f))
    return rows


def interp(x, xs, ys):
    """log-log interpolation of y at x between the bracketing points."""
    pts = sorted(zip(xs, ys))
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1 and x0 > 0 and x1 > x0:
            f = math.log(x / x0) / math.log(x1 / x0)
            return math.exp(math.log(y0) + f * math.log(y1 / y0))
    return None


def machine():
    model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}"


def main():
    o = args_parse()
    if not HVS.exists():
        sys.exit(f"block-pays: {HVS} is missing; run `make bench` first")
    etas = [e for e in o.etas.split(",") if e]
    crit = (f",criterion={o.criterion}" if o.criterion else "") + (f",{o.params}" if o.params else "")
    specs = [f"{s}:dt={o.dt},eta={e}{crit}" for s in o.schemes.split(",") if s for e in etas]
    lf = [f"leapfrog:dt={2.0 ** -int(k):.10g}" for k in o.leapfrog.split(",") if k]
    load0 = os.getloadavg()
    walls = {s: [] for s in specs + lf}
    cpus = {s: [] for s in specs + lf}
    rows = {}
    for r in range(o.repeats):
        cmd, got = run_once(o, specs + lf)
        for s, row in got.items():
            walls[s].append(float(row["wall_s"]))
            cpus[s].append(float(row["cpu_s"]))
            rows[s] = row
        print(f"block-pays: repeat {r + 1}/{o.repeats} done: " +
              ", ".join(f"{s} {float(row['wall_s']):.2f} s" for s, row in got.items()), file=sys.stderr)
    load1 = os.getloadavg()
    med = {s: statistics.median(w) for s, w in walls.items() if w}
    cmed = {s: statistics.median(c) for s, c in cpus.items() if c}

    lf_err = [float(rows[s]["dE_max"]) for s in lf]
    lf_wall = [med[s] for s in lf]
    lf_cpu = [cmed[s] for s in lf]
    lf_pf = [float(rows[s]["particle_forces"]) for s in lf]
    lf_cost = statistics.median(w / p for w, p in zip(lf_wall, lf_pf))

    name = f"{o.model}-{o.n}" + (f"-{o.ic.replace('=', '-').replace(',', '-')}" if o.ic else "")
    lines = [f"\n## {o.model} N = {o.n}" + (f" ({o.ic})" if o.ic else "") + f", {o.plugin}, t = 0 .. {o.t} "
             f"({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC)\n",
             f"- machine: {machine()}; threads {o.threads or 'default'}; "
             f"load average {load0[0]:.2f} before, {load1[0]:.2f} after",
             f"- git {subprocess.run(['git', '-C', str(ROOT), 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True).stdout.strip()}; "
             f"median wall (and CPU) of {o.repeats} repeats; energies from cpu-direct every {o.sample}",
             f"- command: `python3 bench/block-pays.py --model {o.model} --n {o.n} --t {o.t} "
             + (f"--ic {o.ic} " if o.ic else "")
             + f"--plugin {o.plugin} --dt {o.dt} --schemes {o.schemes} --etas {o.etas} "
             f"--leapfrog {o.leapfrog} --repeats {o.repeats}"
             + (f" --threads {o.threads}" if o.threads else "")
             + (f" --criterion {o.criterion}" if o.criterion else "")
             + (f" --params {o.params}" if o.params else "")
             + (f" --solver {o.solver}" if o.solver else "") + "`\n",
             "| run | max dE/E | steps | particle forces | wall s | leapfrog wall at same dE | "
             "wall_ratio | pf_ratio | cost_per_pf | cpu s | cpu_ratio |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in lf:
        r = rows[s]
        lines.append(f"| {s} | {float(r['dE_max']):.3e} | {r['steps']} | {r['particle_forces']} | "
                     f"{med[s]:.3f} | | | | | {cmed[s]:.3f} | |")
    for s in specs:
        r = rows[s]
        e, pf = float(r["dE_max"]), float(r["particle_forces"])
        w_eq, pf_eq = interp(e, lf_err, lf_wall), interp(e, lf_err, lf_pf)
        c_eq = interp(e, lf_err, lf_cpu)
        cost = (med[s] / pf) / lf_cost
        if w_eq is None:
            lines.append(f"| {s} | {e:.3e} | {r['steps']} | {r['particle_forces']} | {med[s]:.3f} | "
                         f"not bracketed | | | {cost:.2f} | {cmed[s]:.3f} | |")
        else:
            lines.append(f"| {s} | {e:.3e} | {r['steps']} | {r['particle_forces']} | {med[s]:.3f} | "
                         f"{w_eq:.3f} | {med[s] / w_eq:.2f} | {pf / pf_eq:.2f} | {cost:.2f} | "
                         f"{cmed[s]:.3f} | {cmed[s] / c_eq:.2f} |")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.loglog(lf_err, lf_wall, "k-o", label="leapfrog (dt = 2^-k)")
        for sch in o.schemes.split(","):
            ss = [s for s in specs if s.startswith(sch + ":")]
            ax.loglog([float(rows[s]["dE_max"]) for s in ss], [med[s] for s in ss], "-s",
                      label=f"{sch} (eta {o.etas})")
        ax.set_xlabel("max |dE/E| over the run")
        ax.set_ylabel("wall time of the run [s]")
        ax.set_title(f"{o.model} N = {o.n}, {o.plugin}: cost at equal energy error")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        png = Path(f"{o.out}-{name}.png")
        fig.tight_layout()
        fig.savefig(png, dpi=110)
        lines.append(f"\n![{name}]({png.name})")
    except ImportError:
        lines.append("\n(no plot: matplotlib is not installed)")
    text = "\n".join(lines) + "\n"
    md = Path(f"{o.out}.md")
    if not md.exists():
        md.write_text("# Do block time steps pay? (bench/block-pays.py)\n\n"
                      "Block schemes against leapfrog at equal max |dE/E|: see the columns in "
                      "bench/block-pays.py. Below 1 in wall_ratio, the block run pays.\n")
    with open(md, "a") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
