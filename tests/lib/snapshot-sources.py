#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""snapshot-sources.t -- an HDF5 initial-conditions file reads nothing but
itself (host_stub/snapshot/h5_sources.c): datasets in external storage
(/etc/passwd, /dev/zero, a FIFO), reached by an external link or virtual
with sources elsewhere are refused with a sentence naming the dataset, and
never hang; a per-rank master snapshot without a part file names the
missing part; complex, string and compound Coordinates name the dataset
and its type; a damaged Fletcher-32 chunk says the checksum failed and to
copy the file again; a FIFO, /dev/zero or a directory as the file itself
is refused at once. Run through gravic (model snapshot). Skips without
h5py."""
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
build = os.environ.get("GP_BUILD", os.path.dirname(here))
gravic = os.path.join(build, "bin", "gravic")

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"1..0 # SKIP h5py/numpy not importable ({e})")
    sys.exit(0)
if not os.access(gravic, os.X_OK):
    print(f"1..0 # SKIP {gravic} not built")
    sys.exit(0)

n_tests = 0
failed = 0


def ok(cond, what, detail=""):
    global n_tests, failed
    n_tests += 1
    if not cond:
        failed += 1
    print(f"{'' if cond else 'not '}ok {n_tests} - {what}", flush=True)
    if not cond and detail:
        for line in detail.splitlines():
            print(f"#   {line}")


N = 8
rng = np.random.default_rng(5)
POS, VEL = rng.normal(size=(N, 3)), rng.normal(size=(N, 3))


def snapshot(path, coords=None, **kw):
    """A small valid snapshot; coords(group) may make Coordinates itself."""
    with h5py.File(path, "w", **kw) as f:
        h = f.create_group("Header")
        h.attrs["Time"] = 0.0
        g = f.create_group("PartType1")
        if coords is None:
            g["Coordinates"] = POS
        else:
            coords(f, g)
        g["Velocities"] = VEL
        g["Masses"] = np.full(N, 1.0 / N)
        g["ParticleIDs"] = np.arange(N, dtype=np.uint64)


def external(target):
    def make(f, g):
        g.create_dataset("Coordinates", shape=(N, 3), dtype="f8", external=[(target, 0, h5py.h5f.UNLIMITED)])
    return make


def run_gravic(tmp, path):
    out = os.path.join(tmp, "out.txt")
    if os.path.exists(out):
        os.remove(out)
    try:
        p = subprocess.run([gravic, "snapshot", "0", out, f"path={path}"], capture_output=True, text=True,
                           timeout=30)
        return p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""


def refused(tmp, path, pattern, what):
    rc, err = run_gravic(tmp, path)
    ok(rc == 1 and pattern in err, what, f"rc {rc}, stderr: {err}")


with tempfile.TemporaryDirectory() as tmp:
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    good = os.path.join(tmp, "good.h5")
    snapshot(good)
    rc, err = run_gravic(tmp, good)
    ok(rc == 0, "a plain snapshot is read", err)

    # item 2: files HDF5 would open by itself
    for target, what in (("/etc/passwd", "/etc/passwd"), ("/dev/zero", "/dev/zero"), (fifo, "a FIFO")):
        p = os.path.join(tmp, "ext.h5")
        snapshot(p, external(target))
        refused(tmp, p, "Dataset /PartType1/Coordinates in", f"Coordinates in external storage ({what}): refused, "
                "naming the dataset, at once")
    p = os.path.join(tmp, "other.h5")
    snapshot(p)

    def ext_link(f, g):
        g["Coordinates"] = h5py.ExternalLink("other.h5", "/PartType1/Coordinates")
    snapshot(os.path.join(tmp, "link.h5"), ext_link)
    refused(tmp, os.path.join(tmp, "link.h5"), "Coordinates in", "Coordinates as an external link: refused")

    def ext_group(path):
        with h5py.File(path, "w") as f:
            f.create_group("Header").attrs["Time"] = 0.0
            f["PartType1"] = h5py.ExternalLink(fifo, "/PartType1")
    ext_group(os.path.join(tmp, "glink.h5"))
    refused(tmp, os.path.join(tmp, "glink.h5"), "PartType1 in", "PartType1 as an external link to a FIFO: refused "
            "without opening it")

    def virtual(source_file):
        def make(f, g):
            layout = h5py.VirtualLayout(shape=(N, 3), dtype="f8")
            layout[:] = h5py.VirtualSource(source_file, "PartType1/Coordinates", shape=(N, 3))
            g.create_virtual_dataset("Coordinates", layout)
        return make
    snapshot(os.path.join(tmp, "vds.h5"), virtual("/etc/passwd"))
    refused(tmp, os.path.join(tmp, "vds.h5"), "Virtual dataset /PartType1/Coordinates", "a virtual dataset mapping "
            "a file elsewhere: refused")
    sub = os.path.join(tmp, "sub")
    os.mkdir(sub)
    snapshot(os.path.join(sub, "vds-up.h5"), virtual("../other.h5"))
    refused(tmp, os.path.join(sub, "vds-up.h5"), "does not lie beside", "a virtual dataset mapping ../: refused")

    # item 9: a per-rank master without its part file; complex, string, compound
    snapshot(os.path.join(tmp, "master.h5"), virtual("part.r0001.h5"))
    refused(tmp, os.path.join(tmp, "master.h5"), "part.r0001.h5', which cannot be opened",
            "a master snapshot without its part file: the sentence names the missing part")
    snapshot(os.path.join(tmp, "part.r0001.h5"))
    rc, err = run_gravic(tmp, os.path.join(tmp, "master.h5"))
    ok(rc == 0, "the same master with its part beside it is read", err)
    snapshot(os.path.join(tmp, "part.r0001.h5"), external("/dev/zero"))
    refused(tmp, os.path.join(tmp, "master.h5"), "keeps its values in other files",
            "a part whose Coordinates are in external storage: refused")
    for dtype, what in (("c16", "compound records"), (h5py.string_dtype(), "strings")):
        def typed(f, g, dtype=dtype):
            g.create_dataset("Coordinates", shape=(N, 3), dtype=dtype)
        snapshot(os.path.join(tmp, "typed.h5"), typed)
        refused(tmp, os.path.join(tmp, "typed.h5"), f"Dataset /PartType1/Coordinates in '{tmp}/typed.h5' holds {what}",
                f"Coordinates of type {dtype}: the sentence names the dataset and says {what}")

    def compound(f, g):
        g.create_dataset("Coordinates", shape=(N, 3), dtype=np.dtype([("a", "f8"), ("b", "i4")]))
    snapshot(os.path.join(tmp, "compound.h5"), compound)
    refused(tmp, os.path.join(tmp, "compound.h5"), "holds compound records", "compound Coordinates: named")

    # item 9: a damaged Fletcher-32 chunk
    def checksummed(f, g):
        g.create_dataset("Coordinates", data=np.full((N, 3), 0.25), chunks=(N, 3), fletcher32=True)
    damaged = os.path.join(tmp, "damaged.h5")
    snapshot(damaged, checksummed)
    with h5py.File(damaged, "r") as f:
        offset = f["PartType1/Coordinates"].id.get_chunk_info(0).byte_offset
    with open(damaged, "r+b") as f:
        f.seek(offset + 5)
        b = f.read(1)
        f.seek(offset + 5)
        f.write(bytes([b[0] ^ 0x40]))
    refused(tmp, damaged, "Fletcher-32 checksum failed, so the file is damaged", "a damaged Fletcher-32 chunk: "
            "the checksum failed, copy the file again")

    # the file itself: a FIFO, /dev/zero, a directory
    for path, what in ((fifo, "a FIFO"), ("/dev/zero", "a character device"), (sub, "a directory")):
        refused(tmp, path, f"it is {what}, not a regular file", f"{what} as the snapshot: refused at once")

print(f"1..{n_tests}")
sys.exit(1 if failed else 0)
