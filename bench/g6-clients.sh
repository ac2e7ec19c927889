#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/g6-clients.sh [N...] — the GRAPE-6 clients of AMUSE 2024.6.0 (ph4,
# phiGRAPE; G6_CLIENTS=ph4,phigrape to choose) on libgravplug-g6 against
# each client's own CPU mode: the same Plummer sphere (seed 7, eps = 0.01,
# the client's eta) integrated by both, wall clock of evolve_model and
# |dE/E| (a client chooses its steps by the same criterion either way, so
# equal eta is equal error). The library drives cpu-direct
# (GRAVPLUG_G6_PLUGIN to change it) with OMP_NUM_THREADS=1 and with all
# cores. Needs .ci/install-amuse and `make g6`; the workers come from
# .ci/build-g6-workers (phiGRAPE only where it builds it). Results:
# bench/results/grape6/README.md. TEND_<N> overrides the end time per N.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV=${GRAVPLUG_AMUSE_VENV:-$HOME/.local/share/gravplug/amuse-venv}
PLUGIN=${GRAVPLUG_G6_PLUGIN:-$ROOT/build/plugins/gravplug-cpu-direct.so}
dir=$("$ROOT/.ci/build-g6-workers" "$ROOT/build/lib/libgravplug-g6.a")
clients=${G6_CLIENTS:-ph4,phigrape}
if [ -f "$dir/phigrape.skip" ]; then
    echo "# phiGRAPE left out: $(cat "$dir/phigrape.skip")"
    clients=$(echo "$clients" | sed 's/,*phigrape//; s/^,//')
fi
echo "# $(uname -n), $(nproc) cores, load: $(uptime | sed 's/.*load average: //')"
echo "# plugin $PLUGIN"
printf '%-6s %-6s %-28s %12s %10s\n' N tend run "|dE/E|" wall_s
for n in ${*:-1024 4096}; do
    tend=$(eval echo "\${TEND_$n:-}")
    [ -n "$tend" ] || tend=$( [ "$n" -le 1024 ] && echo 1.0 || echo 0.25 )
    for client in $(echo "$clients" | tr , ' '); do
        for threads in 1 "$(nproc)"; do
            PATH="$VENV/bin:$PATH" GRAVPLUG_G6_PLUGIN="$PLUGIN" OMP_NUM_THREADS=$threads GP_G6_MAXDX=1e9 \
                "$VENV/bin/python" "$ROOT/tests/lib/g6_clients.py" "$dir" "$n" "$tend" "$client" 2>&1 >/dev/null |
                awk -v n="$n" -v t="$tend" -v th="$threads" '/^RESULT/ {
                    run = ($3 == "cpu") ? $2 " CPU mode" : $2 " library, " th " thread" (th > 1 ? "s" : "");
                    if ($3 == "cpu" && th > 1) next;  # the CPU mode once per N
                    printf "%-6s %-6s %-28s %12s %10s\n", n, t, run, $5, $6 }'
        done
    done
done
echo "# load after: $(uptime | sed 's/.*load average: //')"
