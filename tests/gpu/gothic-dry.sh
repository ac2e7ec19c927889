#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/gpu/run-all.sh's gothic stage, dry: the whole stage at toy sizes on
# the CPU emulation of cuda-tree (cpu-tree where nvcc is missing), into a
# scratch folder. A device session has minutes; a stage that breaks there
# loses them. Checks that every part ran and was read into the summary, that
# the summary comes first, and that bad settings are refused with a sentence.
# (generated from tests/gpu/gothic-dry.sh by tests/gpu/module.mk)
root="@ROOT@"
build="@BUILD@"
emu="$build/emu/plugins"
if ! command -v python3 > /dev/null 2>&1; then
    echo "1..0 # SKIP python3 is not on PATH (bench/gpu/gothic.py needs it)"
    exit 0
fi
tree=cuda-tree
[ -e "$emu/gravplug-cuda-tree.so" ] || tree=cpu-tree
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo 1..9
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; [ -f "$2" ] && sed 's/^/# /' "$2"; }
f="$tmp/gpu-dry-run-gothic.txt"
cd "$root" || exit 1
if NO_BUILD=1 GPU_OUT="$tmp" GPU_NAME=dry-run GRAVPLUG_PATH="$emu" GPU_TREE=$tree OMP_NUM_THREADS=2 \
        GOTHIC_N="9 10" GOTHIC_CORES_N=9 GOTHIC_STEP_N=10 GOTHIC_SHARED_N=10 GOTHIC_T=0.25 \
        bench/gpu/run-all.sh gothic > "$tmp/stage" 2>&1 && grep -q "^gothic: .* (exit 0)$" "$tmp/stage" &&
        grep -q "^# gpu: dry-run$" "$f"; then
    ok "the stage runs on $tree and writes gpu-dry-run-gothic.txt under GPU_OUT, the GPU's name in it"
else
    nok "the stage runs on $tree and writes gpu-dry-run-gothic.txt under GPU_OUT, the GPU's name in it" "$tmp/stage"
fi
# the summary before the first part's raw output, after the header
s=$(grep -n '^## Summary$' "$f" | cut -d: -f1)
r=$(grep -n '^## '"$tree"', 2^9$' "$f" | cut -d: -f1)
if [ -n "$s" ] && [ -n "$r" ] && [ "$s" -lt "$r" ] && ! sed -n "1,${s}p" "$f" | grep -q '^[^#]'; then
    ok "the summary comes first, after the header"
else
    nok "the summary comes first, after the header" "$f"
fi
# make run's integrator and settings were read from host_stub/default.cfg
scheme=$(sed -n 's/^ *name = "\([a-z0-9-]*\)".*/\1/p' host_stub/default.cfg | head -n 1)
if [ -n "$scheme" ] && grep -q "^# make run's settings (host_stub/default.cfg): galaxy .*; $scheme dt=" "$f" &&
        grep -q -- "--run $scheme:dt=" "$f"; then
    ok "make run's model and block scheme ($scheme) come from host_stub/default.cfg"
else
    nok "make run's model and block scheme ($scheme) come from host_stub/default.cfg" "$f"
fi
# each N: the block run's error and wall, leapfrog's three runs, a ratio or "not bracketed"
good=0
for e in 9 10; do
    grep -q "^| $scheme against leapfrog at equal max dE/E, $tree | 2^$e | [0-9.e+-]* in [0-9.e+-]* s ([0-9]* steps) | leapfrog dt 0.03125: .*dt 0.015625: .*dt 0.0078125: .* | \(leapfrog takes [0-9.]*x the block run's wall\)\? |$" "$f" ||
        good=1
done
if [ $good -eq 0 ]; then ok "block against leapfrog at equal error, both sizes, every run read"
else nok "block against leapfrog at equal error, both sizes, every run read" "$f"; fi
# the block run again on the drifted tree, against the same leapfrog runs
good=0
for e in 9 10; do
    grep -q "^| $scheme with drift = on against leapfrog at equal max dE/E, $tree | 2^$e | [0-9.e+-]* in [0-9.e+-]* s ([0-9]* steps) | leapfrog dt 0.03125: .* |" "$f" ||
        good=1
done
if [ $good -eq 0 ]; then ok "the block run with drift = on against the same leapfrog runs, both sizes"
else nok "the block run with drift = on against the same leapfrog runs, both sizes" "$f"; fi
if grep -q "^| $scheme, cpu-tree on 2 threads | 2^9 | [0-9.e+-]* s, max dE/E [0-9.e+-]* | $tree [0-9.e+-]* s, max dE/E [0-9.e+-]* | $tree [0-9.e+-]*x as fast |$" "$f" &&
        grep -q "^| leapfrog dt 0.015625, cpu-tree on 2 threads | 2^9 | .* | $tree .* | $tree [0-9.e+-]*x as fast |$" "$f"; then
    ok "the host's cores against $tree: the block run and leapfrog, with ratios"
else
    nok "the host's cores against $tree: the block run and leapfrog, with ratios" "$f"
fi
if [ "$(grep -c "^| 1% block step (largest |a|), the plugin's calls, .* | 2^10 | [0-9.]* ms |" "$f")" -eq 4 ] &&
        grep -q "^| shared step through ABI 1.1 (predict, forces, state), bmax theta 0.5 | 2^10 | [0-9.]* ms | no Bonsai figure at this N |" "$f"; then
    ok "the 1% block step (two opening criteria, drift off and on) and the shared step, in ms"
else
    nok "the 1% block step (two opening criteria, drift off and on) and the shared step, in ms" "$f"
fi
# a plugin that is not there: every part says it did not finish, and the raw
# output keeps the loader's sentence naming it
if NO_BUILD=1 GPU_OUT="$tmp/bad" GPU_NAME=dry-run GPU_TREE=nosuch-tree GOTHIC_N=9 GOTHIC_CORES_N=9 \
        GOTHIC_STEP_N=9 GOTHIC_SHARED_N=9 GOTHIC_T=0.25 bench/gpu/run-all.sh gothic > "$tmp/bad.out" 2>&1 &&
        grep -q "^gothic: .* (exit 1)$" "$tmp/bad.out" &&
        grep -q "^| $scheme against leapfrog, nosuch-tree | 2^9 | did not finish |" "$tmp/bad/gpu-dry-run-gothic.txt" &&
        grep -q "^hold-vs-shared: nosuch-tree: no plugin named 'nosuch-tree'" "$tmp/bad/gpu-dry-run-gothic.txt" &&
        grep -q "^# [0-9.]* s, exit [1-9]" "$tmp/bad/gpu-dry-run-gothic.txt"; then
    ok "a missing plugin: the stage exits 1, the parts say they did not finish, the raw output keeps why"
else
    nok "a missing plugin: the parts say they did not finish, the raw output keeps why" "$tmp/bad/gpu-dry-run-gothic.txt"; cat "$tmp/bad.out"
fi
# hold-vs-shared's --energy: a malformed spec is refused with a sentence
if "$build/bench/hold-vs-shared" --n 64 --t 0.25 --energy "cpu-direct:eps" --run leapfrog:dt=0.125 > "$tmp/e" 2>&1; then
    nok "--energy PLUGIN:NAME without =VALUE is refused" "$tmp/e"
elif grep -q "energy wants PLUGIN\[:NAME=VALUE,...\]" "$tmp/e"; then
    ok "--energy PLUGIN:NAME without =VALUE is refused with a sentence saying what it wants"
else
    nok "--energy PLUGIN:NAME without =VALUE is refused with a sentence saying what it wants" "$tmp/e"
fi
exit $fail
