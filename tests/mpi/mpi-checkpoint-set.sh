#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# mpi-checkpoint-set — gravhost-mpi's checkpoint sets at P = 2 (generated
# by tests/mpi/module.mk). A set is replaced whole: rank 1 alone
# cannot write its next file (a file size limit, as a full disk: EFBIG),
# the run stops with its sentence, the last complete set is left as it
# was, no staged file stays behind, and the restart from it ends
# bit-identical to an uninterrupted run; a set whose renames were cut
# short (FILE.new on one rank) is finished and continued. A restart from a stop off the
# checkpoint grid (--t-end on a step, a SIGTERM to rank 1 alone) ends
# bit-identical too: the ranks keep the split their files hold. Skipped
# without mpirun.
MPIRUN='@MPIRUN@'
NAME=mpi-checkpoint-set
MPILIB='@MPILIB@'
. "$MPILIB"
echo "1..14"

cat > "$TMP/p.cfg" <<CFG
solver = { plugin = "mpi-tree"; params = { eps = 0.05; theta = 0.5; }; };
initial_conditions = { model = "plummer"; n = 2000; seed = 3; };
integrator = { name = "leapfrog"; params = { dt = 0.015625; }; };
run = { t_end = 0.5; };
output = { log_interval = 0.125; snapshot_interval = 0.25; checkpoint_interval = 0.25; };
CFG
last_snap() { ls "$1"/snap_*.h5 | tail -1; }

mpi 2 run "$TMP/p.cfg" --output "$TMP/a" 2>>"$TMP/err"
ok $? "P = 2: uninterrupted to t = 0.5"

# the set at t = 0.25, then a restart where rank 1's next file cannot be
# written (rank 1 under ulimit -f: its writes beyond 40 KiB fail)
mpi 2 run "$TMP/p.cfg" --output "$TMP/f" --t-end 0.25 2>>"$TMP/err"
cp "$TMP/f/checkpoint.gpck.0of2" "$TMP/old0"; cp "$TMP/f/checkpoint.gpck.1of2" "$TMP/old1"
timeout 120 "$MPIRUN" --oversubscribe -np 1 "$GHM" run "$TMP/p.cfg" --output "$TMP/f" --restart \
    : -np 1 bash -c 'trap "" XFSZ; ulimit -f 40; exec "$0" "$@"' "$GHM" run "$TMP/p.cfg" --output "$TMP/f" \
    --restart 2>"$TMP/e1"
rc=$?
[ $rc != 0 ] && [ $rc != 124 ] && grep -q '^gravhost: writing the checkpoint .*1of2.* failed: File too large' "$TMP/e1"
ok $? "rank 1 alone cannot write its next checkpoint: the run stops with its sentence (rc $rc)"
cmp -s "$TMP/old0" "$TMP/f/checkpoint.gpck.0of2" && cmp -s "$TMP/old1" "$TMP/f/checkpoint.gpck.1of2"
ok $? "the last complete set (t = 0.25) is left as it was on both ranks"
left=$(cd "$TMP/f" && ls | grep -c 'gpck.*\.\(new\|tmp\)')
[ "$left" = 0 ]; ok $? "no staged or temporary checkpoint file is left ($left)"
rm -f "$TMP"/f/snap_0002.h5   # the failed run's, written before its checkpoint
mpi 2 run "$TMP/p.cfg" --output "$TMP/f" --restart 2>"$TMP/e2"
rc=$?
ok $rc "the restart from the set kept continues"
r=$( [ $rc = 0 ] && same_snapshot "$TMP/a/snap_0002.h5" "$(last_snap "$TMP/f")")
[ "$r" = same ]; ok $? "and ends bit-identical to the uninterrupted run ($r)"

# rank 0 alone cannot write a snapshot: the checkpoint written on the
# failure is a set every rank's run state agrees on, and continues
mpi 2 run "$TMP/p.cfg" --output "$TMP/g" --t-end 0.25 2>>"$TMP/err"
mkdir -p "$TMP/g/snap_0002.h5.tmp/x"
mpi 2 run "$TMP/p.cfg" --output "$TMP/g" --restart 2>"$TMP/e5"
grep -q "^gravhost: Cannot write snapshot.*a checkpoint at t = 0.5 was written" "$TMP/e5"
ok $? "rank 0 alone cannot write its snapshot: the run stops with a checkpoint"
rm -r "$TMP/g/snap_0002.h5.tmp"
mpi 2 run "$TMP/p.cfg" --output "$TMP/g" --restart 2>"$TMP/e6"
ok $? "and that checkpoint set restarts (every rank counted the snapshots alike)"

# a set cut short between the ranks' renames (rank 1 stopped after the
# agreement): rank 0's new file in place, rank 1's still FILE.new; and a
# FILE.new left from a set that was never agreed
mpi 2 run "$TMP/p.cfg" --output "$TMP/k" --t-end 0.25 2>>"$TMP/err" && cp -r "$TMP/k" "$TMP/k2" &&
    mpi 2 run "$TMP/p.cfg" --output "$TMP/k2" --restart --t-end 0.375 2>>"$TMP/err"
cp -r "$TMP/k" "$TMP/k3"; cp -r "$TMP/k" "$TMP/k4"
cp "$TMP/k2/checkpoint.gpck.0of2" "$TMP/k3/checkpoint.gpck.0of2"
cp "$TMP/k2/checkpoint.gpck.1of2" "$TMP/k3/checkpoint.gpck.1of2.new"
cp "$TMP/k2/checkpoint.gpck.0of2" "$TMP/k4/checkpoint.gpck.0of2.new"
mpi 2 run "$TMP/p.cfg" --output "$TMP/k3" --restart 2>"$TMP/e4"
rc=$?
r=$( [ $rc = 0 ] && same_snapshot "$TMP/a/snap_0002.h5" "$(last_snap "$TMP/k3")")
[ "$r" = same ] && grep -q "cut short between the ranks' renames" "$TMP/e4" && ! [ -e "$TMP/k3/checkpoint.gpck.1of2.new" ]
ok $? "a set cut short between the renames: the restart finishes them, continues from t = 0.375, ends bit-identical ($r)"
mpi 2 run "$TMP/p.cfg" --output "$TMP/k4" --restart 2>>"$TMP/err"
rc=$?
r=$( [ $rc = 0 ] && same_snapshot "$TMP/a/snap_0002.h5" "$(last_snap "$TMP/k4")")
[ "$r" = same ]; ok $? "a FILE.new of a set never agreed: the restart continues the complete set, bit-identical ($r)"

# off the checkpoint grid: --t-end 19/64, a step of the integrator
mpi 2 run "$TMP/p.cfg" --output "$TMP/t" --t-end 0.296875 2>>"$TMP/err" &&
    mpi 2 run "$TMP/p.cfg" --output "$TMP/t" --restart 2>>"$TMP/err"
ok $? "stopped by --t-end 0.296875 (off the checkpoint grid), then restarted"
r=$(same_snapshot "$TMP/a/snap_0002.h5" "$(last_snap "$TMP/t")")
[ "$r" = same ]; ok $? "the restart from t = 0.296875 ends bit-identical ($r)"

# a SIGTERM to rank 1 alone after the t = 0.125 log line, at a time off the
# checkpoint grid (tried with a later signal while the stop falls on it).
# The run goes to t = 4, against an uninterrupted one of the same: the
# signal then finds it running however fast the machine is (a run to
# t = 0.5 takes well under a second, less than the stop takes to agree).
sed 's/t_end = 0.5;/t_end = 4;/' "$TMP/p.cfg" > "$TMP/long.cfg"
mpi 2 run "$TMP/long.cfg" --output "$TMP/along" 2>>"$TMP/err"
for delay in 0 0.15 0.3 0.45; do
    rm -rf "$TMP/s"
    mpi 2 run "$TMP/long.cfg" --output "$TMP/s" 2>"$TMP/e3" &
    job=$!
    wait_for_log "$TMP/s" 2
    sleep $delay
    pid=$(ps -eo pid=,args= | grep "[g]ravhost-mpi run $TMP/long.cfg --output $TMP/s" | grep -v mpirun |
          awk '{print $1}' | sort -n | tail -1)
    [ -n "$pid" ] && kill -TERM "$pid"
    wait $job
    t=$(sed -n 's/.*stopped by signal 15 at t = \([0-9.]*\).*/\1/p' "$TMP/e3")
    echo "# SIGTERM $delay s after the second log line: stopped at t = $t"
    [ -n "$t" ] && python3 -c "import sys; sys.exit(float('$t') * 4 % 1 == 0)" && break
done
[ -n "$t" ] && mpi 2 run "$TMP/long.cfg" --output "$TMP/s" --restart 2>>"$TMP/err"
ok $? "SIGTERM to one rank: stopped at t = $t, then restarted"
r=$(same_snapshot "$(last_snap "$TMP/along")" "$(last_snap "$TMP/s")")
[ "$r" = same ]; ok $? "the restart after the SIGTERM ends bit-identical ($r)"
[ $fail = 0 ] || sed 's/^/# /' "$TMP/err" "$TMP/e1" "$TMP/e2" | grep -v '^# *-*$' | head -40
exit $fail
