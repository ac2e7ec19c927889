#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The demo (make demo / make run) loads every built plugin and evaluates
# forces; cpu-direct must be among them and agree with itself.
# (generated from tests/build/examples-demo.sh by tests/build/module.mk)
unset GRAVPLUG_PATH
out=$(OMP_NUM_THREADS=2 "@BUILD@/bin/gravplug-demo" 256 2>&1); rc=$?
echo 1..3
[ $rc -eq 0 ] && echo "ok 1 - gravplug-demo exits 0" || { echo "not ok 1 - gravplug-demo exits 0 (rc $rc)"; }
echo "$out" | grep -q '^== cpu-direct' && echo "ok 2 - it shows cpu-direct" || echo "not ok 2 - it shows cpu-direct"
echo "$out" | grep -A12 '^== cpu-direct' | grep -q 'forces on a 256-particle' \
    && echo "ok 3 - cpu-direct evaluated forces" || echo "not ok 3 - cpu-direct evaluated forces"
echo "$out" | sed 's/^/# /'
