# SPDX-License-Identifier: Apache-2.0
# gravhost-lib.sh — what the TAP scripts that run gravhost share (sourced
# by tests/gravhost/gravhost-*.sh and tests/mpi/mpi-lib.sh after they set NAME; make
# writes this file's path into them). Sets BUILD, GRAVHOST (also GH) and a
# TMP folder removed on exit; ok STATUS TEXT prints one TAP line (and
# remembers a failure in $fail); same_snapshot A B prints "same" when two
# snapshots hold the same particles (positions, velocities, masses, ids)
# and time, bit for bit; expect_error NAME PATTERN [ARGS...] runs the
# config $TMP/NAME.cfg and wants exit 1 before t = 0 (no snapshot), within
# 60 s (a blocked open fails as a timeout), stderr matching PATTERN;
# wait_for_log DIR LINES waits until DIR/diagnostics.tsv has LINES data
# lines (at most 60 s). Only lines that start with a time count: the column
# header is written before the run installs its signal handlers, so a
# signal sent on seeing it could kill the run unsaved.
BUILD=${GP_BUILD:-$(cd "$(dirname "$0")/.." && pwd)}
GRAVHOST="$BUILD/bin/gravhost"
GH="$GRAVHOST"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/$NAME.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
n=0; fail=0
ok() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
expect_error() {
    name=$1; pattern=$2; shift 2
    timeout 60 "$GRAVHOST" run "$TMP/$name.cfg" --output "$TMP/out-$name" "$@" 2>"$TMP/$name.err" </dev/null
    rc=$?
    grep -q -- "$pattern" "$TMP/$name.err"
    found=$?
    [ $rc = 1 ] && [ $found = 0 ] && [ ! -e "$TMP/out-$name/snap_0000.h5" ]
    ok $? "$name: exit 1 before t = 0 (rc $rc), stderr matches '$pattern'"
    [ $found = 0 ] || sed 's/^/#   got: /' "$TMP/$name.err"
}
wait_for_log() {
    i=0
    while [ $i -lt 600 ]; do
        k=$(grep -c '^[0-9]' "$1/diagnostics.tsv" 2>/dev/null)   # empty when the file is not there yet
        [ "${k:-0}" -ge "$2" ] && return 0
        sleep 0.1; i=$((i+1))
    done
    return 1
}
same_snapshot() {
    python3 - "$1" "$2" <<'PY'
import sys, h5py, numpy as np
try:
    a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
    same = all(np.array_equal(a["PartType1/" + k][...].view(np.uint8), b["PartType1/" + k][...].view(np.uint8))
               for k in ("Coordinates", "Velocities", "Masses", "ParticleIDs"))
    if same and a["Header"].attrs["Time"] == b["Header"].attrs["Time"]:
        print("same")
    else:
        pa, pb = (f["PartType1/Coordinates"][...] for f in (a, b))
        print("different: max |dx| = %.3g" % (np.abs(pa - pb).max() if pa.shape == pb.shape else float("nan")))
except Exception as e:
    print("unreadable: %s" % e)
PY
}
