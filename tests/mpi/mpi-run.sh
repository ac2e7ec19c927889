#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# An MPI test under mpirun (generated from tests/mpi/mpi-run.sh by
# tests/mpi/module.mk): @NP@ ranks, oversubscribed (the test machines
# have fewer cores), one OpenMP thread per rank; skipped without mpirun.
MPIRUN='@MPIRUN@'
if [ -z "$MPIRUN" ] || ! [ -x "$MPIRUN" ]; then
    echo "1..0 # SKIP mpirun not found (install openmpi-bin)"
    exit 0
fi
# OpenMPI refuses root unless told; CI containers often run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=1
# a hang (ranks out of step) fails instead of blocking the test run
exec timeout 300 "$MPIRUN" --oversubscribe -np @NP@ '@PROGRAM@' @ARGS@
