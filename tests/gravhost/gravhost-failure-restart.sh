#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gravhost-failure-restart — a run that fails at an output time (here a
# snapshot it cannot write: a directory stands where the file goes) leaves
# a checkpoint, and the restart, once the cause is fixed, continues bit
# for bit like the run that never failed (cpu-tree, rebuild = auto).
NAME=gravhost-failure-restart
. '@TESTLIB@'
echo "1..4"

cat > "$TMP/run.cfg" <<CFG
solver = { plugin = "cpu-tree"; params = { eps = 0.01; theta = 0.5; }; };
initial_conditions = { model = "galaxy"; n = 3000; seed = 42; options = { disk_mass = 0.1; }; };
integrator = { name = "block-rk2"; params = { dt = 0.25; eta = 0.15; }; };
run = { t_end = 1.5; };
output = { log_interval = 0.25; snapshot_interval = 0.5; checkpoint_interval = 0.75; };
CFG
"$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/a" --no-progress 2>"$TMP/a.err"
ok $? "the run without a failure"

mkdir -p "$TMP/b/snap_0002.h5"
"$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/b" --no-progress 2>"$TMP/b.err"
rc=$?
sed 's/^/# /' "$TMP/b.err"
[ $rc != 0 ] && grep -q "a checkpoint at t = 1 was written" "$TMP/b.err"
ok $? "the snapshot at t = 1 cannot be written: the run stops (status $rc) and says where its checkpoint is"

rmdir "$TMP/b/snap_0002.h5"
"$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/b" --restart --no-progress 2>"$TMP/b2.err"
ok $? "the cause removed, the restart runs to the end"

r=$(same_snapshot "$TMP/a/snap_0003.h5" "$TMP/b/snap_0003.h5" 2>&1)
[ "$r" = same ]; ok $? "the final state is bit-identical with the run that never failed ($r)"
exit $fail
