#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every name libgravplug.so exports starts with gp_ (REBOUND's rule), so the
# host library never clashes with a framework's own symbols.
# (generated from tests/lib/abi-hostlib-exports.sh by tests/lib/module.mk)
lib="@BUILD@/lib/libgravplug.so"
if ! command -v nm >/dev/null 2>&1; then echo "1..0 # SKIP nm is not installed"; exit 0; fi
echo 1..2
if [ -f "$lib" ]; then echo "ok 1 - $lib exists"; else echo "not ok 1 - $lib exists"; exit 1; fi
bad=$(nm -D --defined-only "$lib" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' | grep -v '^gp_')
count=$(nm -D --defined-only "$lib" | grep -c ' gp_')
if [ -z "$bad" ]; then
    echo "ok 2 - all $count exported names start with gp_"
else
    echo "not ok 2 - exported names without the gp_ prefix"
    echo "$bad" | sed 's/^/#   /'
    exit 1
fi
