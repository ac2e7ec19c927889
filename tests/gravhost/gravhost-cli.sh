#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gravhost-cli — config errors name the file, line and setting; plugin
# parameters pass through and unknown ones are rejected with the plugin's
# sentence; info, list, integrators and compare work; no progress output in
# a pipe; a solver switch mid-run keeps the trajectory (switch to the same
# exact solver is bit-identical; a tree solver stays within its error).
NAME=gravhost-cli
. '@TESTLIB@'
echo "1..21"

BASE='initial_conditions = { model = "plummer"; n = 256; seed = 1; };
run = { t_end = 0.25; };'
printf '%s\nsolver = { plugin = "cpu-direct"; colour = "red"; };\n' "$BASE" > "$TMP/unknown.cfg"
expect_error unknown "unknown.cfg:3: solver.colour: unknown setting"
printf '%s\nsolver = { plugin = "cpu-direct"; };\nintegrator = { name = "block-rk2";\n  params = { eta = "fast"; }; };\n' "$BASE" > "$TMP/badvalue.cfg"
expect_error badvalue "badvalue.cfg:5: integrator.params.eta: .*not a finite number"
printf '%s\nsolver = { plugin = "cpu-direct"; };\nintegrator = { name = "leapfrog"; params = { eta = 0.1; }; };\n' "$BASE" > "$TMP/wrongparam.cfg"
expect_error wrongparam "wrongparam.cfg:4: integrator.params.eta: integrator leapfrog has no parameter \"eta\": it accepts dt"
printf '%s\nsolver = { plugin = "cpu-direct";\n  params = { theta = 0.5; }; };\n' "$BASE" > "$TMP/plugparam.cfg"
expect_error plugparam "plugparam.cfg:4: solver.params.theta: .*theta"
printf '%s\nsolver = { plugin = "no-such-solver"; };\n' "$BASE" > "$TMP/noplugin.cfg"
expect_error noplugin "noplugin.cfg:3: solver.plugin: "
printf 'solver = { plugin = "cpu-direct"; };\nrun = { t_end = "soon"; };\n' > "$TMP/type.cfg"
expect_error type "type.cfg:2: run.t_end: expected a number"
printf 'solver = { plugin = = "cpu-direct"; };\n' > "$TMP/syntax.cfg"
expect_error syntax "syntax.cfg:1: syntax error"
printf '%s\nsolver = { plugin = "cpu-direct"; };\noutput = { snapshot_files = "each"; };\n' "$BASE" > "$TMP/files.cfg"
expect_error files "files.cfg:4: output.snapshot_files: expected \"one\" .* or \"per-rank\""
printf '%s\nsolver = { plugin = "cpu-direct"; };\n' "$BASE" > "$TMP/tinf.cfg"
"$GRAVHOST" run "$TMP/tinf.cfg" --t-end inf --output "$TMP/out-tinf" 2>"$TMP/tinf.err"
[ $? = 2 ] && grep -q 'needs a finite time >= 0 (got "inf")' "$TMP/tinf.err" && ! [ -d "$TMP/out-tinf" ]
ok $? "--t-end inf is refused before anything runs, as run.t_end = inf is"

"$GRAVHOST" info cpu-direct > "$TMP/info" 2>&1 && grep -q '^eps ' "$TMP/info" && grep -q 'usable   yes' "$TMP/info"
ok $? "info cpu-direct prints its parameter table"
# a plugin table with a NULL 1.0 member (describe_params): refused at load,
# naming it, by info and by run (it used to crash both with SIGSEGV)
NULLPLUG="$BUILD/tests/fixtures/gravplug-nullmember.so"
"$GRAVHOST" info "$NULLPLUG" > "$TMP/nullinfo" 2>&1
rc=$?
[ $rc != 0 ] && [ $rc -lt 128 ] && grep -q 'describe_params' "$TMP/nullinfo"
ok $? "info on a table with describe_params NULL: a sentence naming it (rc $rc)"
sed 's/^/# /' "$TMP/nullinfo"
printf '%s\nsolver = { plugin = "%s"; };\n' "$BASE" "$NULLPLUG" > "$TMP/nullplug.cfg"
expect_error nullplug "nullplug.cfg:3: solver.plugin: .*describe_params"
"$GRAVHOST" list > "$TMP/list" 2>&1 && grep -q '^cpu-direct ' "$TMP/list"
ok $? "list finds cpu-direct"
"$GRAVHOST" integrators > "$TMP/integ" 2>&1 && grep -q '^block-rk2 ' "$TMP/integ" && grep -q '^rk8pd ' "$TMP/integ"
ok $? "integrators lists block-rk2 and rk8pd"
"$GRAVHOST" compare --ref cpu-direct --test cpu-tree --n 2000 --param eps=0.01 > "$TMP/cmp" 2>&1
rc=$?
sed 's/^/# /' "$TMP/cmp"
med=$(sed -n 's/^|da|\/|a| (acceleration) *median \([0-9.e+-]*\).*/\1/p' "$TMP/cmp")
[ $rc = 0 ] && python3 -c "import sys; m=float('${med:-nan}'); sys.exit(not (0 < m < 1e-2))"
ok $? "compare cpu-direct vs cpu-tree: median relative force error $med in (0, 1e-2)"

# a clean run in a pipe: nothing on stderr, a log with a header and lines
printf '%s\nsolver = { plugin = "cpu-direct"; params = { eps = 0.05; }; };\noutput = { log_interval = 0.125; };\n' "$BASE" > "$TMP/clean.cfg"
"$GRAVHOST" run "$TMP/clean.cfg" --output "$TMP/clean" 2>"$TMP/clean.err" | cat
[ $? = 0 ] && [ ! -s "$TMP/clean.err" ] && [ "$(grep -vc '^#' "$TMP/clean/diagnostics.tsv")" = 4 ]
ok $? "a run in a pipe prints nothing on stderr and logs t = 0, 0.125, 0.25"
# --progress ends with the run's time and the steps' own part of it (a
# run whose steps take a measurable ~0.1 s)
printf 'initial_conditions = { model = "plummer"; n = 2048; seed = 1; };\nrun = { t_end = 0.125; };\nsolver = { plugin = "cpu-direct"; params = { eps = 0.05; }; };\n' > "$TMP/timed.cfg"
"$GRAVHOST" run "$TMP/timed.cfg" --output "$TMP/timed" --progress 2>"$TMP/timed.err" >/dev/null
line=$(grep 'gravhost: done' "$TMP/timed.err")
echo "# $line"
echo "$line" | python3 -c "
import re, sys
m = re.search(r'force calls, ([0-9.]+) s; this session ([0-9.]+) s, ([0-9.]+) s of it in steps', sys.stdin.read())
sys.exit(not (m and 0 < float(m.group(3)) <= float(m.group(2)) + 0.05))"
ok $? "--progress's last line gives the steps' own time, within the session's"

# switches: to the same exact solver (bit-identical), to a tree (within its error)
cat > "$TMP/one.cfg" <<CFG
solver = { plugin = "cpu-direct"; params = { eps = 0.05; }; };
initial_conditions = { model = "plummer"; n = 512; seed = 9; };
integrator = { name = "block-rk2"; params = { dt = 0.125; eta = 0.1; }; };
run = { t_end = 1.0; };
output = { log_interval = 0.5; snapshot_interval = 1.0; };
CFG
sed 's/^run = .*/run = { t_end = 1.0; };\nswitch = ( { at_time = 0.5; plugin = "cpu-direct"; } );/' "$TMP/one.cfg" > "$TMP/same.cfg"
sed 's/^run = .*/run = { t_end = 1.0; };\nswitch = ( { at_time = 0.5; plugin = "cpu-tree"; params = { eps = 0.05; theta = 0.3; }; } );/' "$TMP/one.cfg" > "$TMP/tree.cfg"
sed 's/^run = .*/run = { t_end = 1.0; };\nswitch = ( { below_active_fraction = 0.5; plugin = "cpu-direct"; } );/' "$TMP/one.cfg" > "$TMP/frac.cfg"
for c in one same tree frac; do "$GRAVHOST" run "$TMP/$c.cfg" --output "$TMP/$c" 2>>"$TMP/sw.err"; done
sed 's/^/# /' "$TMP/sw.err"
python3 - "$TMP" > "$TMP/sw.out" <<'PY'
import sys, h5py, numpy as np
d = sys.argv[1]
x = {c: h5py.File(f"{d}/{c}/snap_0001.h5", "r")["PartType1/Coordinates"][...] for c in ("one", "same", "tree", "frac")}
print("same", int(np.array_equal(x["one"], x["same"])), int(np.array_equal(x["one"], x["frac"])))
print("tree", np.median(np.linalg.norm(x["one"] - x["tree"], axis=1)))
PY
sed 's/^/# /' "$TMP/sw.out"
grep -q '^same 1 1' "$TMP/sw.out"
ok $? "switching to the same exact solver (at a time, or on the active fraction) is bit-identical"
grep -q 'cpu-tree$' "$TMP/tree/diagnostics.tsv" 2>/dev/null || tail -n 1 "$TMP/tree/diagnostics.tsv" | grep -q 'cpu-tree'
ok $? "after the switch the log names cpu-tree"
python3 -c "
import sys
v = float(open('$TMP/sw.out').read().split('tree')[1].split()[0])
sys.exit(not (0 < v < 1e-3))"
ok $? "switching to cpu-tree mid-run: median position difference at t = 1 below 1e-3"

# a switch without params inherits only what the new plugin describes:
# solver.params has theta (cpu-tree), the switch goes to cpu-direct
sed -e 's/plugin = "cpu-direct"; params = { eps = 0.05; }/plugin = "cpu-tree"; params = { eps = 0.05; theta = 0.4; }/' \
    -e 's/^run = .*/run = { t_end = 0.5; };\nswitch = ( { at_time = 0.25; plugin = "cpu-direct"; } );/' "$TMP/one.cfg" > "$TMP/inherit.cfg"
"$GRAVHOST" run "$TMP/inherit.cfg" --output "$TMP/inherit" 2>"$TMP/inherit.err" &&
    tail -n 1 "$TMP/inherit/diagnostics.tsv" | grep -q 'cpu-direct'
ok $? "a switch tree -> direct without params drops the inherited theta and runs"
sed 's/^/# /' "$TMP/inherit.err"
exit $fail
