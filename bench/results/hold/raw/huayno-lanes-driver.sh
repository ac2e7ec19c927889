#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Plummer N = 1000 (T = 2) and 4096 (T = 0.5), cpu-direct, one thread each:
# ours (hold, cc) and Huayno (HOLD_KDK, CC), alternated run by run, with
# uptime before each; then eps = 0: cc with Kepler pairs and Huayno's
# CC_KEPLER. Usage: huayno-lanes-driver.sh OUTDIR [REP] (writes plummer1000.tsv, plummer4096.tsv,
# kepler1000.tsv there; the particles are plummerN.txt from
# bench/huayno-hold.py --write FILE --n N).
V=/root/.local/share/gravplug/amuse-venv
M=/work/main
O=${1:-.}
REP=${2:-rep1}
export OMP_NUM_THREADS=1
ours() { # file N T sample eps spec
  echo "# $(uptime)" >> $1
  timeout 900 $M/build/bench/hold-vs-shared --ic-path plummer$2.txt --t $3 --sample $4 --threads 1 --eps $5 --plugin cpu-direct --run $6 | grep -v "^#\|not bracketed\|^run" | sed "s/^/$REP\t/" >> $1
}
huayno() { # file N T sample eps inttype eta
  echo "# $(uptime)" >> $1
  timeout 900 $V/bin/python $M/bench/huayno-hold.py --ic plummer$2.txt --eps $5 --t $3 --sample $4 --dt 0.125 --eta $7 --inttype $6 2>&1 | grep -v "^#\|^$\|AMUSE\|DOI\|ADS\|cite\|In this session\|^run" | sed "s/^/$REP\t/" >> $1
}
F=$O/plummer1000.tsv; echo "# plummer N=1000 T=2 eps=0.01 git $(git -C $M rev-parse --short HEAD) $(date -u +%FT%TZ)" >> $F
for p in "0.5 1.0 0.5" "0.3 0.3 0.3" "0.1 0.1 0.1"; do
  set -- $p
  ours $F 1000 2 0.25 0.01 hold:dt=0.125,eta=$1; huayno $F 1000 2 0.25 0.01 HOLD_KDK $2
  ours $F 1000 2 0.25 0.01 cc:dt=0.125,eta=$3;   huayno $F 1000 2 0.25 0.01 CC $3
done
ours $F 1000 2 0.25 0.01 cc:dt=0.125,eta=0.15
F=$O/plummer4096.tsv; echo "# plummer N=4096 T=0.5 eps=0.01 git $(git -C $M rev-parse --short HEAD) $(date -u +%FT%TZ)" >> $F
for p in "0.5 0.3" "0.3 0.1"; do
  set -- $p
  ours $F 4096 0.5 0.125 0.01 hold:dt=0.125,eta=$1; huayno $F 4096 0.5 0.125 0.01 HOLD_KDK $2
  ours $F 4096 0.5 0.125 0.01 cc:dt=0.125,eta=$1;   huayno $F 4096 0.5 0.125 0.01 CC $2
done
F=$O/kepler1000.tsv; echo "# plummer N=1000 T=2 eps=0 git $(git -C $M rev-parse --short HEAD) $(date -u +%FT%TZ)" >> $F
for eta in 0.5 0.3 0.15; do
  ours $F 1000 2 0.25 0 cc:dt=0.125,eta=$eta,two_body=kepler; huayno $F 1000 2 0.25 0 CC_KEPLER $eta
  huayno $F 1000 2 0.25 0 CC $eta
done
echo "# done $(date -u +%FT%TZ)" >> $F
