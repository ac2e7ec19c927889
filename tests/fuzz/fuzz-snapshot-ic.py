#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fuzz-snapshot-ic -- HDF5 initial conditions as an attacker or a careless
user would make them, read by gravic (model snapshot, the reader gravhost
uses) built with AddressSanitizer and UndefinedBehaviorSanitizer
(tests/fuzz/module.mk). Each case is a snapshot in a directory of its own
whose datasets (Coordinates, Velocities, Masses, ParticleIDs) and groups
(PartType1, Header) are drawn from: wrong shapes (rank 0 to 3, columns 1
to 4, rows that disagree, none), wrong types (float16/32/64, signed and
unsigned integers, bool, complex, strings, compound records, arrays,
variable-length, opaque bytes), storage (contiguous, chunked, gzip,
Fletcher-32 with a damaged chunk, HDF5 external storage), links (hard,
soft, external) and virtual datasets (sources in the same file, a part
beside it present or missing, ../, an absolute path); non-finite values.
Outside the case's directory lie the targets a case may name: /etc/passwd,
/dev/zero, a FIFO, a regular file with numbers.

The oracle, per case: gravic exits 0, or 1 with a sentence on stderr (never
"unknown HDF5 error"), within 30 s (a FIFO opened would hang), with no
sanitizer report; a case that names anything outside its own file and the
part files beside it exits 1; nothing outside the case's directory changes
(names, sizes, times and bytes of the outside targets).

  fuzz-snapshot-ic.py CASES [SEED]    TAP; GP_FUZZ_SHOW=K prints the first K
  refusals. GRAVIC: the gravic to run (default BUILD/tests/gravic-asan).
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
build = os.environ.get("GP_BUILD", os.path.dirname(os.path.dirname(here)))
gravic = os.environ.get("GRAVIC", os.path.join(build, "tests", "gravic-asan"))
try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"1..0 # SKIP h5py/numpy not importable ({e})")
    sys.exit(0)
if not os.access(gravic, os.X_OK):
    print(f"1..0 # SKIP {gravic} not built")
    sys.exit(0)

cases = int(sys.argv[1]) if len(sys.argv) > 1 else 300
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
show = int(os.environ.get("GP_FUZZ_SHOW", "0"))
rnd = random.Random(seed)
FIELDS = ("Coordinates", "Velocities", "Masses", "ParticleIDs")
COLS = {"Coordinates": 3, "Velocities": 3, "Masses": 1, "ParticleIDs": 1}


def dtypes():
    return [np.float64, np.float32, np.float16, np.int32, np.int64, np.uint8, np.uint64, np.int8, np.bool_,
            np.complex128, "str", np.dtype([("a", "f8"), ("b", "i4")]), np.dtype(("f8", (3,))), "vlen",
            np.dtype("V8")]


def values(shape, dtype, n):
    if dtype == "str":
        return np.array(["x"] * int(np.prod(shape)), dtype=h5py.string_dtype()).reshape(shape)
    if dtype == "vlen":
        return None
    dt = np.dtype(dtype)
    if dt.kind == "V" and dt.names is None and dt.subdtype is None:
        return np.zeros(shape, dtype=dt)
    if dt.names or dt.subdtype:
        return np.zeros(shape, dtype=dt)
    a = np.asarray(rnd.choice([lambda: np.random.default_rng(rnd.randrange(1 << 30)).normal(size=shape),
                               lambda: np.zeros(shape), lambda: np.full(shape, np.nan), lambda: np.full(shape, 1e308),
                               lambda: np.arange(int(np.prod(shape)), dtype=float).reshape(shape)])())
    with np.errstate(all="ignore"):
        if dt.kind in "iub":
            a = np.nan_to_num(a, nan=0, posinf=0, neginf=0)
            if dt.kind == "u":
                a = np.abs(a)
            if dt.kind == "b":
                return a.astype(bool)
            info = np.iinfo(dt)
            a = np.clip(a, info.min, info.max)
        return a.astype(dt)


class Case:
    """One snapshot file; outside names whether it names a file elsewhere."""

    def __init__(self, d, outside):
        self.d, self.o, self.outside, self.path = d, outside, False, os.path.join(d, "ic.h5")

    def target(self):
        """A file a dataset or link may name: inside the case or outside it."""
        k = rnd.randrange(5)
        if k == 0:
            return os.path.join(self.d, "data.bin"), False
        self.outside = True
        return [None, "/etc/passwd", "/dev/zero", os.path.join(self.o, "fifo"), os.path.join(self.o, "numbers.bin")][k], True

    def dataset(self, f, g, name, n, mutate):
        cols = COLS[name]
        shape = (n, cols) if cols > 1 else (n,)
        if not mutate:
            g.create_dataset(name, data=values(shape, np.float64 if name != "ParticleIDs" else np.uint64, n))
            return
        if rnd.random() < 0.3:
            shape = rnd.choice([(), (n,), (n, rnd.randrange(1, 5)), (rnd.randrange(4), 3), (n, 3, 1), (0, cols),
                                (n + 1,) + shape[1:]])
        dtype = np.float64 if name != "ParticleIDs" else np.uint64
        if rnd.random() < 0.3:
            dtype = rnd.choice(dtypes())
        how = rnd.choice(["plain"] * 2 + ["chunked", "gzip", "fletcher", "damaged", "external", "extlink", "soft",
                                          "virtual", "missing"])
        if how == "missing":
            return
        if how == "external":
            t, _ = self.target()
            if t.endswith("data.bin"):
                with open(t, "wb") as fh:
                    fh.write(os.urandom(8 * 4 * max(n, 1)))
            dt = dtype if dtype not in ("str", "vlen") else np.float64
            g.create_dataset(name, shape=shape, dtype=dt, external=[(t, 0, h5py.h5f.UNLIMITED)])
            return
        if how == "extlink":
            t, _ = self.target()
            g[name] = h5py.ExternalLink(t, "/PartType1/" + name)
            return
        if how == "virtual":
            self.virtual(f, g, name, shape)
            return
        if dtype == "vlen":
            ds = g.create_dataset(name, shape=(n,), dtype=h5py.vlen_dtype(np.float64))
            return
        data = values(shape, dtype, n)
        kw = {}
        if how in ("chunked", "gzip", "fletcher", "damaged") and len(shape) > 0 and 0 not in shape:
            kw["chunks"] = shape
            if how == "gzip":
                kw["compression"] = "gzip"
            if how in ("fletcher", "damaged"):
                kw["fletcher32"] = True
        target = "hidden_" + name if how == "soft" else name
        g.create_dataset(target, data=data, **kw)
        if how == "soft":
            g[name] = h5py.SoftLink("/PartType1/" + target)
        if how == "damaged" and kw.get("fletcher32"):
            self.damage = "/PartType1/" + name

    def virtual(self, f, g, name, shape):
        where = rnd.choice(["same", "beside", "beside-missing", "up", "absolute", "absolute-fifo"])
        if len(shape) == 0 or 0 in shape:
            shape = (4, 3)
        if where == "same":
            g.create_dataset("src_" + name, data=np.zeros(shape))
            src, dset = ".", "/PartType1/src_" + name
        elif where.startswith("beside"):
            src, dset = "part.r0000.h5", "/PartType1/" + name
            if where == "beside":
                with h5py.File(os.path.join(self.d, src), "a") as p:
                    p.require_group("PartType1").create_dataset(name, data=np.zeros(shape))
        else:
            self.outside = True
            src = {"up": "../numbers.h5", "absolute": os.path.join(self.o, "numbers.h5"),
                   "absolute-fifo": os.path.join(self.o, "fifo")}[where]
            dset = "/PartType1/" + name
        layout = h5py.VirtualLayout(shape=shape, dtype="f8")
        layout[...] = h5py.VirtualSource(src, dset, shape=shape)
        g.create_virtual_dataset(name, layout)

    def make(self):
        self.damage = None
        n = rnd.choice([1, 2, 5, 8])
        with h5py.File(self.path, "w") as f:
            hdr = rnd.choice(["plain"] * 27 + ["missing", "extlink", "string-time"])
            if hdr == "plain":
                f.create_group("Header").attrs["Time"] = rnd.choice([0.0, 1.5, np.nan])
            elif hdr == "string-time":
                f.create_group("Header").attrs["Time"] = "zero"
            elif hdr == "extlink":
                t, _ = self.target()
                f["Header"] = h5py.ExternalLink(t, "/Header")
            grp = rnd.choice(["plain"] * 27 + ["extlink", "soft", "missing"])
            if grp == "missing":
                return
            if grp == "extlink":
                t, _ = self.target()
                f["PartType1"] = h5py.ExternalLink(t, "/PartType1")
                return
            g = f.create_group("PartType1" if grp == "plain" else "Real")
            if grp == "soft":
                f["PartType1"] = h5py.SoftLink("/Real")
            mutate = rnd.sample(FIELDS, rnd.choice([1, 1, 1, 2, 4]))
            for name in FIELDS:
                self.dataset(f, g, name, n, name in mutate)
        if self.damage:
            with h5py.File(self.path, "r") as f:
                info = f[self.damage].id.get_chunk_info(0)
            with open(self.path, "r+b") as fh:
                fh.seek(info.byte_offset + rnd.randrange(max(1, info.size - 4)))
                b = fh.read(1)
                fh.seek(-1, 1)
                fh.write(bytes([b[0] ^ (1 << rnd.randrange(8))]))


def outside_state(o):
    st = []
    for name in sorted(os.listdir(o)):
        p = os.path.join(o, name)
        s = os.lstat(p)
        st.append((name, s.st_mode, s.st_size, s.st_mtime_ns, s.st_ctime_ns))
    with open(os.path.join(o, "numbers.bin"), "rb") as fh:
        st.append(fh.read())
    return st


def main():
    work = tempfile.mkdtemp(prefix="fuzz-snapshot-ic.")
    outside = os.path.join(work, "outside")
    os.mkdir(outside)
    os.mkfifo(os.path.join(outside, "fifo"))
    with open(os.path.join(outside, "numbers.bin"), "wb") as fh:
        fh.write(np.arange(1000, dtype=np.float64).tobytes())
    with h5py.File(os.path.join(outside, "numbers.h5"), "w") as f:
        g = f.create_group("PartType1")
        for name in FIELDS:
            g[name] = np.ones((8, COLS[name]) if COLS[name] > 1 else (8,))
        f.create_group("Header").attrs["Time"] = 0.0
    shutil.copy(os.path.join(outside, "numbers.h5"), os.path.join(work, "numbers.h5"))
    before = outside_state(outside)
    env = dict(os.environ, ASAN_OPTIONS="exitcode=99:detect_leaks=0", UBSAN_OPTIONS="halt_on_error=1:exitcode=99")
    counts = {"accepted": 0, "refused": 0, "refused-outside": 0, "unwritable": 0}
    bad = []
    shown = 0
    for i in range(cases):
        if i and i % 1000 == 0:
            print(f"# {i} cases: {counts}, {len(bad)} bad", file=sys.stderr, flush=True)
        d = os.path.join(work, "case")
        if os.path.exists(d):
            shutil.rmtree(d)
        os.mkdir(d)
        c = Case(d, outside)
        try:
            c.make()
        except Exception:   # a combination h5py cannot write: drawn again
            c = Case(d, outside)
            shutil.rmtree(d)
            os.mkdir(d)
            try:
                c.make()
            except Exception:
                counts["unwritable"] += 1
                continue
        try:
            p = subprocess.run([gravic, "snapshot", "0", os.path.join(d, "out.txt"), "path=" + c.path],
                               capture_output=True, text=True, timeout=30, env=env, errors="replace")
            rc, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired:
            rc, err = "timeout", ""
        why = None
        if rc not in (0, 1):
            why = f"rc {rc}"
        elif "Sanitizer" in err or "runtime error" in err:
            why = "sanitizer report"
        elif rc == 1 and not err.strip():
            why = "refused without a sentence"
        elif "unknown HDF5 error" in err:
            why = "an 'unknown HDF5 error' sentence"
        elif c.outside and rc == 0:
            why = "accepted a file that names another outside its directory"
        after = outside_state(outside)
        if after != before:
            why = (why + "; " if why else "") + "the outside directory changed"
            before = after
        if why:
            keep = os.path.join(work, f"bad-{i}")
            shutil.copytree(d, keep)
            bad.append(f"case {i}: {why} (kept in {keep}): {err.strip()[:300]}")
        elif rc == 0:
            counts["accepted"] += 1
        else:
            counts["refused-outside" if c.outside else "refused"] += 1
            if shown < show:
                shown += 1
                print("# refused: " + err.strip().replace("\n", " ")[:400])
    print("1..2")
    print(f"{'not ' if bad else ''}ok 1 - {cases} HDF5 initial-conditions cases (seed {seed}): no crash, hang, "
          f"sanitizer report or unhelpful sentence, nothing outside refused-or-read: {counts}")
    for b in bad[:20]:
        print("#   " + b)
    print(f"{'not ' if bad else ''}ok 2 - nothing outside the case's directory touched")
    if not bad:
        shutil.rmtree(work)
    return 1 if bad else 0


sys.exit(main())
