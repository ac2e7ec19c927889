#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The plugins when memory runs out, as a framework holding one sees them:
# the conformance suite (quick sizes, one thread) against each CPU plugin,
# and against cuda-direct built on the CPU emulation of CUDA (its host
# code: buffers, copies, the emulated device's allocations), with one of
# the plugin's own allocations failing (tests/fixtures/oom-inject.c, preloaded):
# 20 of them spread over all it makes, 10 for the emulated plugin, whose
# runs are slower (the full sweeps, run by hand, are in
# bench/results/sanitizers/raw/sanitizers.md). The suite's own checks then fail,
# as they should; what must not happen is a signal. A failed call has to leave
# the plugin usable and no pointer unchecked.
# (generated from tests/conformance/oom-conformance.sh by tests/conformance/module.mk)
CONFORMANCE="@CONFORMANCE@"
INJECT="@INJECT@"
PLUGINS="@PLUGINS@"
if [ -n "${GP_SANITIZE:-}" ]; then
    echo "1..0 # SKIP AddressSanitizer has its own malloc, which the failing one cannot replace"
    exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/oom-conformance.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
n=0; fail=0
ok() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }

# run K PATH: the suite with the K-th allocation of the plugin at PATH
# failing (0: none); its exit status in $rc. Only the plugin's own object
# counts: a real CUDA runtime aborts by design when its own allocations
# fail, and the emulator's launches take nothing from the heap.
run() {
    timeout 120 env GP_CONFORMANCE_QUICK=1 OMP_NUM_THREADS=1 GP_OOM_OBJECTS="$(basename "$2" .so)" \
        GP_OOM_FAIL_AT=$1 GP_OOM_COUNT_FILE="$TMP/count" LD_PRELOAD="$INJECT" \
        "$CONFORMANCE" "$2" >"$TMP/log" 2>&1 </dev/null
    rc=$?
}

echo "1..$(( 2 * $(echo $PLUGINS | wc -w) ))"
for path in $PLUGINS; do
    p=$(basename "$path" .so); p=${p#gravplug-}
    case $path in */emu/*) p="$p (emulated)"; samples=10 ;; *) samples=20 ;; esac
    rm -f "$TMP/count"
    run 0 "$path"
    total=$(cat "$TMP/count" 2>/dev/null || echo 0)
    [ $rc = 0 ] && [ "$total" -gt 0 ]
    ok $? "$p: the suite passes with the injector loaded, counting $total allocations of the plugin"
    [ "$total" -gt 0 ] || { ok 1 "$p: nothing to fail"; continue; }
    bad=""; stopped=0; s=1
    while [ $s -le $samples ]; do
        k=$(( (total * s + samples - 1) / samples ))   # spread over 1..total, the last included
        run $k "$path"
        # 1: checks failed; 255: the suite bailed out (init refused)
        case $rc in 0) ;; 1|255) stopped=$((stopped + 1)) ;; *) bad="$bad k=$k:status-$rc" ;; esac
        s=$((s + 1))
    done
    [ -z "$bad" ]
    ok $? "$p: $samples runs, each failing one of its allocations ($stopped noticed it): no signal${bad:+ (failed:$bad)}"
done
exit $fail
