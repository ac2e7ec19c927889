#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/mpi-tree-scaling.sh — the runs behind
# bench/results/mpi-tree/raw/mpi-tree.md.
# Usage: bench/mpi-tree-scaling.sh [bytes|strong|weak|ablation|boxes|boxes-large] > out.tsv
# Columns: model N P build_s force_s let_max_bytes let_mean_bytes
#          box_bytes_sent interactions_per_particle cells_sent particles_sent
#          force_cpu_s box_max_bytes refinement_rounds
# boxes: the domain-box bytes against N and P; with BEFORE=<a build's
# plugins folder> (e.g. main's build/plugins) each run is made with that
# mpi-tree first and then with this build's, alternating, and every line
# starts with "before" or "after". boxes-large: the same at N = 2^22, P = 2, 4, 8.
# One OpenMP thread per rank; ranks beyond the cores are oversubscribed
# (fine for bytes, meaningless for time).
set -eu
B=${BUILD:-build}/bench/mpi-tree-scaling
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
run() { mpirun --oversubscribe -np "$@"; }
case "${1:-bytes}" in
bytes)
    for model in plummer galaxy; do
        for n in 16384 65536 262144 1048576; do
            for p in 2 4 8; do run $p "$B" $model $n 1; done
        done
    done ;;
strong)
    for n in 262144 1048576; do
        for rep in 1 2; do for p in 1 2; do run $p "$B" plummer $n 3; done; done
    done ;;
weak)
    for rep in 1 2; do
        run 1 "$B" plummer 262144 3; run 2 "$B" plummer 524288 3
        run 1 "$B" plummer 1048576 3; run 2 "$B" plummer 2097152 3
    done ;;
ablation)
    for boxes in 1 64 1024 4096; do
        echo "# let_boxes $boxes"
        GP_LET_BOXES=$boxes run 2 "$B" plummer 262144 1
        GP_LET_BOXES=$boxes run 4 "$B" plummer 262144 1
    done
    for wide in 0 4 2; do
        echo "# wide_split $wide"
        GP_WIDE_SPLIT=$wide run 2 "$B" plummer 262144 1
        GP_WIDE_SPLIT=$wide run 2 "$B" galaxy 262144 1
    done ;;
boxes|boxes-large)
    ns="262144 1048576" ps="2 4 8 16"
    [ "$1" = boxes-large ] && ns=4194304 ps="2 4 8"
    for model in plummer galaxy; do
        for n in $ns; do
            for p in $ps; do
                if [ -n "${BEFORE:-}" ]; then
                    printf 'before\t'; GRAVPLUG_PATH="$BEFORE" run $p -x GRAVPLUG_PATH "$B" $model $n 1
                    printf 'after\t'
                fi
                run $p "$B" $model $n 1
            done
        done
    done ;;
esac
