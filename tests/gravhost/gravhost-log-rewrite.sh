#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gravhost-log-rewrite — a restart first rewrites the log without its
# lines after the checkpoint's time; when that copy cannot be written (a
# file size limit, as a full disk) the run stops with a sentence saying
# why and what to do, leaves no diagnostics.tsv.tmp, and the log and
# checkpoint it had stay as they were, so the restart works once the limit
# is gone.
NAME=gravhost-log-rewrite
. '@TESTLIB@'
echo "1..4"
cat > "$TMP/run.cfg" <<CFG
solver = { plugin = "cpu-direct"; params = { eps = 0.05; }; };
initial_conditions = { model = "plummer"; n = 64; seed = 3; };
integrator = { name = "leapfrog"; params = { dt = 0.03125; }; };
run = { t_end = 0.5; progress = "never"; };
output = { log_interval = 0.03125; snapshot_interval = 0.5; checkpoint_interval = 0.25; };
CFG
"$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/a" --t-end 0.375 2>"$TMP/err"
size=$(wc -c < "$TMP/a/diagnostics.tsv")
[ $? = 0 ] && [ "$size" -gt 2048 ]
ok $? "a run to t = 0.375 writes a log of more than 2 KiB ($size bytes) and a checkpoint at t = 0.25"
cp "$TMP/a/diagnostics.tsv" "$TMP/log.before"
(ulimit -f 1; exec timeout 60 "$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/a" --restart) 2>"$TMP/limit.err" </dev/null
rc=$?
[ $rc = 1 ] && grep -q "cannot rewrite the diagnostics log $TMP/a/diagnostics.tsv .*File too large; .*ulimit -f" "$TMP/limit.err"
ok $? "under a 1 KiB file size limit: stopped with a sentence saying why and what to do (rc $rc)"
[ $rc = 1 ] || sed 's/^/#   /' "$TMP/limit.err"
[ ! -e "$TMP/a/diagnostics.tsv.tmp" ] && cmp -s "$TMP/a/diagnostics.tsv" "$TMP/log.before"
ok $? "no diagnostics.tsv.tmp left, the log as it was"
timeout 60 "$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/a" --restart 2>"$TMP/again.err" </dev/null
rc=$?
ok $rc "without the limit the restart runs (rc $rc)"
[ $rc = 0 ] || sed 's/^/#   /' "$TMP/again.err"
exit $fail
