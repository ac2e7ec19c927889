#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/mpi-block-steps.sh — block steps over MPI ranks: the same run
# (bench/mpi-galaxy-block.cfg unless CONFIG says another) at P = 1 and at
# P = 2, alternated REPEATS times (default 3), each timed by the steps' own
# time that gravhost prints last ("... s of it in steps": the block steps
# and the migrations, without setup, output or the energies of the log
# lines). One OpenMP thread per rank, passive waiting. Prints one line per
# run (the time of day, the load average, P, steps seconds, the seconds of
# those in migrations, interactions)
# and, last, each pair's ratio and the median ratio: the number
# bench/results/mpi-tree/raw/mpi-tree.md quotes as "P = 1 over P = 2".
# DRIFT=on runs the config with the solver's drift = on (the drifted trees).
# Usage: bench/mpi-block-steps.sh [REPEATS]   (BUILD, CONFIG, PMAX=2, DRIFT)
set -eu
GH=${BUILD:-build}/bin/gravhost-mpi
CONFIG=${CONFIG:-bench/mpi-galaxy-block.cfg}
REPEATS=${1:-3}
PMAX=${PMAX:-2}
[ -x "$GH" ] || { echo "mpi-block-steps: $GH not found: run make first (it needs mpicc)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
if [ -n "${DRIFT:-}" ]; then
    sed "/^solver/s/params = {/params = { drift = \"$DRIFT\";/" "$CONFIG" > "$OUT/run.cfg"
    grep -q "drift = \"$DRIFT\"" "$OUT/run.cfg" || { echo "mpi-block-steps: no solver params in $CONFIG" >&2; exit 1; }
    CONFIG=$OUT/run.cfg
fi
echo "# $CONFIG (drift ${DRIFT:-as configured}); $(nproc --all) cores; $(uname -m); P = 1 and $PMAX alternated $REPEATS times"
printf '# time\tload\tP\tsteps_s\tmigrations_s\tinteractions\n'
ratios=""
r=1
while [ "$r" -le "$REPEATS" ]; do
    one=""
    for p in 1 "$PMAX"; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        when=$(date -u +%H:%M:%S)
        mpirun --oversubscribe -np "$p" "$GH" run "$CONFIG" --output "$OUT/p$p" --progress \
            2>"$OUT/err" >/dev/null || { cat "$OUT/err" >&2; exit 1; }
        secs=$(sed -n 's/.* \([0-9.]*\) s of it in steps.*/\1/p' "$OUT/err")
        [ -n "$secs" ] || { echo "mpi-block-steps: no steps time in gravhost's output:" >&2; cat "$OUT/err" >&2; exit 1; }
        inter=$(grep -v '^#' "$OUT/p$p/diagnostics.tsv" | tail -n 1 | awk -F'\t' '{print $(NF-2)}')
        mig=$(sed -n 's/.* s of it in steps, \([0-9.]*\) s of those in.*/\1/p' "$OUT/err")
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$when" "$load" "$p" "$secs" "${mig:-0}" "$inter"
        if [ "$p" = 1 ]; then one=$secs; else ratios="$ratios $(echo "$one $secs" | awk '{printf "%.3f", $1 / $2}')"; fi
    done
    r=$((r + 1))
done
echo "# P = 1 over P = $PMAX, pair by pair:$ratios"
echo "$ratios" | tr ' ' '\n' | grep . | sort -n | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "# median %.2f\n", m}'
