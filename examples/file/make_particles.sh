#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Writes particles.txt: two Plummer spheres (1000 particles and mass 0.5
# each, Plummer radius 0.3), centred at x = -3 and x = +3 and approaching
# each other at 0.2 each. Run from the repository root after `make`:
#   sh examples/file/make_particles.sh
set -e
here=$(dirname "$0")
gravic=${GRAVIC:-build/bin/gravic}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gravic" plummer 1000 "$tmp/a.txt" seed=11 mass=0.5 scale=0.3
"$gravic" plummer 1000 "$tmp/b.txt" seed=12 mass=0.5 scale=0.3
{
  echo "# two Plummer spheres on a head-on collision course (examples/file)"
  echo "# x y z vx vy vz m"
  awk '!/^#/ { printf "%.9g %.9g %.9g %.9g %.9g %.9g %.9g\n", $1 - 3, $2, $3, $4 + 0.2, $5, $6, $7 }' "$tmp/a.txt"
  awk '!/^#/ { printf "%.9g %.9g %.9g %.9g %.9g %.9g %.9g\n", $1 + 3, $2, $3, $4 - 0.2, $5, $6, $7 }' "$tmp/b.txt"
} > "$here/particles.txt"
echo "wrote $here/particles.txt"
