#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gravhost-checkpoint-link — a restart from the output directory's own
# checkpoint (--restart without a file) reads no symbolic link found there:
# gravhost never makes one there, so someone else did (docs/TRUST.md); it
# is refused with a sentence, and the file it points to is not read. A
# link the user names (--restart LINK) is followed: the user named it.
NAME=gravhost-checkpoint-link
. '@TESTLIB@'
echo "1..4"
cat > "$TMP/run.cfg" <<CFG
solver = { plugin = "cpu-direct"; params = { eps = 0.05; }; };
initial_conditions = { model = "plummer"; n = 64; seed = 3; };
integrator = { name = "leapfrog"; params = { dt = 0.0625; }; };
run = { t_end = 0.5; progress = "never"; };
output = { log_interval = 0.25; snapshot_interval = 0.25; checkpoint_interval = 0.25; };
CFG
"$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/a" --t-end 0.25 2>"$TMP/err"
ok $? "a run to t = 0.25 writes its checkpoint"
# another run's checkpoint elsewhere, and a link to it in place of a's
mkdir "$TMP/elsewhere"
mv "$TMP/a/checkpoint.gpck" "$TMP/elsewhere/checkpoint.gpck"
ln -s "$TMP/elsewhere/checkpoint.gpck" "$TMP/a/checkpoint.gpck"
timeout 60 "$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/a" --restart 2>"$TMP/link.err" </dev/null
rc=$?
[ $rc = 1 ] && grep -q "checkpoint.gpck is a symbolic link (to $TMP/elsewhere/checkpoint.gpck).*--restart FILE" "$TMP/link.err"
ok $? "--restart: a link at the output directory's checkpoint is refused, naming it (rc $rc)"
[ $rc = 1 ] || sed 's/^/#   /' "$TMP/link.err"
[ -L "$TMP/a/checkpoint.gpck" ] && [ ! -e "$TMP/a/snap_0002.h5" ]
ok $? "nothing was run or written from it"
timeout 60 "$GRAVHOST" run "$TMP/run.cfg" --output "$TMP/a" --restart "$TMP/a/checkpoint.gpck" 2>"$TMP/named.err" </dev/null
rc=$?
ok $rc "--restart LINK, a link the user names, is followed (rc $rc)"
[ $rc = 0 ] || sed 's/^/#   /' "$TMP/named.err"
exit $fail
