#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the example simulations and regenerates their PNGs.
#   sh examples/run-examples.sh                 # all of them
#   sh examples/run-examples.sh plummer kepler  # some
# From the repository root, after `make`. Runs write to out/examples/NAME;
# the PNGs go to examples/NAME/. Each takes from seconds to about a minute
# on 2 CPU cores.
set -e
cd "$(dirname "$0")/.."
GRAVHOST=${GRAVHOST:-build/bin/gravhost}
PLOT="python3 host_stub/plot/gravplot.py"
names=${*:-"plummer hernquist nfw galaxy uniform-collapse kepler file"}
for name in $names; do
  cfg=examples/$name/$name.cfg
  out=out/examples/$name
  [ -f "$cfg" ] || { echo "no such example: $name" >&2; exit 1; }
  rm -rf "$out"
  echo "== $name"
  start=$(date +%s)
  "$GRAVHOST" run "$cfg" --output "$out"
  echo "   simulated in $(( $(date +%s) - start )) s"
  case $name in
    galaxy)
      $PLOT "$out" --out "examples/$name" --extent 1.2 --bins 60
      $PLOT --snapshot "$out/snap_0000.h5" --snapshot "$out/snap_0002.h5" --axes xz --extent 1.2 \
            --bins 60 --out "examples/$name" ;;
    kepler)
      $PLOT "$out" --out "examples/$name" --extent 1.6 --bins 80 ;;
    *)
      $PLOT "$out" --out "examples/$name" ;;
  esac
done
