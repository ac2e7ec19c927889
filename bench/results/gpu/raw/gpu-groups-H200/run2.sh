#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
export LD_LIBRARY_PATH=$PWD/build/devlibs
# (run 2: group-cell sizes compared, and the 2^24 galaxy block steps; GP_GROUP_CELL was a temporary override, since removed)
B=build/bench/cudabench
O=$OUT
for v in old new 4096 16384; do
  p=build/plugins; [ $v = old ] && p=build/oldplug; K=; case $v in [0-9]*) K=$v;; esac
  for m in plummer galaxy; do
  env ${K:+GP_GROUP_CELL=$K} GRAVPLUG_PATH=$p timeout -k 5 40 $B tree --model $m --n 1048576 --repeats 5 --sample 256 \
    --config "mac=bmax theta=0.5" 2>&1 | grep ^RESULT | sed "s/^RESULT/RESULT,$v/" >> $O/tree.txt
  done
done
echo tree done
for K in 2048 4096 16384; do for sel in random accel; do
  env GP_GROUP_CELL=$K GRAVPLUG_PATH=build/plugins timeout -k 5 40 $B block --plugin cuda-tree --model plummer --n 1048576 \
    --active 0.01 --steps 8 --select $sel 2>&1 | grep ^RESULT | sed "s/^RESULT/RESULT,K$K/" >> $O/block.txt
done; done
echo blockK done
for x in "new accel" "old accel" "new random"; do set -- $x
  p=build/plugins; [ $1 = old ] && p=build/oldplug
  GRAVPLUG_PATH=$p timeout -k 5 80 $B block --plugin cuda-tree --model galaxy --n 16777216 --active 0.01 --steps 8 \
    --select $2 2>&1 | grep ^RESULT | sed "s/^RESULT/RESULT,$1/" >> $O/block.txt
done
echo all done
