#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# libgravplug-g6 (static and shared) defines exactly the names of
# host_stub/g6/g6.syms: the g6 calls a client links, nothing of the loader
# or of its own parts, and none of the C by-value names (g6_open,
# g6calc_firsthalf, ...) that clients such as ph4's grape.cc define.
# (generated from tests/lib/g6-exports.sh by tests/lib/module.mk)
ROOT='@ROOT@'
BUILD='@BUILD@'
if [ -n "${GP_SANITIZE:-}" ]; then
    echo "1..0 # SKIP make sanitize's instrumented archive is not what make install ships (a client would need the sanitizer runtime)"
    exit 0
fi
if ! command -v nm >/dev/null 2>&1; then echo "1..0 # SKIP nm is not installed"; exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$ROOT/tests/tap-lib.sh"
sort "$ROOT/host_stub/g6/g6.syms" > "$tmp/want"
echo 1..6
t 1 "libgravplug-g6.a defines the names of g6.syms and no other" sh -c "
    nm -g --defined-only '$BUILD/lib/libgravplug-g6.a' | awk 'NF >= 3 { print \$3 }' | sort > '$tmp/a' &&
    diff '$tmp/want' '$tmp/a'"
t 2 "libgravplug-g6.so exports the names of g6.syms and no other" sh -c "
    nm -D --defined-only '$BUILD/lib/libgravplug-g6.so' | awk 'NF >= 3 { sub(/@.*/, \"\", \$3); print \$3 }' |
        grep -v '^_' | sort > '$tmp/so' && diff '$tmp/want' '$tmp/so'"
t 3 "a client defining the C by-value names links the archive (as ph4's grape.cc does)" sh -c "
    printf 'int g6_open_(int *);\nint g6_open(int id) { return g6_open_(&id); }\nint g6_npipes(void) { return 0; }\nint main(void) { return g6_open(0) ? 0 : 0; }\n' > '$tmp/c.c' &&
    cc -o '$tmp/c' '$tmp/c.c' '$BUILD/lib/libgravplug-g6.a' -ldl -lm"
prefix=$tmp/prefix
t 4 "make install-g6 puts both libraries, gravplug-g6.pc and sapporo_light.pc in PREFIX/lib" sh -c "
    @MAKE@ -s -C '$ROOT' BUILD='$BUILD' install-g6 PREFIX='$prefix' &&
    test -f '$prefix/lib/libgravplug-g6.a' -a -f '$prefix/lib/libgravplug-g6.so' &&
    test -f '$prefix/lib/pkgconfig/gravplug-g6.pc' -a -f '$prefix/lib/pkgconfig/sapporo_light.pc'"
if command -v pkg-config >/dev/null 2>&1; then
    t 5 "the client links with pkg-config --libs sapporo_light alone" sh -c "
        cc -o '$tmp/c2' '$tmp/c.c' \$(PKG_CONFIG_PATH='$prefix/lib/pkgconfig' pkg-config --libs sapporo_light)"
else
    echo "ok 5 # SKIP pkg-config is not installed"
fi
t 6 "make uninstall-g6 leaves no file behind" sh -c "
    @MAKE@ -s -C '$ROOT' BUILD='$BUILD' uninstall-g6 PREFIX='$prefix' &&
    left=\$(find '$prefix' ! -type d) && test -z \"\$left\" || { echo \"left behind: \$left\"; exit 1; }"
exit $fail
