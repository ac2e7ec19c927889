#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# g6-clients.t — the real GRAPE-6 clients on libgravplug-g6: AMUSE
# 2024.6.0's ph4 built in its GPU mode against build/lib/libgravplug-g6.a
# and phiGRAPE's g6 worker (where AMUSE has a Fortran MPI compiler), each
# integrating a Plummer sphere beside its own CPU mode on cpu-direct
# (tests/lib/g6_clients.py: |dE/E| within 2x, positions within the
# integration error). Skips where AMUSE or ph4 is not installed
# (.ci/install-amuse), and phiGRAPE alone with build-g6-workers' reason.
# The workers are built on first use and cached by the library's checksum
# (.ci/build-g6-workers, ~2 min; install-amuse builds them ahead where the
# library exists).
ROOT='@ROOT@'
BUILD='@BUILD@'
VENV=${GRAVPLUG_AMUSE_VENV:-$HOME/.local/share/gravplug/amuse-venv}
PY=$VENV/bin/python
if [ -n "${GP_SANITIZE:-}" ]; then
    echo "1..0 # SKIP make sanitize's instrumented archive needs the sanitizer runtime in ph4's worker, whose Makefile links none (make test runs the clients)"
    exit 0
fi
if ! [ -x "$PY" ] || ! "$PY" -c 'import amuse, mpi4py; from amuse.community.ph4.interface import ph4' >/dev/null 2>&1; then
    echo "1..0 # SKIP AMUSE with ph4 is not installed in $VENV (run .ci/install-amuse)"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$ROOT/tests/tap-lib.sh"
if ! "$ROOT/.ci/build-g6-workers" "$BUILD/lib/libgravplug-g6.a" > "$tmp/dir" 2> "$tmp/build.log"; then
    if grep -q "pip download\|No matching distribution\|Could not find" "$tmp/build.log" &&
       ! ls "$VENV/share/gravplug-g6/sdist/"amuse_ph4-*.tar.gz >/dev/null 2>&1; then
        echo "1..0 # SKIP the ph4 sdist could not be downloaded (offline?): $(tail -1 "$tmp/build.log")"
        exit 0
    fi
    echo "1..1"
    echo "not ok 1 - .ci/build-g6-workers builds the clients' workers against the library"
    tail -30 "$tmp/build.log" | sed 's/^/# /'
    exit 1
fi
dir=$(cat "$tmp/dir")
clients=ph4
[ -x "$dir/phigrape_worker" ] && clients=ph4,phigrape
echo "ok 1 - the clients are built against the library ($clients, in $dir)"
# the venv's mpiexec first: AMUSE spawns its workers through it
PATH="$VENV/bin:$PATH" GRAVPLUG_G6_PLUGIN="$BUILD/plugins/gravplug-cpu-direct.so" OMP_NUM_THREADS=1 \
    GP_TAP_FIRST=2 timeout 600 "$PY" "$ROOT/tests/lib/g6_clients.py" "$dir" 256 1.0 \
    "$clients" > "$tmp/run.out" 2> "$tmp/run.log"
rc=$?
grep -E '^(ok|not ok|#)' "$tmp/run.out"
n=$(( $(grep -cE '^(ok|not ok)' "$tmp/run.out") + 1 ))
if [ "$rc" -ne 0 ]; then
    tail -20 "$tmp/run.log" | sed 's/^/# /'
fi
if [ "$clients" = ph4 ]; then
    n=$((n + 1))
    echo "ok $n # SKIP phiGRAPE is not built: $(cat "$dir/phigrape.skip" 2>/dev/null || echo "no reason recorded in $dir")"
fi
echo "1..$n"
exit $rc
