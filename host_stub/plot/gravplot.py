#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gravplot -- turn a gravhost run into PNGs.

    gravplot.py RUN_DIR                      # diagnostics.tsv + snap_*.h5 inside
    gravplot.py --log LOG [--snapshot SNAP ...] [--out DIR]

Writes into the output directory (default: the run directory, or the
log's directory):

  energy.png       relative energy drift dE_rel against time, with the
                   virial ratio 2K/|W| below it; solver switches marked
  lagrangian.png   Lagrangian radii (every r<percent> column) against time
  levels.png       particles per time-step level against time (block
                   time steps only: when the log's levels column has more
                   than one level)
  xy.png           x-y projected density of the first, middle and last
                   snapshot
                   (log scale), centred on the densest region (--axes xz
                   or yz: xz.png, yz.png instead)

Columns are read by name from the log's header line (docs/CONFIG.md lists
them); lines starting with '#' are metadata ("# key: value"), used for the
titles. Snapshots are HDF5 files in the Gadget/SWIFT layout (PartType1),
read with h5py. matplotlib runs with the Agg backend: no display needed.
"""
import argparse
import csv
import glob
import math
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


class PlotError(Exception):
    """A problem with the user's input, reported as one sentence."""


# ---- reading ---------------------------------------------------------------

def read_log(path):
    """Returns (meta dict, column dict name -> list of str values)."""
    try:
        fh = open(path, newline="")
    except OSError as e:
        raise PlotError(f"cannot read the diagnostics log {path}: {e.strerror}")
    meta, header, rows = {}, None, []
    with fh:
        for lineno, line in enumerate(fh, 1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            if line.startswith("#"):
                body = line[1:].strip()
                if ":" in body:
                    k, v = body.split(":", 1)
                    meta[k.strip()] = v.strip()
                elif body:
                    meta.setdefault("title", body)
                continue
            fields = next(csv.reader([line], delimiter="\t"))
            if header is None:
                header = fields
                continue
            if len(fields) != len(header):
                raise PlotError(f"{path} line {lineno}: {len(fields)} columns, but the header has "
                                f"{len(header)}")
            rows.append(fields)
    if header is None:
        raise PlotError(f"{path} has no header line (expected tab-separated column names)")
    cols = {name: [r[i] for r in rows] for i, name in enumerate(header)}
    return meta, cols


def numeric(cols, name, path):
    if name not in cols:
        raise PlotError(f"the log {path} has no column '{name}'; it has: {', '.join(cols)}")
    try:
        return np.array([float(x) for x in cols[name]])
    except ValueError:
        raise PlotError(f"column '{name}' of {path} holds something that is not a number")


def lagrangian_columns(cols):
    """The r<percent> columns, as (label, name) sorted by fraction."""
    found = []
    for name in cols:
        m = re.fullmatch(r"r(\d+(?:_\d+)?)", name)
        if m:
            found.append((float(m.group(1).replace("_", ".")), name))
    return sorted(found)


def read_snapshot(path):
    try:
        import h5py
    except ImportError:
        raise PlotError("reading snapshots needs h5py (pip install h5py)")
    try:
        with h5py.File(path, "r") as f:
            if "PartType1" not in f:
                raise PlotError(f"snapshot {path} has no PartType1 group")
            g = f["PartType1"]
            pos = g["Coordinates"][:]
            if "Masses" in g:
                mass = g["Masses"][:]
            else:
                mass = np.full(len(pos), float(f["Header"].attrs["MassTable"][1]))
            time = float(np.ravel(f["Header"].attrs.get("Time", [0.0]))[0])
    except OSError as e:
        raise PlotError(f"cannot read snapshot {path}: {e}")
    return pos, mass, time


# ---- plots ------------------------------------------------------------------

def subtitle(meta):
    # First word of each: "cpu-tree (asked: auto)" -> "cpu-tree".
    parts = [meta[k].split()[0] for k in ("plugin", "integrator") if meta.get(k, "").split()]
    if "n" in meta:
        parts.append(f"N = {meta['n']}")
    return " | ".join(parts)


def switch_times(time, cols):
    if "solver" not in cols:
        return []
    s = cols["solver"]
    return [(time[i], s[i]) for i in range(1, len(s)) if s[i] != s[i - 1]]


def mark_switches(ax, switches):
    for t, name in switches:
        ax.axvline(t, color="0.5", ls=":", lw=1)
        ax.text(t, 0.98, f" {name}", transform=ax.get_xaxis_transform(), va="top", fontsize=7, color="0.35")


def plot_energy(meta, cols, logpath, out):
    t = numeric(cols, "time", logpath)
    de = numeric(cols, "dE_rel", logpath)
    has_vir = "virial" in cols
    fig, axes = plt.subplots(2 if has_vir else 1, 1, sharex=True, figsize=(6.4, 5.2 if has_vir else 3.6),
                             squeeze=False)
    ax = axes[0, 0]
    ax.plot(t, de, color="C0", lw=1.2)
    ax.axhline(0, color="0.7", lw=0.8)
    ax.set_ylabel(r"$(E - E_0)/|E_0|$")
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 2))
    ax.set_title(f"energy drift  (max |dE/E| = {np.max(np.abs(de)):.2e})\n{subtitle(meta)}", fontsize=9)
    sw = switch_times(t, cols)
    mark_switches(ax, sw)
    if has_vir:
        ax2 = axes[1, 0]
        ax2.plot(t, numeric(cols, "virial", logpath), color="C1", lw=1.2)
        ax2.axhline(1, color="0.7", lw=0.8)
        ax2.set_ylabel(r"virial ratio $2K/|W|$")
        mark_switches(ax2, sw)
    axes[-1, 0].set_xlabel("time (N-body units)")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def plot_lagrangian(meta, cols, logpath, out):
    t = numeric(cols, "time", logpath)
    lag = lagrangian_columns(cols)
    if not lag:
        raise PlotError(f"the log {logpath} has no Lagrangian-radius columns (r10, r50, ...)")
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for frac, name in reversed(lag):
        r = numeric(cols, name, logpath)
        ax.plot(t, r, lw=1.2, label=f"{frac:g}% of the mass")
    ax.set_yscale("log")
    ax.set_xlabel("time (N-body units)")
    ax.set_ylabel("Lagrangian radius")
    ax.set_title(f"Lagrangian radii about the centre of mass\n{subtitle(meta)}", fontsize=9)
    ax.legend(fontsize=7, loc="best")
    mark_switches(ax, switch_times(t, cols))
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def plot_levels(meta, cols, logpath, out):
    """Returns False (and writes nothing) when there is one level only."""
    if "levels" not in cols:
        return False
    t = numeric(cols, "time", logpath)
    rows = [[int(x) for x in s.split(",") if x.strip()] if s.strip() else [] for s in cols["levels"]]
    depth = max((len(r) for r in rows), default=0)
    if depth < 2:
        return False
    counts = np.zeros((depth, len(rows)))
    for j, r in enumerate(rows):
        counts[: len(r), j] = r
    used = np.nonzero(counts.sum(axis=1))[0]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    cmap = plt.get_cmap("viridis")
    ax.stackplot(t, counts[used], labels=[f"level {k}" for k in used],
                 colors=[cmap(k / max(1, depth - 1)) for k in used])
    ax.set_xlabel("time (N-body units)")
    ax.set_ylabel("particles")
    ax.set_title(f"particles per time-step level (level L: dt = dt_max / 2^L)\n{subtitle(meta)}", fontsize=9)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    ax.set_xlim(t[0], t[-1] if t[-1] > t[0] else t[0] + 1)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return True


def density_centre(pos, mass):
    """Shrinking-sphere centre (Power et al. 2003): robust to far outliers."""
    c = np.average(pos, axis=0, weights=mass)
    r = np.sqrt(((pos - c) ** 2).sum(1))
    radius = np.percentile(r, 90) if len(r) else 1.0
    while True:
        inside = np.sqrt(((pos - c) ** 2).sum(1)) < radius
        if inside.sum() < max(50, len(pos) // 100):
            return c
        c = np.average(pos[inside], axis=0, weights=mass[inside])
        radius *= 0.8


def plot_xy(snaps, meta, out, extent=None, bins=None, axes_name="xy"):
    ix, iy = "xyz".index(axes_name[0]), "xyz".index(axes_name[1])
    loaded = [read_snapshot(p) for p in snaps]
    if extent is None:  # twice the half-mass radius of the first snapshot
        pos, mass, _ = loaded[0]
        c = density_centre(pos, mass)
        r = np.sqrt(((pos - c) ** 2).sum(1))
        order = np.argsort(r)
        cum = np.cumsum(mass[order]) / mass.sum()
        extent = float(r[order][min(len(r) - 1, np.searchsorted(cum, 0.5))]) * 2.0
        extent = float("%.2g" % extent)
    if bins is None:  # about 4 particles per pixel inside the half-mass radius
        bins = int(min(240, max(40, 1.3 * math.sqrt(len(loaded[0][0])))))
    fig, axes = plt.subplots(1, len(loaded), figsize=(3.6 * len(loaded) + 0.8, 3.9), squeeze=False)
    images = []
    for ax, (pos, mass, time), path in zip(axes[0], loaded, snaps):
        c = density_centre(pos, mass)
        h, xe, ye = np.histogram2d(pos[:, ix] - c[ix], pos[:, iy] - c[iy], bins=bins,
                                   range=[[-extent, extent], [-extent, extent]], weights=mass)
        cell = (2 * extent / bins) ** 2
        images.append((ax, h.T / cell, time, os.path.basename(path)))
    positive = [img[img > 0] for _, img, _, _ in images]
    vals = np.concatenate(positive) if any(len(p) for p in positive) else np.array([1.0])
    vmin, vmax = np.percentile(vals, 2), vals.max()
    from matplotlib.colors import LogNorm
    for ax, img, time, name in images:
        im = ax.imshow(np.where(img > 0, img, np.nan), origin="lower", extent=[-extent, extent, -extent, extent],
                       norm=LogNorm(vmin=vmin, vmax=vmax), cmap="magma", interpolation="nearest")
        ax.set_facecolor("black")
        ax.set_title(f"t = {time:g}  ({name})", fontsize=8)
        ax.set_xlabel(axes_name[0])
        ax.set_aspect("equal")
    axes[0, 0].set_ylabel(axes_name[1])
    fig.colorbar(im, ax=list(axes[0]), shrink=0.85, label="projected mass density")
    fig.suptitle(f"{axes_name[0]}-{axes_name[1]} projection\n{subtitle(meta)}", fontsize=9)
    fig.savefig(out, dpi=100)
    plt.close(fig)


# ---- command line -----------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description="Plot a gravhost run: energy drift, Lagrangian radii, "
                                             "time-step levels, x-y projections.")
    ap.add_argument("run_dir", nargs="?", help="a gravhost output directory (diagnostics.tsv, snap_*.h5)")
    ap.add_argument("--log", help="the diagnostics log (default RUN_DIR/diagnostics.tsv)")
    ap.add_argument("--snapshot", action="append", default=[],
                    help="a snapshot to project (repeatable; default: the first, middle and last in RUN_DIR)")
    ap.add_argument("--out", help="where the PNGs go (default: RUN_DIR or the log's directory)")
    ap.add_argument("--extent", type=float, help="half-width of the x-y images (default: twice the "
                                                 "half-mass radius of the first snapshot)")
    ap.add_argument("--axes", default="xy",
                    help="the projection plane(s), comma-separated: xy, xz, yz (default xy; each file "
                         "is named after its plane, e.g. xz.png). One call with --axes xy,xz draws the "
                         "log plots once and both projections")
    ap.add_argument("--bins", type=int, help="pixels across the x-y images (default from N, 40 to 240)")
    args = ap.parse_args(argv)
    if not args.run_dir and not args.log and not args.snapshot:
        ap.error("give a run directory, or --log and/or --snapshot")
    planes = [a.strip() for a in args.axes.split(",") if a.strip()]
    bad = [a for a in planes if a not in ("xy", "xz", "yz")]
    if bad or not planes:
        ap.error(f"--axes takes xy, xz and/or yz, comma-separated; got {args.axes!r}")
    try:
        log = args.log or (os.path.join(args.run_dir, "diagnostics.tsv") if args.run_dir else None)
        snaps = args.snapshot
        if not snaps and args.run_dir:
            found = sorted(glob.glob(os.path.join(args.run_dir, "*.h5")))
            snaps = [found[0], found[len(found) // 2], found[-1]] if len(found) > 2 else found
        out = args.out or args.run_dir or os.path.dirname(os.path.abspath(log or snaps[0]))
        os.makedirs(out, exist_ok=True)
        written = []
        meta = {}
        if log:
            meta, cols = read_log(log)
            plot_energy(meta, cols, log, os.path.join(out, "energy.png"))
            written.append("energy.png")
            plot_lagrangian(meta, cols, log, os.path.join(out, "lagrangian.png"))
            written.append("lagrangian.png")
            if plot_levels(meta, cols, log, os.path.join(out, "levels.png")):
                written.append("levels.png")
        for plane in planes if snaps else []:
            name = f"{plane}.png"
            plot_xy(snaps, meta, os.path.join(out, name), extent=args.extent, bins=args.bins, axes_name=plane)
            written.append(name)
        if not snaps and args.run_dir:
            print(f"gravplot: no snapshots (*.h5) in {args.run_dir}; skipping the x-y projection",
                  file=sys.stderr)
    except PlotError as e:
        print(f"gravplot: {e}.", file=sys.stderr)
        return 1
    print(f"gravplot: wrote {', '.join(written)} in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
