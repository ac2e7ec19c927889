# mpi-lib.sh — what the gravhost-under-mpirun test scripts share (sourced by
# tests/mpi-gravhost.sh and tests/mpi-ic.sh after they set MPIRUN and NAME;
# make writes its path into them). Skips the whole test without mpirun;
# sets GH, GHM and a TMP folder removed on exit; ok STATUS TEXT prints one
# TAP line; mpi NP ARGS runs gravhost-mpi on NP ranks under a timeout (a
# hang fails instead of blocking the suite); same_snapshot A B prints
# "same" when two snapshots hold the same particles (positions,
# velocities, masses, ids) and time, bit for bit.
if [ -z "$MPIRUN" ] || ! [ -x "$MPIRUN" ]; then
    echo "1..0 # SKIP mpirun not found (install openmpi-bin)"
    exit 0
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
BUILD=${GP_BUILD:-$(cd "$(dirname "$0")/.." && pwd)}
GH="$BUILD/bin/gravhost"
GHM="$BUILD/bin/gravhost-mpi"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/$NAME.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
n=0; fail=0
ok() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
mpi() { np=$1; shift; timeout 300 "$MPIRUN" --oversubscribe -np "$np" "$GHM" "$@"; }
same_snapshot() {
    python3 - "$1" "$2" <<'PY'
import sys, h5py, numpy as np
try:
    a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
    same = all(np.array_equal(a["PartType1/" + k][...].view(np.uint8), b["PartType1/" + k][...].view(np.uint8))
               for k in ("Coordinates", "Velocities", "Masses", "ParticleIDs"))
    print("same" if same and a["Header"].attrs["Time"] == b["Header"].attrs["Time"] else "different")
except Exception as e:
    print("unreadable: %s" % e)
PY
}
