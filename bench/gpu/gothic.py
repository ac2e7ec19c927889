#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gothic — GOTHIC's headline measured on the flagship: do block time steps
beat shared ones on a GPU, at the sizes GOTHIC quotes?

    python3 bench/gpu/gothic.py --out FILE [--tree cuda-tree] [--cores cpu-tree]
        [--threads K] [--n 20,22,24] [--cores-n 20] [--t 1] [--sample 0.25]
        [--leapfrog 5,6,7] [--energy PLUGIN[:NAME=VALUE,...]]
        [--step-n 24] [--shared-n 24] [--drift on] [--timeout 300]

Four parts, each a program of build/bench, its output appended to FILE as it
comes (a part that runs out of --timeout seconds says so and the rest go on):

1. make run's model and settings, read from host_stub/default.cfg (the
   galaxy with its options and seed, the solver's parameters, the block
   integrator and its parameters), at N = 2^k for each k of --n, on --tree:
   the block run and leapfrog at dt = 2^-k for each k of --leapfrog, to
   t = --t, by bench/hold-vs-shared (wall seconds in evolve only). Energies
   every --sample from --energy (default: --tree opened tighter, bmax at
   theta 0.3, a second instance: an O(N^2) sum is out of reach at 2^24),
   outside the timing. Leapfrog's wall at the block run's max |dE/E| is
   interpolated in log-log between the bracketing leapfrog runs. Then the
   block run again with the solver's `drift` at each value of --drift
   (the drifted tree: no refit and no predict over every particle in a
   block step; "" for none), against the same leapfrog runs.
2. The same block run and the middle leapfrog of --leapfrog (dt 2^-6 by
   default) at 2^--cores-n on --cores
   with --threads threads (default: every core): the GPU against the host.
3. A 1% block step at 2^--step-n (bench/gpu/cudabench block, the largest
   |a|, through ABI 1.1): the plugin's calls per step, with make run's
   opening criterion and with bmax at theta 0.5, each also with each
   --drift value.
4. A shared step at 2^--shared-n (cudabench block with every particle
   active: predict, get_positions, compute_forces and set_state through
   ABI 1.1), Plummer, bmax theta 0.5, beside Bonsai's whole step from
   bench/results/gpu/bonsai-h100.tsv.

Then a summary table goes in front of the raw output, after FILE's leading
comment lines (bench/gpu/run-all.sh's header: GPU, date, git, host). Exits
1 when a part failed or ran out of time (its row says "did not finish").
"""
import argparse
import importlib.util
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / "bench"
HVS = BUILD / "hold-vs-shared"
CUDABENCH = BUILD / "cudabench"


def block_pays():
    """bench/block-pays.py as a module: its log-log interpolation and its
    reader of hold-vs-shared's rows."""
    spec = importlib.util.spec_from_file_location("block_pays", ROOT / "bench" / "block-pays.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def read_cfg(path):
    """The groups and settings of a libconfig file as nested dicts (the
    subset host_stub/default.cfg uses: groups, strings, numbers)."""
    text = re.sub(r"#[^\n]*|//[^\n]*|/\*.*?\*/", "", Path(path).read_text(), flags=re.S)
    tokens = re.findall(r'"(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_\-]*|[-+0-9.eE]+|[{}=:;,]', text)
    pos = 0

    def group(end):
        nonlocal pos
        out = {}
        while pos < len(tokens) and tokens[pos] != end:
            name = tokens[pos]
            if tokens[pos + 1] not in ("=", ":"):
                raise ValueError(f"{path}: expected '=' after {name}")
            pos += 2
            if tokens[pos] == "{":
                pos += 1
                out[name] = group("}")
                pos += 1
            else:
                v = tokens[pos]
                out[name] = v[1:-1] if v.startswith('"') else v
                pos += 1
            while pos < len(tokens) and tokens[pos] in (";", ","):
                pos += 1
        return out

    return group(None)


def pairs(d):
    return ",".join(f"{k}={v}" for k, v in d.items())


class Report:
    """FILE: the raw output appended as it comes, the summary put in front
    at the end."""

    def __init__(self, path):
        self.path = Path(path)
        self.rows = []
        self.failed = 0
        self.timed_out = False

    def raw(self, text):
        with open(self.path, "a") as f:
            f.write(text if text.endswith("\n") else text + "\n")

    def run(self, title, cmd, timeout):
        self.raw(f"\n## {title}\n# command: {' '.join(str(c) for c in cmd)}")
        t0 = time.monotonic()
        try:
            p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout)
            out, rc = p.stdout + p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            out += f"\n# timed out after {timeout} s: what it printed is above"
            rc = None
        self.raw(out + f"\n# {time.monotonic() - t0:.1f} s, exit {rc}")
        print(f"gothic: {title}: {time.monotonic() - t0:.1f} s, exit {rc}", file=sys.stderr)
        self.failed += rc != 0
        # a part cut by the timeout keeps the runs it finished (the
        # programs print each as it ends)
        self.timed_out = rc is None
        return out if rc == 0 or rc is None else None

    def row(self, *cells):
        self.rows.append(cells)

    def finish(self):
        lines = self.path.read_text().splitlines(keepends=True) if self.path.exists() else []
        k = 0
        while k < len(lines) and lines[k].startswith("#"):
            k += 1
        table = ["\n## Summary\n\n", "| what | N | measured | beside | ratio |\n", "|---|---|---|---|---|\n"]
        table += ["| " + " | ".join(str(c) for c in r) + " |\n" for r in self.rows]
        self.path.write_text("".join(lines[:k] + table + lines[k:]))
        sys.stdout.write("".join(table))


def fmt_n(n):
    k = int(math.log2(n))
    return f"2^{k}" if 1 << k == n else str(n)


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("--out", required=True)
    a.add_argument("--tree", default="cuda-tree")
    a.add_argument("--cores", default="cpu-tree")
    a.add_argument("--threads", default=str(os.cpu_count() or 1))
    a.add_argument("--n", default="20,22,24")
    a.add_argument("--cores-n", default="20")
    a.add_argument("--t", default="1")
    a.add_argument("--sample", default="0.25")
    a.add_argument("--leapfrog", default="5,6,7")
    a.add_argument("--energy", default=None)
    a.add_argument("--step-n", default="24")
    a.add_argument("--shared-n", default="24")
    a.add_argument("--drift", default="on")
    a.add_argument("--timeout", type=float, default=300)
    a.add_argument("--config", default=str(ROOT / "host_stub" / "default.cfg"))
    o = a.parse_args()
    if not HVS.exists():
        sys.exit(f"gothic: {HVS} is missing; run `make bench` first")
    cfg = read_cfg(o.config)
    try:
        ic, solver, integ = cfg["initial_conditions"], dict(cfg["solver"]["params"]), cfg["integrator"]
        scheme, sparams = integ["name"], integ.get("params", {})
        eps = solver.pop("eps")
    except KeyError as e:
        sys.exit(f"gothic: {o.config} has no {e}: it needs initial_conditions, solver.params.eps and "
                 "integrator.name")
    energy = o.energy or f"{o.tree}:mac=bmax,theta=0.3"
    bp = block_pays()
    rep = Report(o.out)
    rep.raw(f"# make run's settings ({os.path.relpath(o.config, ROOT)}): {ic.get('model')} "
            f"{pairs(ic.get('options', {}))} seed {ic.get('seed', 42)}; solver eps {eps} {pairs(solver)}; "
            f"{scheme} {pairs(sparams)}; t = 0 .. {o.t}; energies from {energy} every {o.sample}")
    block_spec = f"{scheme}:{pairs(sparams)}"
    lf = [f"leapfrog:dt={2.0 ** -int(k):.10g}" for k in o.leapfrog.split(",") if k]

    drifts = [d for d in o.drift.split(",") if d]

    def hvs(plugin, n, runs, threads=None, drift=None):
        cmd = [HVS, "--model", ic.get("model", "galaxy"), "--n", n, "--seed", ic.get("seed", "42"),
               "--t", o.t, "--sample", o.sample, "--plugin", plugin, "--eps", eps, "--energy", energy]
        if ic.get("options"):
            cmd += ["--ic", pairs(ic["options"])]
        sp = dict(solver, **({"drift": drift} if drift else {}))
        if sp:
            cmd += ["--solver", pairs(sp)]
        if threads:
            cmd += ["--threads", threads]
        for r in runs:
            cmd += ["--run", r]
        title = f"{plugin}, {fmt_n(n)}" + (f", {threads} threads" if threads else "") + \
                (f", drift = {drift}" if drift else "")
        return bp.hvs_rows(rep.run(title, cmd, o.timeout))

    def against_leapfrog(label, n, b, rows, cut):
        """A row: block run b against the leapfrog runs in rows, at equal max |dE/E|."""
        wall = float(b["wall_s"])
        got = [r for r in lf if r in rows]
        eq = bp.interp(float(b["dE_max"]), [float(rows[r]["dE_max"]) for r in got],
                       [float(rows[r]["wall_s"]) for r in got])
        lfs = ", ".join(f"dt {r.split('=')[1]}: {float(rows[r]['dE_max']):.2e} in {float(rows[r]['wall_s']):.3g} s"
                        for r in got)
        rep.row(label, fmt_n(n), f"{float(b['dE_max']):.2e} in {wall:.3g} s ({b['steps']} steps)",
                f"leapfrog {lfs}" + ("" if eq else "; not bracketed") + cut,
                f"leapfrog takes {eq / wall:.2f}x the block run's wall" if eq else "")

    on_tree = {}   # N: hold-vs-shared's rows on --tree
    for k in [int(x) for x in o.n.split(",") if x]:
        n = 1 << k
        rows = on_tree[n] = hvs(o.tree, n, [block_spec] + lf)
        cut = "; the part timed out, later runs missing" if rep.timed_out else ""
        b = rows.get(block_spec)
        if not b:
            rep.row(f"{scheme} against leapfrog, {o.tree}", fmt_n(n), "did not finish", "", "")
            continue
        against_leapfrog(f"{scheme} against leapfrog at equal max dE/E, {o.tree}", n, b, rows, cut)
        for dv in drifts:
            bd = hvs(o.tree, n, [block_spec], drift=dv).get(block_spec)
            label = f"{scheme} with drift = {dv} against leapfrog at equal max dE/E, {o.tree}"
            if bd:
                against_leapfrog(label, n, bd, rows, "; the part timed out" if rep.timed_out else "")
            else:
                rep.row(label, fmt_n(n), "did not finish", "", "")

    # the host's cores: the block run and the middle leapfrog, wall against --tree's
    cn = 1 << int(o.cores_n)
    lf_cores = lf[len(lf) // 2]
    rows = hvs(o.cores, cn, [block_spec, lf_cores], o.threads)
    for spec in (block_spec, lf_cores):
        what = f"{spec.split(':')[0]}{' dt ' + spec.split('=')[1] if spec == lf_cores else ''}, " \
               f"{o.cores} on {o.threads} threads"
        c, g = rows.get(spec), on_tree.get(cn, {}).get(spec)
        if not c:
            rep.row(what, fmt_n(cn), "did not finish", "", "")
            continue
        cw, gw = float(c["wall_s"]), float(g["wall_s"]) if g else None
        rep.row(what, fmt_n(cn), f"{cw:.3g} s, max dE/E {float(c['dE_max']):.2e}",
                f"{o.tree} {gw:.3g} s, max dE/E {float(g['dE_max']):.2e}" if g else f"no {o.tree} run at this N",
                f"{o.tree} {cw / gw:.3g}x as fast" if g and gw > 0 else "")

    if not CUDABENCH.exists():
        rep.raw(f"\n# {CUDABENCH} is not built (only where nvcc is): no block or shared step measured")
        rep.row("1% block step; shared step", "", f"not measured: {CUDABENCH.name} not built", "", "")
        rep.finish()
        return 1 if rep.failed else 0
    sn = 1 << int(o.step_n)
    mac = " ".join(f"{k}={v}" for k, v in solver.items())
    configs = [mac, "mac=bmax theta=0.5"]
    for config in (mac, "mac=bmax theta=0.5"):
        configs += [f"{config} drift={dv}" for dv in drifts]
    for config in configs:
        out = rep.run(f"1% block step, {o.tree}, galaxy {fmt_n(sn)}, {config}",
                      [CUDABENCH, "block", "--plugin", o.tree, "--model", "galaxy", "--n", sn, "--active", "0.01",
                       "--steps", "8", "--select", "accel", "--config", config], o.timeout)
        m = re.search(r"the plugin's calls .*?: ([0-9.]+)", out or "")
        rep.row(f"1% block step (largest |a|), the plugin's calls, {config}", fmt_n(sn),
                f"{m.group(1)} ms" if m else "did not finish", "", "")
    hn = 1 << int(o.shared_n)
    out = rep.run(f"shared step, {o.tree}, plummer {fmt_n(hn)}",
                  [CUDABENCH, "block", "--plugin", o.tree, "--model", "plummer", "--n", hn, "--active", "1",
                   "--steps", "4", "--select", "accel", "--config", "mac=bmax theta=0.5"], o.timeout)
    m = re.search(r"^RESULT,block,1\.1,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,([0-9.eE+-]+)", out or "", re.M)
    bonsai = None
    for line in open(ROOT / "bench" / "results" / "gpu" / "bonsai-h100.tsv"):
        f = line.rstrip("\n").split("\t")
        if f[0].isdigit() and int(f[0]) == hn and float(f[1]) == 0.5:
            bonsai = float(f[3])
    ms = 1e3 * float(m.group(1)) if m else None
    rep.row("shared step through ABI 1.1 (predict, forces, state), bmax theta 0.5", fmt_n(hn),
            f"{ms:.1f} ms" if ms else "did not finish",
            f"Bonsai's whole step on an H100 {bonsai:g} ms" if bonsai else "no Bonsai figure at this N",
            f"{ms / bonsai:.2f}x Bonsai's" if ms and bonsai else "")
    rep.finish()
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main())
