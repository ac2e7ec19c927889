#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# one device call: cuda-tree i-groups by group cells (new) against key-prefix levels (old)
export LD_LIBRARY_PATH=$PWD/build/devlibs
B=build/bench/cudabench
O=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/gpu.txt
prove -e '' build/t/conformance-cuda-tree.t build/t/gpu-accuracy.t build/t/gpu-edges.t build/t/gpu-abi11.t > $O/tests.txt 2>&1
echo "tests rc $?"
blk() { # label, env, args...
    lab=$1; shift; pth=$1; shift
    echo "## $lab $*" >> $O/block.txt
    GRAVPLUG_PATH=$pth CUDABENCH_LOG=debug timeout -k 5 ${T:-40} $B block "$@" > $O/tmp.txt 2> $O/tmp.err
    echo "rc $?" >> $O/block.txt
    sed "s/^RESULT/RESULT,$lab/" $O/tmp.txt >> $O/block.txt
    grep -E 'walk:|compute_forces n=' $O/tmp.err | head -6 >> $O/block-log.txt
}
for m in plummer galaxy; do for sel in random accel; do for v in old new; do
  p=build/plugins; [ $v = old ] && p=build/oldplug
  echo "== $v $m $sel 2^20" >> $O/block-log.txt
  blk $v $p --plugin cuda-tree --model $m --n 1048576 --active 0.01 --steps 8 --select $sel
done; done; done
echo "block 2^20 done"
for v in old new; do
  p=build/plugins; [ $v = old ] && p=build/oldplug
  GRAVPLUG_PATH=$p timeout -k 5 60 $B tree --model plummer --n 1048576 --repeats 3 --sample 1024 --active 0.01 \
    --config "mac=bmax theta=0.5" 2>&1 | sed "s/^RESULT/RESULT,$v/" >> $O/tree.txt
done
echo "tree done"
T=100
for x in "new random" "new accel" "old accel"; do set -- $x
  p=build/plugins; [ $1 = old ] && p=build/oldplug
  echo "== $1 plummer $2 2^24" >> $O/block-log.txt
  blk $1 $p --plugin cuda-tree --model plummer --n 16777216 --active 0.01 --steps 8 --select $2
done
echo "all done"
