#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# nakasato.sh -- the kind of table Nakasato (2012) gives in tables 6-7: mean
# relative acceleration error of the tree against direct summation, for
# theta 0.3 0.5 0.7 1.0 and N = 10k 50k 100k 200k, on a three-component
# disk galaxy (bulge:disk:halo mass 1:2:12), with their setting (monopole,
# l/theta + s < d, single precision) and with this plugin's default
# (quadrupole, mixed precision). Appends to
# bench/results/cpu-tree/raw/nakasato-galaxy.csv.
#   usage: bench/nakasato.sh [sample]
cd "$(dirname "$0")/.." || exit 1
out=bench/results/cpu-tree/raw/nakasato-galaxy.csv
sample=${1:-2000}
for n in 10000 50000 100000 200000; do
  for setting in "order=monopole precision=single" "order=quadrupole precision=mixed"; do
    set -- $setting
    bench/sweep.py --out $out --model galaxy --n $n --repeats 1 --sample $sample --threads 2 \
      --ic halo_mass=1 --ic bulge_mass=0.0833333 --ic disk_mass=0.1666667 \
      --set eps=0.01 --set mac=bmax --set "$1" --set "$2" --grid theta=0.3,0.5,0.7,1.0
  done
done
