#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Plummer N=1000 eps=0, T=2: ours cc split/kepler and Huayno CC/CC_KEPLER, alternated, one thread each
V=/root/.local/share/gravplug/amuse-venv
M=/work/main
export OMP_NUM_THREADS=1
for eta in 0.5 0.3 0.15; do
  for tb in split kepler; do
    echo "# $(uptime)"
    timeout 900 $M/build/bench/hold-vs-shared --ic-path plummer1000.txt --t 2 --sample 0.25 --threads 1 --eps 0 --plugin cpu-direct --run cc:dt=0.125,eta=$eta,two_body=$tb | grep -v "^#\|not bracketed"
  done
  for it in CC CC_KEPLER; do
    echo "# $(uptime)"
    timeout 900 $V/bin/python $M/bench/huayno-hold.py --ic plummer1000.txt --eps 0 --t 2 --sample 0.25 --dt 0.125 --eta $eta --inttype $it 2>&1 | grep -v "^#\|^$\|AMUSE\|DOI\|ADS\|cite\|In this session"
  done
done
# (N = 4096: the same with plummer4096.txt, --t 0.5 --sample 0.125; the
# Plummer spheres from bench/huayno-hold.py --write FILE --n N, numpy seed 42)
