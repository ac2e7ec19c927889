#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# gravhost-help — every subcommand answers --help (its usage on stdout,
# nothing on stderr, exit 0) and --version (exit 0) without doing its work
# (run --help reads no file named --help; compare --help refuses nothing),
# and the manual page docs/gravhost.1 describes exactly the options each
# subcommand's --help names: every one of them in that subcommand's
# section, and no option there that --help does not know.
NAME=gravhost-help
. '@TESTLIB@'
ROOT=$(dirname "$(dirname "$(dirname '@TESTLIB@')")")
MAN="$ROOT/docs/gravhost.1"
VERSION=$(cat "$ROOT/VERSION")
SUBS="run info list integrators compare"
echo "1..29"

# section SUB: the lines of the man page's ".SS gravhost SUB" section, as
# text (roff's \- as -, font changes dropped)
section() {
    awk -v want="gravhost $1" '
        /^\.SS / { s = $0; sub(/^\.SS "?/, "", s); sub(/"$/, "", s); on = (index(s, want) == 1); next }
        /^\.SH / { on = 0 }
        on' "$MAN" | sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g'
}
# long options named in a text (--help and --version are everyone's)
options() { grep -o -- '--[a-z][a-z-]*' | sort -u | grep -v -x -e '--help' -e '--version'; }

for sub in $SUBS; do
    "$GRAVHOST" $sub --help > "$TMP/$sub.help" 2> "$TMP/$sub.err"
    rc=$?
    [ $rc = 0 ] && [ ! -s "$TMP/$sub.err" ] && head -1 "$TMP/$sub.help" | grep -q "^usage: gravhost $sub"
    ok $? "gravhost $sub --help: usage on stdout, nothing on stderr, exit 0 (exit $rc)"
    sed 's/^/#   stderr: /' "$TMP/$sub.err"
    out=$("$GRAVHOST" $sub --version 2>&1)
    [ $? = 0 ] && [ "$out" = "gravhost $VERSION" ]
    ok $? "gravhost $sub --version prints gravhost $VERSION and exits 0 (got \"$out\")"
    section $sub > "$TMP/$sub.man"
    options < "$TMP/$sub.help" > "$TMP/$sub.hopts"
    options < "$TMP/$sub.man" > "$TMP/$sub.mopts"
    missing=$(comm -23 "$TMP/$sub.hopts" "$TMP/$sub.mopts" | tr '\n' ' ')
    [ -s "$TMP/$sub.man" ] && [ -z "$missing" ]
    ok $? "the man page's gravhost $sub section describes each of its $(wc -l < "$TMP/$sub.hopts") options (missing: ${missing:-none})"
    extra=$(comm -13 "$TMP/$sub.hopts" "$TMP/$sub.mopts" | tr '\n' ' ')
    [ -z "$extra" ]
    ok $? "the man page's gravhost $sub section names no option --help lacks (extra: ${extra:-none})"
done

# the top level
"$GRAVHOST" --help > "$TMP/top.help" 2>&1
rc=$?
missing=
for sub in $SUBS; do grep -q "gravhost $sub" "$TMP/top.help" || missing="$missing $sub"; done
[ $rc = 0 ] && [ -z "$missing" ]
ok $? "gravhost --help names every subcommand (missing:${missing:- none})"
[ "$("$GRAVHOST" --version)" = "gravhost $VERSION" ]
ok $? "gravhost --version"
# --help must win over the work: run reads no config, compare makes no particles
(cd "$TMP" && "$GRAVHOST" run --help > /dev/null 2> run.err; [ $? = 0 ] && ! grep -q 'cannot' run.err)
ok $? "gravhost run --help does not try to read a file named --help"
"$GRAVHOST" run "$TMP/no-such.cfg" --help > /dev/null 2>&1
ok $? "gravhost run CONFIG --help prints the usage, whatever CONFIG is"
"$GRAVHOST" compare --n 1000000000000 --help > "$TMP/cmp.out" 2>&1 && ! grep -q 'bad argument' "$TMP/cmp.out"
ok $? "gravhost compare --help after other options prints the usage and computes nothing"
# refusals still say what was wrong, on stderr, with exit 2
"$GRAVHOST" compare --n > /dev/null 2> "$TMP/refuse.err"
[ $? = 2 ] && grep -q -- '^gravhost compare: --n needs a value' "$TMP/refuse.err"
ok $? "gravhost compare --n (no value): a sentence naming --n, exit 2"
"$GRAVHOST" run "$TMP/x.cfg" --colour red > /dev/null 2> "$TMP/refuse.err"
[ $? = 2 ] && grep -q -- '^gravhost run: unknown option "--colour"' "$TMP/refuse.err"
ok $? "gravhost run CONFIG --colour: unknown option, exit 2"
"$GRAVHOST" help compare | head -1 | grep -q '^usage: gravhost compare'
ok $? "gravhost help compare prints compare's usage"
# the man page itself: well-formed roff, and the NAME line man and whatis read
if command -v groff > /dev/null 2>&1; then
    groff -man -Tutf8 -ww -z "$MAN" > "$TMP/groff.err" 2>&1 && [ ! -s "$TMP/groff.err" ]
    ok $? "groff renders docs/gravhost.1 without a warning"
    sed 's/^/#   /' "$TMP/groff.err"
else
    n=$((n+1)); echo "ok $n # SKIP groff is not installed"
fi
exit $fail
