#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gravhost-solver-path — solver.path chooses how block steps talk to the
# plugin: "1.0" and "1.1" runs of block-rk2 and block-kdk on cpu-direct end
# bit-identical (final snapshots compared exactly, with checkpoints in
# between); a bad value, and "1.1" with a 1.0-only plugin, are refused
# with the file, the line and a sentence.
NAME=gravhost-solver-path
. '@TESTLIB@'
OLD_PLUGIN="$BUILD/tests/fixtures/gravplug-sim-abi10.so"
echo "1..8"

config() {  # plugin integrator path
    cat <<CFG
solver = { plugin = "$1"; params = { eps = 0.05; }; path = "$3"; };
initial_conditions = { model = "plummer"; n = 768; seed = 4; };
integrator = { name = "$2"; params = { dt = 0.125; eta = 0.05; }; };
run = { t_end = 0.5; };
output = { log_interval = 0.125; snapshot_interval = 0.5; checkpoint_interval = 0.25; };
CFG
}

for integ in block-rk2 block-kdk; do
    for path in 1.0 1.1; do
        config cpu-direct $integ $path > "$TMP/$integ-$path.cfg"
        "$GRAVHOST" run "$TMP/$integ-$path.cfg" --output "$TMP/$integ-$path" 2>"$TMP/err"
        ok $? "$integ on cpu-direct through ABI $path runs to t = 0.5"
        sed 's/^/# /' "$TMP/err"
    done
    r=$(same_snapshot "$TMP/$integ-1.0/snap_0001.h5" "$TMP/$integ-1.1/snap_0001.h5" 2>&1)
    [ "$r" = same ]; ok $? "$integ: the 1.0 and 1.1 runs end bit-identical ($r)"
done

config cpu-direct block-rk2 2.0 > "$TMP/bad.cfg"
"$GRAVHOST" run "$TMP/bad.cfg" --output "$TMP/bad" 2>"$TMP/err"
rc=$?
sed 's/^/# /' "$TMP/err"
[ $rc != 0 ] && grep -q 'bad.cfg:1.*path.*"1.1"' "$TMP/err"
ok $? "solver.path = \"2.0\" is refused with the file, the line and the accepted values"

config "$OLD_PLUGIN" block-rk2 1.1 > "$TMP/old.cfg"
"$GRAVHOST" run "$TMP/old.cfg" --output "$TMP/old" 2>"$TMP/err"
rc=$?
sed 's/^/# /' "$TMP/err"
[ $rc != 0 ] && grep -q 'old.cfg:1: solver.path:.*cpu-direct-abi10.*1.1' "$TMP/err"
ok $? "solver.path = \"1.1\" with a 1.0-only plugin is refused, naming the plugin"
exit $fail
