#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cudabench, the benchmark a lent GPU runs (bench/gpu/run-all.sh), on the
# CPU emulation of the CUDA plugins: a block step through both ABI paths
# for cuda-tree (in index order and in the order drawn) and cuda-direct,
# every phase reported, and a bad option refused with a sentence. A device
# session has minutes; a benchmark that breaks there loses them.
# (generated from tests/gpu/cudabench-emu.sh by tests/gpu/module.mk)
build="@BUILD@"
bench="$build/bench/cudabench"
emu="$build/emu/plugins"
if [ ! -x "$bench" ] || [ ! -e "$emu/gravplug-cuda-tree.so" ]; then
    echo "1..0 # SKIP no emulated CUDA plugins or cudabench (built only where nvcc is)"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo 1..4
fail=0
n=0
# check DESCRIPTION SELECT ORDER PLUGIN -- cudabench block options...
check() {
    d=$1; sel=$2; ord=$3; plug=$4; shift 5
    n=$((n + 1))
    if GRAVPLUG_PATH="$emu" OMP_NUM_THREADS=2 "$bench" block --n 1024 --active 0.05 --steps 2 \
            --plugin "$plug" --select "$sel" "$@" > "$tmp/out" 2>&1 &&
        grep -q "^RESULT,block,1\.1,$plug,.*,$sel,$ord\$" "$tmp/out" &&
        grep -q "^RESULT,block,1\.0,$plug,.*,$sel,$ord\$" "$tmp/out" &&
        grep -q "^# 1.1 path, median ms per step: predict .*get_positions .*set_active_subset .*compute_forces .*kick (the host) .*set_state" "$tmp/out"; then
        echo "ok $n - $d"
    else
        echo "not ok $n - $d"; sed 's/^/# /' "$tmp/out"; fail=1
    fi
}
check "cuda-tree, the largest |a| in index order: both ABI paths and every phase" accel index cuda-tree -- \
    --model plummer
check "cuda-tree, a random subset in the order drawn: both ABI paths and every phase" random drawn cuda-tree -- \
    --model galaxy --order drawn
check "cuda-direct, a random subset: both ABI paths and every phase" random index cuda-direct -- \
    --model plummer --config precision=mixed
n=$((n + 1))
if GRAVPLUG_PATH="$emu" "$bench" block --order sideways > "$tmp/out" 2>&1; then
    echo "not ok $n - --order sideways is refused"; fail=1
elif grep -q "order takes index" "$tmp/out"; then
    echo "ok $n - --order sideways is refused with a sentence saying what it takes"
else
    echo "not ok $n - --order sideways is refused with a sentence saying what it takes"; sed 's/^/# /' "$tmp/out"; fail=1
fi
exit $fail
