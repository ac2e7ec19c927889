#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `make install PREFIX=<temp>`, then what a user of the installed tree does:
# a tiny host and a gp_sim leapfrog program, both compiled outside the tree
# with nothing but `pkg-config --cflags --libs gravplug`, load their plugins
# by short name from the installed tree; then `make uninstall` leaves none
# of our files behind. The same once more with DESTDIR staging.
# (generated from tests/build/build-install.sh)
unset MFLAGS MAKELEVEL GRAVPLUG_PATH
# Keep the outer make's variable overrides (e.g. NVCC=), drop its jobserver.
MAKEFLAGS=$(printf '%s' "${MAKEFLAGS:-}" | sed -E 's/--jobserver-(auth|fds)=[^ ]*//g; s/(^| )-j[0-9]*( |$)/ /g')
export MAKEFLAGS
if [ -n "${GP_SANITIZE:-}" ]; then
    echo "1..0 # SKIP make sanitize's instrumented build is not what make install ships"
    exit 0
fi
for tool in pkg-config cc nm readelf; do
    command -v $tool >/dev/null 2>&1 || { echo "1..0 # SKIP $tool is not installed (sudo .ci/install-deps)"; exit 0; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gravplug-install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
version=$(cat "@ROOT@/VERSION")
inc="$prefix/include/gravplug"
. "@ROOT@/tests/tap-lib.sh"
echo 1..17
t 1 "make install PREFIX=$prefix" @MAKE@ -s -C "@ROOT@" BUILD="@BUILD@" install PREFIX="$prefix"
t 2 "the public headers are in include/gravplug/" sh -c "
    for h in gravplug.h gravplug_loader.h gp_integrator.h ic.h snapshot.h; do
        test -f '$inc/'\$h || { echo \"missing $inc/\$h\"; exit 1; }
    done"
t 3 "libgravplug.so.$version, with links .so.1 and .so, a plugin, gravplug.pc and gravhost.1 are installed" sh -c "
    test -f '$prefix/share/man/man1/gravhost.1' &&
    test -f '$prefix/lib/libgravplug.so.$version' -a ! -L '$prefix/lib/libgravplug.so.$version' &&
    test \"\$(readlink '$prefix/lib/libgravplug.so.1')\" = libgravplug.so.$version &&
    test \"\$(readlink '$prefix/lib/libgravplug.so')\" = libgravplug.so.1 &&
    test -f '$prefix/lib/gravplug/gravplug-cpu-tree.so' -a -f '$prefix/lib/pkgconfig/gravplug.pc'"
t 4 "the library's SONAME is libgravplug.so.1" \
    sh -c "readelf -d '$prefix/lib/libgravplug.so.$version' | tee /dev/stderr | grep -q 'SONAME.*\[libgravplug\.so\.1\]'"
# Every gp_ name the library exports must be declared in an installed
# header, or a user of the installed tree cannot call it.
t 5 "every name the installed library exports is declared in an installed header" sh -c "
    bad=0
    for s in \$(nm -D --defined-only '$prefix/lib/libgravplug.so' | awk 'NF >= 3 { sub(/@.*/, \"\", \$3); print \$3 }'); do
        grep -qw \"\$s\" '$inc'/*.h || { echo \"not declared: \$s\"; bad=1; }
    done
    exit \$bad"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
t 6 "pkg-config --cflags --libs gravplug names include/gravplug and -lgravplug" \
    sh -c "pkg-config --cflags --libs gravplug | tee /dev/stderr | grep -q -- '-I$inc .*-lgravplug'"
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
t 7 "a host compiles and links with pkg-config's flags alone" \
    sh -c "cc -std=c99 -Wall -o '$tmp/host' '$tmp/host.c' \$(pkg-config --cflags --libs gravplug)"
t 8 "the host runs, computes a two-body force, with cpu-direct from the installed tree" \
    sh -c "LD_LIBRARY_PATH='$prefix/lib' '$tmp/host' > '$tmp/host.out'; rc=\$?; cat '$tmp/host.out'; test \$rc = 0 &&
           grep -q '^$prefix/lib/gravplug/gravplug-cpu-direct.so ' '$tmp/host.out'"
# A gp_sim program as a user writes it: initial conditions from gp_ic_make,
# cpu-tree by short name, a leapfrog for 32 steps; it includes every
# installed header (they must find each other from include/gravplug/) and
# is compiled with warnings as errors, so the headers are clean C99 too.
cat > "$tmp/sim.c" <<'SIM'
#include <math.h>
#include <stdio.h>
#include <gravplug.h>
#include <gravplug_loader.h>
#include <gp_sim.h>
#include <gp_integrator.h>
#include <ic.h>
#include <snapshot.h>
static int fail(gp_sim *sim, const char *what)
{
    fprintf(stderr, "%s: %s\n", what, gp_sim_last_error(sim));
    return 1;
}
int main(void)
{
    char err[1024];
    gp_ic ic;
    if (gp_ic_make("plummer", 2000, 7, NULL, &ic, err, sizeof err) != 0) { fprintf(stderr, "%s\n", err); return 1; }
    gp_plugin *p;
    if (gp_plugin_open("cpu-tree", &p, err, sizeof err) != GP_OK) { fprintf(stderr, "%s\n", err); return 1; }
    printf("plugin %s\n", gp_plugin_path(p));
    gp_plugin_close(p);
    gp_sim *sim;
    if (gp_sim_new(&sim) != GP_OK) return 1;
    const char *names[] = {"eps", "theta"}, *values[] = {"0.05", "0.5"};
    if (gp_sim_open_solver(sim, "cpu-tree", 2, names, values) != GP_OK) return fail(sim, "open_solver");
    if (gp_sim_set_particles(sim, ic.n, ic.pos, ic.vel, ic.mass, ic.id) != GP_OK) return fail(sim, "set_particles");
    if (gp_sim_set_integrator(sim, "leapfrog") != GP_OK) return fail(sim, "set_integrator");
    if (gp_sim_set_integrator_param(sim, "dt", "0.0078125") != GP_OK) return fail(sim, "dt");
    double k0, w0, k1, w1;
    if (gp_sim_energies(sim, &k0, &w0) != GP_OK) return fail(sim, "energies");
    if (gp_sim_evolve(sim, 0.25) != GP_OK) return fail(sim, "evolve");
    if (gp_sim_energies(sim, &k1, &w1) != GP_OK) return fail(sim, "energies");
    double e0 = k0 + w0, e1 = k1 + w1, de = fabs((e1 - e0) / e0);
    printf("solver %s integrator %s t %g\n", gp_sim_solver_name(sim), gp_sim_integrator(sim), gp_sim_time(sim));
    printf("E0 %.10g E1 %.10g dE/E %.3g Q0 %.4f\n", e0, e1, de, -k0 / w0);
    /* A Plummer sphere in Henon units: E = -1/4, virial ratio 1/2; a
     * leapfrog at dt = 1/128 keeps E to well below 1e-3 over 32 steps. */
    int ok = isfinite(e1) && fabs(e0 + 0.25) < 0.02 && fabs(-k0 / w0 - 0.5) < 0.05 && de < 1e-3 && de > 0
             && gp_sim_time(sim) == 0.25;
    gp_sim_free(sim);
    gp_ic_free(&ic);
    return ok ? 0 : 1;
}
SIM
t 9 "a gp_sim program including every installed header compiles with pkg-config's flags alone (-Wall -Wextra -Werror)" \
    sh -c "cc -std=c99 -Wall -Wextra -Werror -o '$tmp/sim' '$tmp/sim.c' \$(pkg-config --cflags --libs gravplug) -lm"
t 10 "it runs a cpu-tree leapfrog for 32 steps with the energy conserved" \
    sh -c "LD_LIBRARY_PATH='$prefix/lib' '$tmp/sim' > '$tmp/sim.out'; rc=\$?; cat '$tmp/sim.out'; exit \$rc"
t 11 "its cpu-tree came from the installed tree" \
    sh -c "cat '$tmp/sim.out'; grep -q '^plugin $prefix/lib/gravplug/gravplug-cpu-tree.so\$' '$tmp/sim.out'"
t 12 "the installed demo runs" env LD_LIBRARY_PATH="$prefix/lib" "$prefix/bin/gravplug-demo" 64
t 13 "make uninstall PREFIX=$prefix" @MAKE@ -s -C "@ROOT@" BUILD="@BUILD@" uninstall PREFIX="$prefix"
t 14 "no file of ours is left in the prefix" sh -c "
    left=\$(find '$prefix' ! -type d); test -z \"\$left\" || { echo \"left behind: \$left\"; exit 1; }
    test ! -e '$inc' -a ! -e '$prefix/lib/gravplug'"
stage="$tmp/stage"
t 15 "make install DESTDIR=$stage PREFIX=/opt/gravplug-test" \
    @MAKE@ -s -C "@ROOT@" BUILD="@BUILD@" install DESTDIR="$stage" PREFIX=/opt/gravplug-test
t 16 "the staged tree is laid out for /opt/gravplug-test (gravplug.pc's prefix too)" sh -c "
    test -f '$stage/opt/gravplug-test/include/gravplug/gravplug.h' -a -L '$stage/opt/gravplug-test/lib/libgravplug.so.1' &&
    grep -qx 'prefix=/opt/gravplug-test' '$stage/opt/gravplug-test/lib/pkgconfig/gravplug.pc'"
t 17 "make uninstall with the same DESTDIR leaves no file behind" sh -c "
    @MAKE@ -s -C '@ROOT@' BUILD='@BUILD@' uninstall DESTDIR='$stage' PREFIX=/opt/gravplug-test &&
    left=\$(find '$stage' ! -type d) && test -z \"\$left\" || { echo \"left behind: \$left\"; exit 1; }"
exit $fail
