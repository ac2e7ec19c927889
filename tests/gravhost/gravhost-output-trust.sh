#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gravhost-output-trust — gravhost writes only inside the output directory
# it opened (host_stub/run_output.c, abi/file_checks.c): symbolic links
# left in it at the log, the checkpoint, their .tmp files or a snapshot's
# .tmp never send a write (or a read) to their targets; the directory
# swapped for a link mid-run changes nothing; a directory others can write
# into is warned about, one that is a link refused (docs/TRUST.md). As
# root the same runs are made again as the user nobody (setpriv) in a
# directory of theirs.
NAME=gravhost-output-trust
. '@TESTLIB@'
echo "1..14"

cfg() {   # NAME T_END N: a config with snapshots and checkpoints every 0.125
    printf 'solver = { plugin = "cpu-direct"; params = { eps = 0.05; }; };
initial_conditions = { model = "plummer"; n = %s; seed = 1; };
run = { t_end = %s; };
output = { log_interval = 0.0625; snapshot_interval = %s; checkpoint_interval = %s; };\n' "$3" "$2" "$4" "$4" > "$TMP/$1.cfg"
}
cfg short 0.25 64 0.125

# links_case AS DIR: links at every name gravhost writes, to victims beside
# DIR; a run and a restart; the victims keep their bytes. AS: a command
# prefix (empty, or setpriv to nobody).
links_case() {
    as=$1; d=$2; w=$3
    for v in ckpt-tmp snap-tmp ckpt log-tmp; do echo "precious $v" > "$w/victim-$v"; done
    ln -s "$w/victim-ckpt-tmp" "$d/checkpoint.gpck.tmp"
    ln -s "$w/victim-snap-tmp" "$d/snap_0000.h5.tmp"
    ln -s "$w/victim-snap-tmp" "$d/snap_0002.h5.tmp"
    ln -s "$w/victim-ckpt" "$d/checkpoint.gpck"
    $as timeout 60 "$GRAVHOST" run "$TMP/short.cfg" --output "$d" 2>"$w/links.err" </dev/null
    rc=$?
    bad=0
    for v in ckpt-tmp snap-tmp ckpt; do [ "$(cat "$w/victim-$v")" = "precious $v" ] || bad=1; done
    [ $rc = 0 ] && [ $bad = 0 ] && [ -f "$d/snap_0002.h5" ] && [ ! -L "$d/checkpoint.gpck" ] && [ -f "$d/checkpoint.gpck" ]
    ok $? "$4links at checkpoint.gpck(.tmp) and snap_NNNN.h5.tmp: the run writes beside them, their targets keep their bytes (rc $rc)"
    [ $rc = 0 ] || sed 's/^/#   /' "$w/links.err"
    ln -s "$w/victim-log-tmp" "$d/diagnostics.tsv.tmp"
    $as timeout 60 "$GRAVHOST" run "$TMP/short.cfg" --output "$d" --restart --t-end 0.375 2>"$w/restart.err" </dev/null
    rc=$?
    [ $rc = 0 ] && [ "$(cat "$w/victim-log-tmp")" = "precious log-tmp" ] && [ ! -L "$d/diagnostics.tsv" ]
    ok $? "$4a link at diagnostics.tsv.tmp on a restart: the log is rewritten beside it, its target keeps its bytes (rc $rc)"
    [ $rc = 0 ] || sed 's/^/#   /' "$w/restart.err"
    echo "precious log" > "$w/victim-log"
    rm -f "$d/diagnostics.tsv"
    ln -s "$w/victim-log" "$d/diagnostics.tsv"
    $as timeout 60 "$GRAVHOST" run "$TMP/short.cfg" --output "$d" 2>"$w/log.err" </dev/null
    rc=$?
    [ $rc = 1 ] && grep -q 'diagnostics.tsv: it is a symbolic link' "$w/log.err" && [ "$(cat "$w/victim-log")" = "precious log" ]
    ok $? "$4a link at diagnostics.tsv: refused with a sentence, its target keeps its bytes (rc $rc)"
    [ $rc = 1 ] || sed 's/^/#   /' "$w/log.err"
    $as timeout 60 "$GRAVHOST" run "$TMP/short.cfg" --output "$d" --restart 2>"$w/logr.err" </dev/null
    rc=$?
    [ $rc = 1 ] && grep -q 'diagnostics.tsv: it is a symbolic link' "$w/logr.err" && [ "$(cat "$w/victim-log")" = "precious log" ]
    ok $? "$4the same on a restart, which reads the old log: refused, nothing read through the link (rc $rc)"
}

mkdir "$TMP/w" "$TMP/w/out"
links_case "" "$TMP/w/out" "$TMP/w" ""

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
    chmod 711 "$TMP"
    mkdir "$TMP/u" "$TMP/u/out"
    chown -R nobody "$TMP/u"
    AS="setpriv --reuid=nobody --regid=$(id -g nobody) --clear-groups"
    if $AS test -w "$TMP/u/out" && $AS test -x "$GRAVHOST"; then
        links_case "$AS" "$TMP/u/out" "$TMP/u" "as nobody: "
    else
        for k in 1 2 3 4; do ok 0 "# SKIP nobody cannot reach the build tree here"; done
    fi
else
    for k in 1 2 3 4; do ok 0 "# SKIP not root (or no setpriv/nobody): the runs above were a plain user's"; done
fi

# the output directory swapped for a link mid-run: the run goes on in the
# directory it opened; the link's target (holding a checkpoint) is untouched
cfg long 16 1000 1.0
mkdir "$TMP/swap" "$TMP/elsewhere"
echo "precious checkpoint" > "$TMP/elsewhere/checkpoint.gpck"
timeout 120 "$GRAVHOST" run "$TMP/long.cfg" --output "$TMP/swap" 2>"$TMP/swap.err" </dev/null &
pid=$!
wait_for_log "$TMP/swap" 8
mv "$TMP/swap" "$TMP/swap.old" && ln -s "$TMP/elsewhere" "$TMP/swap"
wait $pid
rc=$?
[ $rc = 0 ] && [ "$(cat "$TMP/elsewhere/checkpoint.gpck")" = "precious checkpoint" ] \
    && [ "$(ls "$TMP/elsewhere")" = checkpoint.gpck ] && [ -f "$TMP/swap.old/snap_0016.h5" ]
ok $? "the output directory swapped for a link mid-run: every later output in the directory opened (rc $rc)"
[ $rc = 0 ] || sed 's/^/#   /' "$TMP/swap.err"
grep -q "^16[.	]" "$TMP/swap.old/diagnostics.tsv"
ok $? "the log went on in the same directory to t = 16"

# a link as the output directory: refused, nothing written where it points
ln -s "$TMP/elsewhere" "$TMP/outlink"
timeout 60 "$GRAVHOST" run "$TMP/short.cfg" --output "$TMP/outlink" 2>"$TMP/outlink.err" </dev/null
rc=$?
[ $rc = 1 ] && grep -q "output directory .*outlink: it is a symbolic link" "$TMP/outlink.err" \
    && [ "$(ls "$TMP/elsewhere")" = checkpoint.gpck ]
ok $? "a symbolic link as the output directory: refused with a sentence (rc $rc)"

# a directory others can write into: a warning that names it
mkdir "$TMP/shared"
chmod 1777 "$TMP/shared"
timeout 60 "$GRAVHOST" run "$TMP/short.cfg" --output "$TMP/shared" 2>"$TMP/shared.err" </dev/null
rc=$?
[ $rc = 0 ] && grep -q "warning: the output directory .*shared can be changed by other users" "$TMP/shared.err"
ok $? "an output directory writable by all: the run is warned (rc $rc)"
mkdir "$TMP/mine"
timeout 60 "$GRAVHOST" run "$TMP/short.cfg" --output "$TMP/mine" 2>"$TMP/mine.err" </dev/null
! grep -q "can be changed by other users" "$TMP/mine.err"
ok $? "a directory of one's own: no warning"

# a failure's sentence names the directory as given, never /proc/self/fd
mkdir -p "$TMP/mine2/checkpoint.gpck"
timeout 60 "$GRAVHOST" run "$TMP/short.cfg" --output "$TMP/mine2" 2>"$TMP/dir.err" </dev/null
rc=$?
[ $rc = 1 ] && grep -q "$TMP/mine2/checkpoint.gpck is not a file gravhost can write" "$TMP/dir.err" \
    && ! grep -q "/proc/self/fd" "$TMP/dir.err"
ok $? "a failure's sentence names the output directory as given (rc $rc)"
[ $rc = 1 ] || sed 's/^/#   /' "$TMP/dir.err"
exit $fail
