#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gravhost-signal-restart — the signal path: a real
# SIGTERM (then a SIGINT) sent to a running gravhost on cpu-tree with its
# defaults (rebuild=auto: refits between rebuilds), a restart from the
# checkpoint it writes, and the final state compared bit for bit with an
# uninterrupted run. The checkpoint waits for the next solver resync point
# (dt_max boundary), where both runs rebuild the tree alike. Then what a
# batch system or a closed terminal does: SIGHUP stops it like SIGTERM; a
# SIGTERM far from the next resync point stops it within run.signal_grace
# seconds anyway (the scheduler's SIGKILL comes next), with a checkpoint
# that restarts; a file over the size limit (SIGXFSZ) ends it with a
# sentence, not a kill. And a signal while the run sets up (before its
# first step): kept until the first forces are done, then a checkpoint at
# t = 0; a second one ends it at once.
NAME=gravhost-signal-restart
. '@TESTLIB@'
echo "1..16"

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

interrupt() {  # interrupt SIGNAL LINES: the run $pid in $TMP/b gets SIGNAL after LINES log lines; sets rc
    wait_for_log "$TMP/b" "$2"
    sleep 0.3
    kill -"$1" $pid
    wait $pid
    rc=$?
}

"$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/b" 2>"$TMP/b.err" &
pid=$!
interrupt TERM 2
[ "$rc" = 143 ] && [ -f "$TMP/b/checkpoint.gpck" ]
ok $? "SIGTERM: exit status $rc (want 143) and a checkpoint written"
t1=$(sed -n 's/.*stopped by signal [0-9]* at t = \([0-9.e+-]*\);.*/\1/p' "$TMP/b.err")
sed 's/^/# /' "$TMP/b.err"
python3 -c "import sys; t = float('${t1:-0}'); sys.exit(not (0 < t < 3))"
ok $? "... it stopped mid-run (t = $t1)"

"$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/b" --restart 2>"$TMP/b2.err" &
pid=$!
interrupt INT 4
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

"$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/hup" 2>"$TMP/hup.err" &
pid=$!
wait_for_log "$TMP/hup" 1
kill -HUP $pid
wait $pid
rc=$?
sed 's/^/# /' "$TMP/hup.err"
[ $rc = 129 ] && [ -f "$TMP/hup/checkpoint.gpck" ] && grep -q "stopped by signal 1 at t = " "$TMP/hup.err"
ok $? "SIGHUP: stops like SIGTERM, exit status $rc (want 129), checkpoint written"

# one resync point, at the end (dt = 3, no log line between, which would
# synchronise the steps): only the grace of 0.5 s can end it early
sed 's/dt = 0.5;/dt = 3.0;/; s/t_end = 3.0; }/t_end = 3.0; signal_grace = 0.5; }/; s/log_interval = 0.5/log_interval = 0/' \
    "$TMP/run.cfg" > "$TMP/grace.cfg"
"$GRAVHOST" run "$TMP/grace.cfg" --output "$TMP/grace" 2>"$TMP/grace.err" &
pid=$!
wait_for_log "$TMP/grace" 1
# and past the t = 0 snapshot, written after the log line: a signal before
# the first step would stop the run right there, at t = 0, a resync point
i=0; while [ ! -e "$TMP/grace/snap_0000.h5" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
sleep 0.3
t0=$(date +%s.%N)
kill -TERM $pid
wait $pid
rc=$?
took=$(python3 -c "import time; print('%.1f' % (time.time() - $t0))")
sed 's/^/# /' "$TMP/grace.err"
[ $rc = 143 ] && [ -f "$TMP/grace/checkpoint.gpck" ] && grep -q "signal_grace = 0.5 s passed" "$TMP/grace.err" &&
    python3 -c "import sys; sys.exit(not ($took < 10))"
ok $? "SIGTERM far from a resync point: stopped after the 0.5 s grace ($took s), with a checkpoint, saying it is not bit for bit"
"$GRAVHOST" run "$TMP/grace.cfg" --output "$TMP/grace" --restart 2>"$TMP/grace2.err"
rc=$?
[ $rc = 0 ] && [ -f "$TMP/grace/snap_0001.h5" ]
ok $? "... and that checkpoint restarts and runs to the end (rc $rc)"

# run.signal_grace is checked like any setting
sed 's/signal_grace = 0.5;/signal_grace = -1;/' "$TMP/grace.cfg" > "$TMP/badgrace.cfg"
"$GRAVHOST" run "$TMP/badgrace.cfg" --output "$TMP/badgrace" 2>"$TMP/badgrace.err"
[ $? = 1 ] && grep -q "run.signal_grace: must be 0 to 1e6 seconds" "$TMP/badgrace.err"
ok $? "signal_grace = -1 is refused with a sentence"

# A signal that comes while the run sets up. To land it there for sure it is
# sent before gravhost starts, to a process that blocks it and then execs
# gravhost: the signal waits, blocked, until gravhost unblocks the stop
# signals as it sets its handlers (a launcher may start it so).
pending() {  # pending SIGNALS CMD...: runs CMD with SIGNALS (comma-separated names) blocked and pending
    sigs=$1; shift
    python3 - "$sigs" "$@" <<'PY'
import os, signal, sys
sigs = [getattr(signal, name) for name in sys.argv[1].split(",")]
signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
for s in sigs:
    os.kill(os.getpid(), s)
os.execv(sys.argv[2], sys.argv[2:])
PY
}
pending SIGTERM "$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/setup" 2>"$TMP/setup.err"
rc=$?
sed 's/^/# /' "$TMP/setup.err"
[ $rc = 143 ] && [ -f "$TMP/setup/checkpoint.gpck" ] && grep -q "signal while setting up" "$TMP/setup.err" &&
    grep -q "stopped by signal 15 at t = 0;" "$TMP/setup.err"
ok $? "SIGTERM while setting up: the first forces done, stopped at t = 0 with a checkpoint (rc $rc)"
"$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/setup" --restart 2>"$TMP/setup2.err"
rc=$?
r=$(same_snapshot "$TMP/a/snap_0001.h5" "$TMP/setup/snap_0001.h5" 2>&1)
[ $rc = 0 ] && [ "$r" = same ]
ok $? "... that checkpoint runs on to t = 3, bit-identical with the uninterrupted run (rc $rc, $r)"
pending SIGTERM,SIGINT "$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/setup-twice" 2>"$TMP/setup-twice.err"
rc=$?
{ [ $rc = 130 ] || [ $rc = 143 ]; } && [ ! -e "$TMP/setup-twice/checkpoint.gpck" ]
ok $? "two signals while setting up: the process ends at once, without a checkpoint (rc $rc)"

# ulimit -f: the first snapshot (about 300 kB) is over 64 blocks
cat > "$TMP/fsize.cfg" <<CFG
solver = { plugin = "cpu-direct"; params = { eps = 0.05; }; };
initial_conditions = { model = "plummer"; n = 4000; seed = 1; };
run = { t_end = 0.01; };
CFG
(ulimit -f 64; "$GRAVHOST" run "$TMP/fsize.cfg" --output "$TMP/fsize" 2>"$TMP/fsize.err")
rc=$?
sed 's/^/# /' "$TMP/fsize.err"
[ $rc = 1 ]
ok $? "over the file size limit: exit status $rc (1, not 153 from SIGXFSZ)"
grep -q "^gravhost: .*snap_0000.h5" "$TMP/fsize.err"
ok $? "... with a sentence naming the file it could not write"
exit $fail
