#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gravhost-plummer — a Plummer sphere (N = 2048) stays in equilibrium over
# 10 crossing times under the shared-step leapfrog on cpu-tree: Lagrangian
# radii r25, r50, r75 within 10 % of their initial values at every log time
# (sampling noise at this N is ~3 %), the energy error bounded (< 2e-4),
# the virial ratio 2K/|W| within 0.9 .. 1.1. (N = 4096 with tighter numbers:
# bench/results/plummer-equilibrium/raw/plummer-equilibrium.md.)
BUILD=${GP_BUILD:-$(cd "$(dirname "$0")/.." && pwd)}
GRAVHOST="$BUILD/bin/gravhost"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gravhost-plummer.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
echo "1..4"
cat > "$TMP/p.cfg" <<CFG
solver = { plugin = "cpu-tree"; params = { eps = 0.05; theta = 0.5; threads = 1; }; };
initial_conditions = { model = "plummer"; n = 2048; seed = 7; };
integrator = { name = "leapfrog"; params = { dt = 0.03125; }; };
run = { t_end = 28.28125; };
output = { log_interval = 0.5; snapshot_interval = 0; };
CFG
if ! "$GRAVHOST" run "$TMP/p.cfg" --output "$TMP/out" 2>"$TMP/err"; then
    sed 's/^/# /' "$TMP/err"
    echo "Bail out! gravhost run failed"
    exit 1
fi
python3 - "$TMP/out/diagnostics.tsv" <<'PY'
import sys
import numpy as np
lines = [l for l in open(sys.argv[1]) if not l.startswith("#")]
d = np.genfromtxt(lines, names=True, dtype=None, encoding=None, delimiter="\t")
n = 0
def ok(cond, msg):
    global n
    n += 1
    print(("ok" if cond else "not ok") + " %d - %s" % (n, msg))
dev = {c: np.max(np.abs(d[c] / d[c][0] - 1)) for c in ("r25", "r50", "r75")}
print("# t_end %.3f, %d log lines; largest deviations: %s" % (d["time"][-1], len(d),
      ", ".join("%s %.1f%%" % (c, 100 * v) for c, v in dev.items())))
ok(abs(d["time"][-1] - 28.28125) < 1e-9, "ran 10 crossing times")
ok(max(dev.values()) < 0.10, "Lagrangian radii r25, r50, r75 stay within 10%% (largest %.1f%%)" % (100 * max(dev.values())))
de = np.max(np.abs(d["dE_rel"]))
ok(de < 2e-4, "leapfrog energy error bounded: max |dE/E| = %.2e < 2e-4" % de)
v = d["virial"]
ok(v.min() > 0.9 and v.max() < 1.1, "virial ratio within 0.9 .. 1.1 (%.3f .. %.3f)" % (v.min(), v.max()))
PY
