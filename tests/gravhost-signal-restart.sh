#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gravhost-signal-restart — the signal path: a real
# SIGTERM (then a SIGINT) sent to a running gravhost on cpu-tree with its
# defaults (rebuild=auto: refits between rebuilds), a restart from the
# checkpoint it writes, and the final state compared bit for bit with an
# uninterrupted run. The checkpoint waits for the next solver resync point
# (dt_max boundary), where both runs rebuild the tree alike.
NAME=gravhost-signal-restart
. '@TESTLIB@'
echo "1..7"

# Long enough (several seconds) that the signal lands mid-run; dt = 0.5
# makes the resync points rare, so the signal falls between them.
cat > "$TMP/run.cfg" <<CFG
solver = { plugin = "cpu-tree"; params = { eps = 0.05; threads = 1; }; };
initial_conditions = { model = "plummer"; n = 6000; seed = 11; };
integrator = { name = "block-rk2"; params = { dt = 0.5; eta = 0.1; }; };
run = { t_end = 3.0; };
output = { log_interval = 0.5; snapshot_interval = 0; checkpoint_interval = 0; };
CFG
"$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/a" 2>"$TMP/a.err"
ok $? "uninterrupted run to t = 3"

# wait_for_log DIR LINES: until diagnostics.tsv has LINES data lines (or 60 s)
wait_for_log() {
    i=0
    while [ $i -lt 600 ]; do
        k=$(grep -vc '^#' "$1/diagnostics.tsv" 2>/dev/null || echo 0)
        [ "${k:-0}" -ge "$2" ] && return 0
        sleep 0.1; i=$((i+1))
    done
    return 1
}

interrupt() {  # interrupt SIGNAL LINES: the run $pid in $TMP/b gets SIGNAL after LINES log lines; sets rc
    wait_for_log "$TMP/b" "$2"
    sleep 0.3
    kill -"$1" $pid
    wait $pid
    rc=$?
}

"$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/b" 2>"$TMP/b.err" &
pid=$!
interrupt TERM 3
[ "$rc" = 143 ] && [ -f "$TMP/b/checkpoint.gpck" ]
ok $? "SIGTERM: exit status $rc (want 143) and a checkpoint written"
t1=$(sed -n 's/.*stopped by signal [0-9]* at t = \([0-9.e+-]*\);.*/\1/p' "$TMP/b.err")
sed 's/^/# /' "$TMP/b.err"
python3 -c "import sys; t = float('${t1:-0}'); sys.exit(not (0 < t < 3))"
ok $? "... it stopped mid-run (t = $t1)"

"$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/b" --restart 2>"$TMP/b2.err" &
pid=$!
interrupt INT 5
t2=$(sed -n 's/.*stopped by signal [0-9]* at t = \([0-9.e+-]*\);.*/\1/p' "$TMP/b2.err")
sed 's/^/# /' "$TMP/b2.err"
[ "$rc" = 130 ] || [ "$rc" = 0 ]
ok $? "restarted, then SIGINT: exit status $rc (130; 0 if it had already finished) at t = ${t2:-end}"

"$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/b" --restart 2>"$TMP/b3.err"
ok $? "restarted again, runs on to t = 3"
sed 's/^/# /' "$TMP/b3.err"

r=$(same_snapshot "$TMP/a/snap_0001.h5" "$TMP/b/snap_0001.h5" 2>&1)
[ "$r" = same ]; ok $? "final positions and velocities bit-identical with the uninterrupted run ($r)"

# the log lines after the restarts match too (t, K, W, E, dE/E, all digits)
cut -f1-5 "$TMP/a/diagnostics.tsv" | grep '^[0-9]' | sort -u -g > "$TMP/a.tsv"
cut -f1-5 "$TMP/b/diagnostics.tsv" | grep '^[0-9]' | sort -u -g > "$TMP/b.tsv"
cmp -s "$TMP/a.tsv" "$TMP/b.tsv"; ok $? "the diagnostics (t, K, W, E, dE/E) match line for line ($(wc -l < "$TMP/a.tsv") lines)"
exit $fail
