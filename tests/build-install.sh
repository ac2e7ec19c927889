#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `make install PREFIX=<temp>` then a tiny host compiled with nothing but
# `pkg-config --cflags --libs gravplug`, which loads cpu-direct by short
# name from the installed tree. (generated from tests/build-install.sh)
unset MFLAGS MAKELEVEL GRAVPLUG_PATH
# Keep the outer make's variable overrides (e.g. NVCC=), drop its jobserver.
MAKEFLAGS=$(printf '%s' "${MAKEFLAGS:-}" | sed -E 's/--jobserver-(auth|fds)=[^ ]*//g; s/(^| )-j[0-9]*( |$)/ /g')
export MAKEFLAGS
for tool in pkg-config cc; do
    command -v $tool >/dev/null 2>&1 || { echo "1..0 # SKIP $tool is not installed (sudo .ci/install-deps)"; exit 0; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gravplug-install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
fail=0
t() { # t N DESCRIPTION COMMAND...: one TAP line, the log as comments on failure
    n=$1; d=$2; shift 2
    if "$@" >"$tmp/log" 2>&1; then echo "ok $n - $d"; else echo "not ok $n - $d"; sed 's/^/# /' "$tmp/log"; fail=1; fi
}
echo 1..7
t 1 "make install PREFIX=$prefix" @MAKE@ -s -C "@ROOT@" BUILD="@BUILD@" install PREFIX="$prefix"
t 2 "headers, library, plugin and gravplug.pc are installed" \
    test -f "$prefix/include/gravplug.h" -a -f "$prefix/include/gravplug_loader.h" \
         -a -f "$prefix/lib/libgravplug.so" -a -f "$prefix/lib/gravplug/gravplug-cpu-direct.so" \
         -a -f "$prefix/lib/pkgconfig/gravplug.pc"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
t 3 "pkg-config --cflags --libs gravplug" sh -c 'pkg-config --cflags --libs gravplug | grep -q -- "-lgravplug"'
cat > "$tmp/host.c" <<'HOST'
#include <stdio.h>
#include <string.h>
#include <gravplug.h>
#include <gravplug_loader.h>
int main(void)
{
    gp_plugin *p; gp_solver *s; char err[1024];
    double pos[6] = {0, 0, 0, 0, 0, 2}, m[2] = {1, 1}, acc[6];
    if (gp_plugin_open("cpu-direct", &p, err, sizeof err) != GP_OK) { puts(err); return 1; }
    const gp_api *api = gp_plugin_api(p);
    if (api->init(&s, NULL) != GP_OK) { puts(api->last_error(NULL)); return 1; }
    api->set_particles(s, 2, pos, m);
    api->compute_forces(s, acc, NULL);
    printf("%s %g\n", gp_plugin_path(p), acc[2]);
    api->finalize(s);
    gp_plugin_close(p);
    return acc[2] == 0.25 ? 0 : 1;
}
HOST
t 4 "a host compiles and links with pkg-config's flags alone" \
    sh -c "cc -std=c99 -Wall -o '$tmp/host' '$tmp/host.c' \$(pkg-config --cflags --libs gravplug)"
t 5 "the host runs and computes a two-body force" \
    sh -c "LD_LIBRARY_PATH='$prefix/lib' '$tmp/host' > '$tmp/host.out'; rc=\$?; cat '$tmp/host.out'; exit \$rc"
t 6 "it loaded cpu-direct from the installed tree" \
    sh -c "cat '$tmp/host.out'; grep -q '^$prefix/lib/gravplug/gravplug-cpu-direct.so ' '$tmp/host.out'"
t 7 "the installed demo runs" env LD_LIBRARY_PATH="$prefix/lib" "$prefix/bin/gravplug-demo" 64
exit $fail
