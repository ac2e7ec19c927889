#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gravhost when memory runs out: each command below is run once to count
# the allocations the project's own code makes (tests/fixtures/oom-inject.c,
# preloaded; libc's, OpenMP's, HDF5's and the CUDA runtime's are not
# counted), then again with one of them failing: every one of the first
# 100 (start-up: the config, the plugins, the initial conditions), then
# every 11th, or sparser so that about 100 more at most. Each run must end by
# itself, with no signal, and a run that fails must say that memory ran
# out. A null pointer that is not checked, anywhere on the way, fails
# this. (A run may also finish: some allocations have a fallback.)
NAME=gravhost-oom
. @TESTLIB@
INJECT="$BUILD/tests/oom-inject.so"
if [ -n "${GP_SANITIZE:-}" ]; then
    echo "1..0 # SKIP AddressSanitizer has its own malloc, which the failing one cannot replace"
    exit 0
fi
if [ ! -f "$INJECT" ]; then echo "1..0 # SKIP $INJECT is not built"; exit 0; fi
# the CPU plugins alone: the CUDA runtime linked into the CUDA plugins
# aborts by design when its own allocations fail
export GP_OOM_OBJECTS="libgravplug gravplug-cpu- gravhost"
FIRST=100

cfg() {  # cfg NAME PLUGIN MODEL N INTEGRATOR [EXTRA]: a tiny run's config
    cat > "$TMP/$1.cfg" <<EOF
solver = { plugin = "$2"; params = { eps = 0.05; }; };
initial_conditions = { model = "$3"; n = $4; seed = 7; };
integrator = { name = "$5"; params = { dt = 0.125; }; };
run = { t_end = 0.25; };
output = { log_interval = 0.125; snapshot_interval = 0.125; checkpoint_interval = 0.125; };
$6
EOF
}
cfg tree cpu-tree plummer 256 block-rk2
cfg hermite cpu-direct plummer 64 hermite
cfg hold cpu-tree plummer 64 hold
cfg cc cpu-direct plummer 32 cc
cfg switch cpu-tree plummer 200 block-kdk 'switch = ( { at_time = 0.125; plugin = "cpu-direct"; } );'
sed -i 's/eps = 0.05;/eps = 0.05; theta = 0.6;/' "$TMP/switch.cfg"   # inherited, dropped for cpu-direct
"$GH" run "$TMP/tree.cfg" --output "$TMP/seed" >/dev/null 2>&1   # the checkpoint a restart reads

# one_run K CMD...: CMD in a fresh copy of $TMP/seed with allocation K
# failing (0: none); its exit status in $rc, its output in $TMP/log
one_run() {
    k=$1; shift
    rm -rf "$TMP/w" && cp -r "$TMP/seed" "$TMP/w"
    # preloaded past timeout: its own count, written at its exit, would
    # replace the command's (env execs, and exec runs no destructor)
    (cd "$TMP/w" && timeout 60 env GP_OOM_FAIL_AT=$k GP_OOM_COUNT_FILE="$TMP/count" LD_PRELOAD="$INJECT" \
        "$@" >"$TMP/log" 2>&1 </dev/null)
    rc=$?
}

# sweep WHAT CMD...
sweep() {
    what=$1; shift
    rm -f "$TMP/count"
    one_run 0 "$@"
    total=$(cat "$TMP/count" 2>/dev/null || echo 0)
    if [ $rc != 0 ] || [ "$total" -lt 1 ]; then
        ok 1 "$what: runs with nothing failing (rc $rc) and counts its allocations ($total)"
        sed 's/^/#   /' "$TMP/log" | tail -5
        return
    fi
    stride=$(( (total - FIRST) / 100 ))
    [ $stride -ge 11 ] || stride=11
    k=1; runs=0; stopped=0; bad=""
    while [ $k -le "$total" ]; do
        one_run $k "$@"
        runs=$((runs + 1))
        [ $rc = 0 ] || stopped=$((stopped + 1))
        if [ $rc -ge 124 ]; then
            bad="$bad k=$k:status-$rc"
        elif [ $rc != 0 ] && ! grep -qi 'memory' "$TMP/log"; then
            bad="$bad k=$k:no-sentence"
            tail -1 "$TMP/log" | sed "s/^/#   k=$k: /"
        fi
        if [ $k -lt $FIRST ]; then k=$((k + 1)); else k=$((k + stride)); fi
    done
    [ -z "$bad" ]
    ok $? "$what: $runs runs, each failing one of its $total allocations ($stopped stopped): no crash, every stop says why${bad:+ (failed:$bad)}"
}

echo 1..10
[ -f "$TMP/seed/checkpoint.gpck" ]
ok $? "a checkpoint to restart from"
stopped=0
sweep "run (cpu-tree, block-rk2, snapshots, checkpoints)" "$GH" run "$TMP/tree.cfg" --output out
[ "$stopped" -gt 10 ]
ok $? "the injector works: $stopped of those runs stopped"
sweep "restart from a checkpoint" "$GH" run "$TMP/tree.cfg" --restart checkpoint.gpck --t-end 0.5 --output .
sweep "hermite on cpu-direct (ABI 1.2 jerks)" "$GH" run "$TMP/hermite.cfg" --output out
sweep "hold on cpu-tree (ABI 1.2 pair steps)" "$GH" run "$TMP/hold.cfg" --output out
sweep "cc on cpu-direct (pair lists)" "$GH" run "$TMP/cc.cfg" --output out
sweep "a switch from cpu-tree to cpu-direct" "$GH" run "$TMP/switch.cfg" --output out
sweep "gravhost compare" "$GH" compare --ref cpu-direct --test cpu-tree --model plummer --n 300
sweep "gravhost list" "$GH" list
exit $fail
