#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gravhost-config-includes — the files a config's @include names are
# checked before libconfig opens them (host_stub/config.c check_includes):
# a FIFO, a device or a missing file, nested or not, is refused at once
# with a sentence naming it; an absolute include gets a sentence naming it
# and what to do; a plain include still works.
NAME=gravhost-config-includes
. '@TESTLIB@'
echo "1..7"

mkdir "$TMP/c"
printf 'solver = { plugin = "cpu-direct"; params = { eps = 0.05; }; };\ninitial_conditions = { model = "plummer"; n = 32; seed = 1; };\n' > "$TMP/c/base.cfg"
printf 'run = { t_end = 0.125; };\n' > "$TMP/c/run.cfg"
inc() { printf '@include "base.cfg"\n%s\n' "$2" > "$TMP/c/$1.cfg"; }
run() { timeout 60 "$GRAVHOST" run "$TMP/c/$1.cfg" --output "$TMP/out-$1" 2>"$TMP/$1.err" </dev/null; }

inc plain '@include "run.cfg"'
run plain
ok $? "a config with plain @includes runs"

if mkfifo "$TMP/c/fifo.cfg"; then
    inc usefifo '  @include "fifo.cfg"'
    run usefifo; rc=$?
    [ $rc = 1 ] && grep -q '@include "fifo.cfg": cannot read .*c/fifo.cfg: it is a FIFO, not a regular file' "$TMP/usefifo.err"
    ok $? "an @include of a FIFO: refused at once, naming it (rc $rc)"
    printf '@include "fifo.cfg"\n' > "$TMP/c/nested.cfg"
    inc outer '@include "nested.cfg"'
    run outer; rc=$?
    [ $rc = 1 ] && grep -q 'nested.cfg: @include "fifo.cfg": .*it is a FIFO' "$TMP/outer.err"
    ok $? "a FIFO included from an included file: refused at once, naming both (rc $rc)"
else
    ok 0 "# SKIP mkfifo failed here"; ok 0 "# SKIP mkfifo failed here"
fi
ln -s /dev/zero "$TMP/c/zero.cfg"
inc usezero '@include "zero.cfg"'
run usezero; rc=$?
[ $rc = 1 ] && grep -q '@include "zero.cfg": cannot read .*it is a character device' "$TMP/usezero.err"
ok $? "an @include of a link to /dev/zero: refused, naming it (rc $rc)"
[ $rc = 1 ] || sed "s/^/#   /" "$TMP/usezero.err"
inc missing '@include "nothere.cfg"'
run missing; rc=$?
[ $rc = 1 ] && grep -q '@include "nothere.cfg": cannot read .*c/nothere.cfg: No such file' "$TMP/missing.err"
ok $? "a missing include: the sentence names the file (rc $rc)"
inc absolute "@include \"$TMP/c/run.cfg\""
run absolute; rc=$?
if [ $rc = 0 ]; then
    ok 0 "an absolute @include runs (a libconfig that reads absolute includes)"
else
    grep -q "@include \"$TMP/c/run.cfg\": .*give it relative to that folder" "$TMP/absolute.err"
    ok $? "an absolute @include libconfig cannot read: the sentence names it and says what to do (rc $rc)"
fi
[ $rc = 0 ] || sed 's/^/#   /' "$TMP/absolute.err"
grep -q 'cannot open include file' "$TMP"/*.err
[ $? != 0 ]
ok $? "no sentence says only \"cannot open include file\""
exit $fail
