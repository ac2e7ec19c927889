#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# abi-origin-runpath — a plugin linked with a RUNPATH of $ORIGIN whose
# library lies beside it. gravplug loads plugins through /proc/self/fd
# (docs/TRUST.md), where the dynamic linker's $ORIGIN is /proc/self/fd, not
# the plugin's folder; the loader then loads that library itself, through
# the same checks (abi/gravplug_loader.c load_beside). Fixtures (tests/lib/module.mk):
# origin/ (the library has the soname the plugin needs), origin-nosoname/
# (it has none, so it cannot stand in: a sentence says what to do).
# (generated from tests/lib/abi-origin-runpath.sh by tests/lib/module.mk)
build="@BUILD@"
fx="$build/tests/fixtures"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
. "@ROOT@/tests/tap-lib.sh"
echo 1..4
info() { "$build/bin/gravhost" info "$1" > "$tmp/out" 2>&1; }
t 1 "a plugin whose library lies beside it (RUNPATH \$ORIGIN) loads" info "$fx/origin/gravplug-origin.so"
t 2 "its library is loaded from its folder" grep -q "^plugin *abi10" "$tmp/out"
hint() { ! info "$fx/origin-nosoname/gravplug-origin.so" && grep -q "libgpfixdep.so lies beside it, in $fx/origin-nosoname, .*-Wl,-rpath,$fx/origin-nosoname" "$tmp/out" && cat "$tmp/out"; }
t 3 "a library beside it without the soname it needs: refused, saying what to do" hint
# the library beside it is code too: the trust rules hold for it
cp -r "$fx/origin" "$tmp/o" && chmod 0755 "$tmp/o"
chmod o+w "$tmp/o/libgpfixdep.so"
trusted() { ! info "$tmp/o/gravplug-origin.so" && grep -q "refusing to load plugin '$tmp/o/libgpfixdep.so'.*writable" "$tmp/out" && cat "$tmp/out"; }
t 4 "a library beside it that every user can write: refused, naming it" trusted
exit $fail
