# SPDX-License-Identifier: Apache-2.0
# mpi-lib.sh — what the gravhost-under-mpirun test scripts share (sourced by
# tests/mpi/mpi-gravhost.sh and tests/mpi/mpi-ic.sh after they set MPIRUN, NAME
# and MPILIB, its path, which make writes into them). Skips the whole test
# without mpirun; takes GH, TMP, ok and same_snapshot from
# tests/gravhost/gravhost-lib.sh, and adds GHM and mpi NP ARGS, which runs gravhost-mpi on NP
# ranks under a timeout (a hang fails instead of blocking the suite).
if [ -z "$MPIRUN" ] || ! [ -x "$MPIRUN" ]; then
    echo "1..0 # SKIP mpirun not found (install openmpi-bin)"
    exit 0
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
. "${MPILIB%/*}/../gravhost/gravhost-lib.sh"
GHM="$BUILD/bin/gravhost-mpi"
mpi() { np=$1; shift; timeout 300 "$MPIRUN" --oversubscribe -np "$np" "$GHM" "$@"; }
