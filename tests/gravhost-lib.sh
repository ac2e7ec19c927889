# SPDX-License-Identifier: Apache-2.0
# gravhost-lib.sh — what the TAP scripts that run gravhost share (sourced
# by tests/gravhost-*.sh and tests/mpi-lib.sh after they set NAME; make
# writes this file's path into them). Sets BUILD, GRAVHOST (also GH) and a
# TMP folder removed on exit; ok STATUS TEXT prints one TAP line (and
# remembers a failure in $fail); same_snapshot A B prints "same" when two
# snapshots hold the same particles (positions, velocities, masses, ids)
# and time, bit for bit.
BUILD=${GP_BUILD:-$(cd "$(dirname "$0")/.." && pwd)}
GRAVHOST="$BUILD/bin/gravhost"
GH="$GRAVHOST"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/$NAME.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
n=0; fail=0
ok() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
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
