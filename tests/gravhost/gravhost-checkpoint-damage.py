#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# gravhost-checkpoint-damage — a damaged checkpoint never crashes, hangs,
# misleads or runs code. A small run writes
# checkpoint.gpck; each case damages a copy and restarts from it under a
# time limit: every one must exit 1 with a sentence naming what is wrong,
# or, for edits a run can take (another plugin name or setting, a far
# particle), continue with a note saying what differs and a finite log.
# The eps, E0 and far-particle cases are the smallest reproducers of what
# tests/fuzz/fuzz-gravhost-restart.c found.
# Field edits recompute the checksums (format 2), so they reach the range
# checks behind them; flipped bytes and trailing data keep the old ones.
# The file layout is read from the header's version (1: no checksums), so
# the same cases also run against a build that predates format 2.
import os, shlex, shutil, struct, subprocess, sys, tempfile

BUILD = os.environ.get("GP_BUILD") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRAVHOST = os.path.join(BUILD, "bin", "gravhost")
LIMIT = 30  # seconds per restart: a hang is a failure, not a stuck suite

results = []
def ok(cond, name):
    results.append((bool(cond), name))
    print(("ok" if cond else "not ok") + " %d - %s" % (len(results), name), flush=True)

def crc32c(data, crc=0):
    table = crc32c.table
    if table is None:
        table = crc32c.table = []
        for b in range(256):
            c = b
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            table.append(c)
    c = crc ^ 0xFFFFFFFF
    for byte in data:
        c = (c >> 8) ^ table[(c ^ byte) & 0xFF]
    return c ^ 0xFFFFFFFF
crc32c.table = None

# header fields after the 8-byte magic, by format version
U64 = ["version", "header_crc", "n", "started", "max_level", "now", "user_len", "n_saved"]
V1 = [f for f in U64 if f != "header_crc"]
TAIL = [("time", "d"), ("dt_max", "d"), ("t0", "d")]

class Ckpt:
    def __init__(self, data):
        self.b = bytearray(data)
        self.version = struct.unpack_from("<Q", self.b, 8)[0]
        names = U64 if self.version >= 2 else V1
        self.off = {name: 8 + 8 * i for i, name in enumerate(names)}
        after = 8 + 8 * len(names) + 32          # integrator[32]
        for i, (name, _) in enumerate(TAIL):
            self.off[name] = after + 8 * i
        self.header_len = 8 + 8 * len(names) + 32 + 9 * 8 + 2 * 8 + 7 * 8
        if self.version >= 4:   # n_particle_saved (doubles per particle after t_last)
            self.header_len += 8
        self.trailer = 8 if self.version >= 2 else 0
    def get(self, name, fmt="<Q"):
        return struct.unpack_from(fmt, self.b, self.off[name])[0]
    def set(self, name, value, fmt="<Q"):
        struct.pack_into(fmt, self.b, self.off[name], value)
    def user_offset(self):  # gravhost's run state is the caller blob at the end
        return len(self.b) - self.trailer - self.get("user_len")
    def payload_offset(self, array):  # pos, vel, acc, mass, ids, level, t_last
        n = self.get("n")
        sizes = [("pos", 24 * n), ("vel", 24 * n), ("acc", 24 * n), ("mass", 8 * n), ("ids", 8 * n),
                 ("level", n), ("t_last", 8 * n)]
        o = self.header_len
        for name, size in sizes:
            if name == array:
                return o
            o += size
    def reseal(self):  # recompute the checksums, as a deliberate edit would
        if self.version < 2:
            return
        self.set("header_crc", 0)
        self.set("header_crc", crc32c(bytes(self.b[:self.header_len])))
        body = bytes(self.b[:len(self.b) - 8])
        struct.pack_into("<Q", self.b, len(self.b) - 8, crc32c(body))

def restart(tmp, cfg, data, name):
    d = os.path.join(tmp, "r-" + name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "checkpoint.gpck"), "wb") as f:
        f.write(data)
    try:
        p = subprocess.run([GRAVHOST, "run", cfg, "--output", d, "--restart"], capture_output=True,
                           text=True, errors="replace", timeout=LIMIT, env=dict(os.environ, GP_MARK=os.path.join(d, "ran")))
        return p.returncode, p.stderr.strip(), os.path.exists(os.path.join(d, "ran"))
    except subprocess.TimeoutExpired:
        return "timeout", "no answer in %d s" % LIMIT, os.path.exists(os.path.join(d, "ran"))

def refused(tmp, cfg, data, name, words, what):
    rc, err, _ = restart(tmp, cfg, data, name)
    good = rc == 1 and all(w in err for w in words)
    if not good:
        print("# rc %s: %s" % (rc, err.splitlines()[-1] if err else "(no message)"))
    ok(good, "%s: refused with a sentence naming %s (rc %s)" % (what, " / ".join(words), rc))
    return err

def main():
    print("1..24")
    tmp = tempfile.mkdtemp(prefix="gravhost-ckdmg.")
    try:
        cfg = os.path.join(tmp, "run.cfg")
        with open(cfg, "w") as f:
            f.write('solver = { plugin = "cpu-direct"; params = { eps = 0.05; }; };\n'
                    'initial_conditions = { model = "plummer"; n = 64; seed = 2; };\n'
                    'integrator = { name = "block-rk2"; params = { dt = 0.125; eta = 0.1; }; };\n'
                    'run = { t_end = 0.5; };\n'
                    'output = { log_interval = 0.25; snapshot_interval = 0; checkpoint_interval = 0.25; };\n'
                    'switch = ( { at_time = 0.125; plugin = "cpu-direct"; } );\n')
        base = os.path.join(tmp, "base")
        p = subprocess.run([GRAVHOST, "run", cfg, "--output", base, "--t-end", "0.25"], capture_output=True, text=True)
        good = open(os.path.join(base, "checkpoint.gpck"), "rb").read() if p.returncode == 0 else b""
        ok(p.returncode == 0 and good, "a run to t = 0.25 writes a checkpoint")
        if not good:
            print("# " + p.stderr)
            return 1
        rc, err, _ = restart(tmp, cfg, good, "intact")
        ok(rc == 0, "the intact checkpoint restarts (rc %s)" % rc)

        # item 3: the switch index in gravhost's run state, out of range
        c = Ckpt(good)
        struct.pack_into("<i", c.b, c.user_offset() + 72, 1000000)
        c.reseal()
        refused(tmp, cfg, bytes(c.b), "switch", ["params_from"], "switch index 1000000 (was SIGBUS)")

        # item 4: time NaN, dt_max 0, dt_max < 0
        for name, field, value, words in (("nan", "time", float("nan"), ["time"]),
                                          ("dt0", "dt_max", 0.0, ["dt_max"]),
                                          ("dtneg", "dt_max", -0.125, ["dt_max"])):
            c = Ckpt(good)
            c.set(field, value, "<d")
            c.reseal()
            refused(tmp, cfg, bytes(c.b), name, words, "%s = %g" % (field, value))

        # item 5: a path in the plugin name must never be opened
        so = os.path.join(tmp, "evil.so")
        src = os.path.join(tmp, "evil.c")
        with open(src, "w") as f:
            f.write('#include <stdio.h>\n#include <stdlib.h>\n__attribute__((constructor)) static void mark(void)'
                    '{ const char *p = getenv("GP_MARK"); FILE *f = p ? fopen(p, "w") : NULL; if (f) fclose(f); }\n')
        # CC may carry a launcher or flags ("ccache gcc")
        cc = shlex.split(os.environ.get("CC", "cc")) or ["cc"]
        built = subprocess.run(cc + ["-shared", "-fPIC", "-o", so, src], capture_output=True).returncode == 0
        c = Ckpt(good)
        o = c.user_offset() + 76
        c.b[o:o + 512] = so.encode().ljust(512, b"\0")
        c.reseal()
        rc, err, ran = restart(tmp, cfg, bytes(c.b), "path")
        ok(built and not ran, "a .so path in the checkpoint is never loaded (its constructor %s)" % ("ran" if ran else "did not run"))
        ok(rc == 1 and "plugin" in err, "... and the checkpoint is refused, naming the field plugin (rc %s)" % rc)
        # ... while the config's plugin wins over a different short name
        c = Ckpt(good)
        o = c.user_offset() + 76
        c.b[o:o + 512] = b"cpu-tree".ljust(512, b"\0")
        c.reseal()
        rc, err, _ = restart(tmp, cfg, bytes(c.b), "short")
        ok(rc == 0 and "continuing with cpu-direct" in err, "a different short name: the config's plugin wins (rc %s)" % rc)

        # item 6: flipped bytes in positions and t_last, trailing data
        c = Ckpt(good)
        c.b[c.payload_offset("pos") + 13] ^= 0x40
        refused(tmp, cfg, bytes(c.b), "flip-pos", ["checksum"], "one flipped bit in the positions")
        c = Ckpt(good)
        c.b[c.payload_offset("t_last") + 8 * 5 + 2] ^= 0x01
        refused(tmp, cfg, bytes(c.b), "flip-tlast", ["checksum"], "one flipped bit in t_last")
        refused(tmp, cfg, good + b"garbage\n", "trailing", ["trailing"], "7 bytes of trailing garbage")
        refused(tmp, cfg, good[:-100], "truncated", ["truncated"], "the last 100 bytes cut off")
        # range checks behind the checksum: a level deeper than max_level
        c = Ckpt(good)
        c.b[c.payload_offset("level") + 3] = 99
        c.reseal()
        refused(tmp, cfg, bytes(c.b), "level", ["level", "max_level"], "a level of 99")
        # edits with the checksums recomputed, as an attacker would make them:
        # one particle's id copied onto another
        c = Ckpt(good)
        o = c.payload_offset("ids")
        c.b[o + 8:o + 16] = c.b[o:o + 8]
        c.reseal()
        refused(tmp, cfg, bytes(c.b), "dup-id", ["ids", "twice"], "an id held twice")
        # the integrator's name: another scheme with the same settings table
        # would take block-rk2's state as its own, unannounced
        c = Ckpt(good)
        o = c.off["n_saved"] + 8
        c.b[o:o + 32] = b"block-kdk".ljust(32, b"\0")
        c.reseal()
        refused(tmp, cfg, bytes(c.b), "integ", ["integrator", "block-kdk"], "the integrator renamed block-kdk")
        # gravhost's snapshot counter at 2^64 - 1 (it wrapped onto snap_0000)
        c = Ckpt(good)
        struct.pack_into("<Q", c.b, c.user_offset() + 40, 2**64 - 1)
        c.reseal()
        refused(tmp, cfg, bytes(c.b), "snapcount", ["snap_count"], "the snapshot counter at 2^64 - 1")
        # the next log line's index far from the checkpoint's time
        c = Ckpt(good)
        struct.pack_into("<Q", c.b, c.user_offset() + 24, 1000000)
        c.reseal()
        refused(tmp, cfg, bytes(c.b), "logindex", ["log_index", "log_interval"], "the log index at 10^6")
        # a config whose integrator settings changed: said, and the
        # checkpoint's kept (the continuation is the run that wrote it)
        cfg2 = os.path.join(tmp, "eta.cfg")
        with open(cfg2, "w") as f:
            f.write(open(cfg).read().replace("eta = 0.1;", "eta = 0.2;"))
        rc, err, _ = restart(tmp, cfg2, good, "eta")
        ok(rc == 0 and "eta = 0.1" in err and "says 0.2" in err,
           "a config with another eta: the restart says so and keeps the checkpoint's (rc %s)" % rc)
        # a setting the config leaves at its default, edited (the criterion's
        # eps, settings[3] of block-rk2, to 5e-324: every particle on the
        # deepest level) used to be kept without a word
        c = Ckpt(good)
        struct.pack_into("<d", c.b, c.off["t0"] + 8 + 3 * 8, 5e-324)
        c.reseal()
        d = os.path.join(tmp, "r-eps")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "checkpoint.gpck"), "wb") as f:
            f.write(bytes(c.b))
        p = subprocess.run([GRAVHOST, "run", cfg, "--output", d, "--restart", "--t-end", "0.25"], capture_output=True,
                           text=True, timeout=LIMIT)
        ok(p.returncode == 0 and "integrator.params.eps = 4.9" in p.stderr and "default" in p.stderr,
           "an edited setting the config does not name is announced (rc %d)" % p.returncode)
        # the run's initial energy E0 edited to a subnormal: the drift
        # relative to it overflowed and the log said -inf with rc 0
        c = Ckpt(good)
        struct.pack_into("<d", c.b, c.user_offset() + 8, 5e-324)
        c.reseal()
        refused(tmp, cfg, bytes(c.b), "e0", ["E0", "overflows"], "E0 = 5e-324")
        # one particle moved to x = 1e200 (finite, so the file is sound): the
        # Lagrangian radii squared it to inf in the log
        c = Ckpt(good)
        struct.pack_into("<d", c.b, c.payload_offset("pos") + 24 * 7, 1e200)
        c.reseal()
        rc, err, _ = restart(tmp, cfg, bytes(c.b), "far")
        rows = [l.split("\t") for l in open(os.path.join(tmp, "r-far", "diagnostics.tsv"))
                if l[0].isdigit() or l[0] == "-"]
        finite = all(abs(float(x)) != float("inf") and x.strip().lower() != "nan"
                     for row in rows for x in row[:12 + 5])
        ok(rc == 0 and rows and finite, "a particle at 1e200 gives a log of finite numbers (rc %s)" % rc)
        # an old format version: refused with a sentence saying so
        c = Ckpt(good)
        c.set("version", 1)
        refused(tmp, cfg, bytes(c.b), "v1", ["version 1", "version 2"], "a version 1 header")
        # durable writes: fsync of the file before the rename, then of the directory
        strace = shutil.which("strace")
        log = os.path.join(tmp, "strace.log")
        if not strace:
            print("ok %d # SKIP strace is not installed (the fsync order is checked with it)" % (len(results) + 1))
            results.append((True, "skip"))
        else:
            p = subprocess.run([strace, "-f", "-o", log, "-e", "trace=openat,fsync,fdatasync,rename,renameat,renameat2",
                                GRAVHOST, "run", cfg, "--output", os.path.join(tmp, "fsync"), "--t-end", "0.125"],
                               capture_output=True, text=True)
            calls = open(log).read().splitlines() if os.path.exists(log) else []
            if p.returncode != 0 or not calls:
                print("ok %d # SKIP strace could not trace gravhost here (rc %d)" % (len(results) + 1, p.returncode))
                results.append((True, "skip"))
            else:
                fds = {}   # fd -> path, from openat lines
                order = []
                for line in calls:
                    if "openat(" in line and "= " in line:
                        try:
                            path = line.split('"')[1]
                            # outputs are made under /proc/self/fd/N, N the output directory opened once
                            if path.startswith("/proc/self/fd/"):
                                head, _, rest = path[len("/proc/self/fd/"):].partition("/")
                                path = fds.get(head, path) + ("/" + rest if rest else "")
                            fds[line.rsplit("= ", 1)[1].split()[0]] = path
                        except IndexError:
                            pass
                    elif "fsync(" in line or "fdatasync(" in line:
                        fd = line.split("sync(", 1)[1].split(")")[0]
                        order.append(("fsync", fds.get(fd, "?")))
                    elif "rename" in line and "checkpoint.gpck" in line:
                        order.append(("rename", "checkpoint.gpck"))
                i = next((k for k, o in enumerate(order) if o[0] == "rename"), None)
                good = (i is not None
                        and any(o[0] == "fsync" and o[1].endswith("checkpoint.gpck.tmp") for o in order[:i])
                        and any(o[0] == "fsync" and o[1].rstrip("/").endswith("fsync") for o in order[i + 1:]))
                if not good:
                    print("# " + " ".join("%s(%s)" % o for o in order))
                ok(good, "the checkpoint file is fsynced before its rename, and its directory after")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

rc = main()
sys.exit(rc or (0 if all(r[0] for r in results) else 1))
