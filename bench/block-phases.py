#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""block-phases — where a block run's time goes on a CPU tree plugin: perf's
samples of one run grouped into the phases of a block step (walk, predict,
refit, cell preparation, targets, rebuilds, state copies, ...), as shares of
the run's own samples (the bench's exact energies and the initial
conditions left out).

    python3 bench/block-phases.py --data perf.data
    python3 bench/block-phases.py --record perf.data -- build/bench/hold-vs-shared ARGS...

--record runs the command under `perf record -F 1999` first (OMP_WAIT_POLICY
=passive, so that spinning threads are not counted). Prints a Markdown
table. The grouping is by symbol name (the table PHASES below), so a
renamed function lands in "other" until it is listed.
"""
import argparse
import os
import re
import subprocess
import sys

# (phase, DSO prefix or None, symbol substrings); the first match wins.
# The bench's energies run on cpu-direct: that whole DSO is left out.
PHASES = [
    ("excluded: exact energies", "gravplug-cpu-direct", [""]),
    ("excluded: initial conditions", "libgravplug", ["ic_", "galaxy", "sample_"]),
    ("OS (scheduler, interrupts)", "[kernel", [""]),
    ("walk (traversal, lists, kernels)", None,
     ["avx2_flush", "walk256", "walk512", "force_pass", "walk_once", "flush.", "oct_walk"]),
    ("predict (every particle)", None, ["predict"]),
    ("refit (gather, moments)", None, ["fill_sorted", "tree_moments", "oct_tree_refit"]),
    ("cell preparation", None, ["prepare_cells", "length_exponent"]),
    ("targets (active i-groups)", None, ["active_groups", "msort", "by_rank"]),
    ("rebuilds", None, ["make_keys", "tree_build", "sort_keys", "build_in", "loose",
                        "split_runs", "runs_of_tree", "root_cube", "scale_masses"]),
    ("exact sums (direct_max)", None, ["exact_few", "gp_direct_point"]),
    ("state, subsets, copies, allocation", None,
     ["state_set", "held_send", "positions_get", "index_list", "check_subset", "memset",
      "memmove", "memcpy", "malloc", "free", "_int_"]),
]


def phase_of(dso, sym):
    for name, want_dso, keys in PHASES:
        if want_dso is not None and not dso.startswith(want_dso):
            continue
        if any(k in sym for k in keys):
            return name
    return "integrator and other"


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("--data", help="an existing perf.data")
    a.add_argument("--record", help="record the command after -- into this file first")
    a.add_argument("cmd", nargs=argparse.REMAINDER)
    o = a.parse_args()
    data = o.data or o.record
    if not data:
        sys.exit("block-phases: give --data FILE or --record FILE -- COMMAND")
    if o.record:
        cmd = o.cmd[1:] if o.cmd[:1] == ["--"] else o.cmd
        env = dict(os.environ, OMP_WAIT_POLICY="passive")
        subprocess.run(["perf", "record", "-F", "1999", "-o", data, "--"] + cmd, check=True, env=env)
    rep = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "dso,sym",
                          "--stdio"], check=True, capture_output=True, text=True).stdout
    total = {}
    for line in rep.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+(\S+)\s+\[.\]\s+(.*)", line)
        if m:
            p = phase_of(m.group(2), m.group(3).strip())
            total[p] = total.get(p, 0.0) + float(m.group(1))
    run = sum(v for k, v in total.items() if not k.startswith("excluded"))
    print("| phase | share of the run's samples |")
    print("|---|---:|")
    for k, v in sorted(total.items(), key=lambda kv: -kv[1]):
        share = "(left out)" if k.startswith("excluded") else f"{100 * v / run:.1f}%"
        print(f"| {k} | {share} |")


if __name__ == "__main__":
    main()
