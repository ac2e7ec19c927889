#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gravhost-output-paths — where gravhost reads and writes: an output named
# like another output, or naming a directory, is refused before t = 0; an
# over-long output directory is refused, never cut short (it would write
# elsewhere); a FIFO or a device as config, initial conditions, checkpoint
# or output is refused at once, never opened blocking and never replaced.
NAME=gravhost-output-paths
. '@TESTLIB@'
echo "1..12"

BASE='solver = { plugin = "cpu-direct"; params = { eps = 0.05; }; };
initial_conditions = { model = "plummer"; n = 64; seed = 1; };
run = { t_end = 0.125; };'
output() { printf '%s\noutput = { %s };\n' "$BASE" "$2" > "$TMP/$1.cfg"; }

output as-log 'checkpoint = "diagnostics.tsv";'
expect_error as-log 'output.checkpoint: "diagnostics.tsv" is also output.log'
output as-snap 'checkpoint = "snap_0001.h5";'
expect_error as-snap 'output.checkpoint: "snap_0001.h5" is the name of a snapshot'
output log-as-snap 'log = "./snap_0002.h5";'
expect_error log-as-snap 'output.log: "snap_0002.h5" is the name of a snapshot'
output empty 'checkpoint = "";'
expect_error empty 'output.checkpoint: "" names a directory, not a file'
output dot 'checkpoint = ".";'
expect_error dot 'output.checkpoint: "." names a directory, not a file'

long=$(printf '%02000d' 0)
output longdir "dir = \"$TMP/$long\";"
timeout 20 "$GRAVHOST" run "$TMP/longdir.cfg" 2>"$TMP/longdir.err"
[ $? = 1 ] && grep -q 'output.dir: is 2[0-9]* characters long; at most 1900' "$TMP/longdir.err" && ! [ -e "$TMP/$long" ]
ok $? "an output.dir of over 2000 characters: refused, nothing created under a shortened name"
output plain ''
timeout 20 "$GRAVHOST" run "$TMP/plain.cfg" --output "$TMP/$long" 2>"$TMP/longopt.err"
[ $? = 1 ] && grep -q 'is 2[0-9]* characters long; give one of 1 to 1900' "$TMP/longopt.err" && ! [ -e "$TMP/$long" ]
ok $? "--output of over 2000 characters: expect_error the same way"

# a device as an output: refused, and the device is still a device
output devfull 'checkpoint = "/dev/full";'
expect_error devfull 'output.checkpoint: /dev/full is not a file gravhost can write: it exists as a character device'
[ -c /dev/full ]; ok $? "/dev/full is still a character device"

# FIFOs where gravhost reads: the config, a particle file, a checkpoint
if mkfifo "$TMP/fifo"; then
    timeout 20 "$GRAVHOST" run "$TMP/fifo" --output "$TMP/out-fifo" 2>"$TMP/fifo.err"
    [ $? = 1 ] && grep -q 'fifo: cannot read the file: it is a FIFO, not a regular file' "$TMP/fifo.err"
    ok $? "a FIFO as the config: expect_error at once"
    printf 'solver = { plugin = "cpu-direct"; };\ninitial_conditions = { model = "file"; n = 0; options = { path = "fifo"; }; };\nrun = { t_end = 0.125; };\n' > "$TMP/icfifo.cfg"
    expect_error icfifo "Cannot open the particle file '.*fifo': it is a FIFO, not a regular file"
    output plain ''
    timeout 20 "$GRAVHOST" run "$TMP/plain.cfg" --output "$TMP/out-plain" --restart "$TMP/fifo" 2>"$TMP/ckfifo.err"
    [ $? = 1 ] && grep -q 'cannot open the checkpoint .*fifo: it is a FIFO, not a regular file' "$TMP/ckfifo.err"
    ok $? "a FIFO as the checkpoint to restart from: expect_error at once"
else
    for k in 1 2 3; do ok 0 "# SKIP mkfifo failed here"; done
fi
exit $fail
