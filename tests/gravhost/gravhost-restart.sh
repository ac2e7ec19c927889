#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gravhost-restart — a run stopped at a checkpoint and restarted ends
# bit-identical to the uninterrupted run (final snapshot coordinates and
# velocities compared exactly, on cpu-direct and on cpu-tree, whose tree
# refits make this the harder case); SIGINT writes a checkpoint from which
# the run continues.
NAME=gravhost-restart
. '@TESTLIB@'
echo "1..8"

for plugin in cpu-direct cpu-tree; do
    cat > "$TMP/$plugin.cfg" <<CFG
solver = { plugin = "$plugin"; params = { eps = 0.05; }; };
initial_conditions = { model = "plummer"; n = 1024; seed = 3; };
integrator = { name = "block-rk2"; params = { dt = 0.125; eta = 0.1; }; };
run = { t_end = 1.0; };
output = { log_interval = 0.25; snapshot_interval = 0.5; checkpoint_interval = 0.5; };
CFG
    "$GRAVHOST" run "$TMP/$plugin.cfg" --output "$TMP/$plugin-a" 2>"$TMP/err"
    ok $? "$plugin: uninterrupted run to t = 1"
    "$GRAVHOST" run "$TMP/$plugin.cfg" --output "$TMP/$plugin-b" --t-end 0.5 2>>"$TMP/err" &&
        "$GRAVHOST" run "$TMP/$plugin.cfg" --output "$TMP/$plugin-b" --restart 2>>"$TMP/err"
    ok $? "$plugin: run to t = 0.5, then restarted from its checkpoint to t = 1"
    r=$(same_snapshot "$TMP/$plugin-a/snap_0002.h5" "$TMP/$plugin-b/snap_0002.h5" 2>&1)
    [ "$r" = same ]; ok $? "$plugin: final states are bit-identical ($r)"
done
sed 's/^/# /' "$TMP/err"

# SIGINT: checkpoint at the next step boundary, exit 130, then continue.
cat > "$TMP/long.cfg" <<CFG
solver = { plugin = "cpu-direct"; params = { eps = 0.05; }; };
initial_conditions = { model = "plummer"; n = 512; seed = 5; };
integrator = { name = "leapfrog"; params = { dt = 0.001; }; };
run = { t_end = 1000.0; };
output = { log_interval = 1.0; snapshot_interval = 0; };
CFG
"$GRAVHOST" run "$TMP/long.cfg" --output "$TMP/long" 2>"$TMP/long.err" &
pid=$!
wait_for_log "$TMP/long" 1   # running, its signal handlers set
sleep 1
kill -INT $pid
wait $pid
rc=$?
[ $rc = 130 ] && [ -f "$TMP/long/checkpoint.gpck" ]
ok $? "SIGINT: exit status $rc (want 130) and a checkpoint written"
t=$(sed -n 's/.*stopped by signal [0-9]* at t = \([0-9.e+-]*\);.*/\1/p' "$TMP/long.err")
sed 's/^/# /' "$TMP/long.err"
tend=$(python3 -c "print(float('${t:-0}') + 0.25)")
"$GRAVHOST" run "$TMP/long.cfg" --output "$TMP/long" --restart --t-end "$tend" 2>"$TMP/long.err2"
rc=$?
sed 's/^/# /' "$TMP/long.err2"
last=$(tail -n 1 "$TMP/long/diagnostics.tsv" | cut -f1)
[ $rc = 0 ] && python3 -c "import sys; sys.exit(abs(float('$last') - $tend) > 1e-9)"
ok $? "restart after SIGINT at t = $t runs on to t = $tend (last log line at t = $last)"
exit $fail
