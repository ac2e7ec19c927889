#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# toy-scheme — adding an integrator is one file and one registry line:
# tests/fixtures/scheme_toy.c (toy-euler) and GP_EXTRA_SCHEMES, compiled
# into a library of its own (tests/integrators/module.mk builds it beside the
# real one). gravhost and gravhost-mpi, unchanged, run it from that
# library: gravhost lists it with its parameter, runs it, and refuses
# nothing of it; gravhost-mpi takes it at P = 2 from its flags alone
# (GP_SCHEME_MPI) and ends where P = 1 does within tree error. The real
# library does not know it. gravhost-mpi's part skips without mpirun.
NAME=toy-scheme
. "@TESTLIB@"
TOYLIB='@TOYLIB@'
MPIRUN='@MPIRUN@'
GHM="$BUILD/bin/gravhost-mpi"
echo "1..7"
toy() { LD_LIBRARY_PATH="$TOYLIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"; }

"$GH" integrators > "$TMP/real.txt" 2>&1
! grep -q '^toy-euler' "$TMP/real.txt"
ok $? "the library as built has no toy-euler"
toy "$GH" integrators > "$TMP/toy.txt" 2>&1
grep -q '^toy-euler ' "$TMP/toy.txt" && grep -q '^block-kdk ' "$TMP/toy.txt"
ok $? "with the toy library gravhost lists toy-euler beside the built-ins"
awk '/^toy-euler /{f=1; next} /^[^ ]/{f=0} f' "$TMP/toy.txt" | grep -q '^ *dt '
ok $? "toy-euler's parameter dt comes from its table"

cat > "$TMP/t.cfg" <<CFG
solver = { plugin = "cpu-tree"; params = { eps = 0.05; theta = 0.5; }; };
initial_conditions = { model = "plummer"; n = 512; seed = 5; };
integrator = { name = "toy-euler"; params = { dt = 0.0078125; }; };
run = { t_end = 0.25; };
output = { log_interval = 0.125; };
CFG
toy "$GH" run "$TMP/t.cfg" --output "$TMP/one" > /dev/null 2>"$TMP/err1"
rc=$?
[ $rc = 0 ] && [ "$(grep -c '^[0-9]' "$TMP/one/diagnostics.tsv")" = 3 ]
ok $? "gravhost runs toy-euler to t = 0.25 (rc $rc, three log lines)"
[ $rc = 0 ] || sed 's/^/#   /' "$TMP/err1"
"$GH" run "$TMP/t.cfg" --output "$TMP/none" > /dev/null 2>"$TMP/err0"
[ $? != 0 ] && grep -q 'toy-euler' "$TMP/err0"
ok $? "the real library refuses toy-euler with a sentence naming it"

if [ -z "$MPIRUN" ] || ! [ -x "$MPIRUN" ] || ! [ -x "$GHM" ]; then
    echo "ok 6 # SKIP mpirun or gravhost-mpi not found"
    echo "ok 7 # SKIP mpirun or gravhost-mpi not found"
    exit $fail
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
sed 's/"cpu-tree"/"mpi-tree"/' "$TMP/t.cfg" > "$TMP/m.cfg"
toy "$GH" run "$TMP/m.cfg" --output "$TMP/m1" > /dev/null 2>"$TMP/errm1"
timeout 300 "$MPIRUN" --oversubscribe -np 2 -x LD_LIBRARY_PATH="$TOYLIB" "$GHM" run "$TMP/m.cfg" \
    --output "$TMP/m2" > /dev/null 2>"$TMP/errm2"
rc=$?
ok $rc "gravhost-mpi runs toy-euler at P = 2 with mpi-tree (rc $rc)"
[ $rc = 0 ] || sed 's/^/#   /' "$TMP/errm2" | head -20
python3 - "$TMP/m1/diagnostics.tsv" "$TMP/m2/diagnostics.tsv" <<'PY'
import sys
def rows(p):
    lines = [l.rstrip("\n").split("\t") for l in open(p) if not l.startswith("#")]
    return [dict(zip(lines[0], l)) for l in lines[1:]]
try:
    a, b = rows(sys.argv[1]), rows(sys.argv[2])
    dE = max(abs(float(x["E"]) - float(y["E"])) / abs(float(x["E"])) for x, y in zip(a, b))
    good = len(a) == len(b) == 3 and dE < 1e-4
    print("# P = 2 against P = 1: %d and %d log lines, E differs by %.3g" % (len(a), len(b), dE))
except (OSError, KeyError, ValueError, IndexError) as e:
    good = False
    print("# cannot compare the logs: %s" % e)
sys.exit(0 if good else 1)
PY
ok $? "P = 2 ends where P = 1 does (energy within tree error)"
exit $fail
