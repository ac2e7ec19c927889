#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# readme-first-command — the README's first command works as root without
# sudo (a container) and as a user with sudo. The line
# is taken from README.md as it stands and run through sh with a PATH of
# stubs only: id (says root or not), apt-get and dpkg-query (record, install
# nothing), sudo (present or not), python3 (modules present), make
# (records its arguments). So it runs nothing real and can fail: the old
# line `sudo .ci/install-deps && make run` stops at "sudo: not found".
ROOT=@ROOT@
TMP=$(mktemp -d "${TMPDIR:-/tmp}/readme-cmd.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
n=0; fail=0
ok() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
echo "1..7"

# the first line of the first ```sh block, without its comment
line=$(awk '/^```sh/ { inblock = 1; next } inblock { print; exit }' "$ROOT/README.md" | sed 's/[[:space:]]*#.*$//')
echo "# README's first command: $line"
[ -n "$line" ]; ok $? "README.md has a first command"

# stubs: $TMP/bin-<scenario>, nothing else on PATH (tools it needs linked in)
mkbin() {  # mkbin DIR UID WITH_SUDO
    d=$1; mkdir -p "$d"
    for t in sh grep sed awk cat env dirname; do
        p=$(command -v $t) && ln -sf "$p" "$d/$t"
    done
    printf '#!/bin/sh\n[ "$1" = -u ] && echo %s || echo "uid=%s"\n' "$2" "$2" > "$d/id"
    printf '#!/bin/sh\necho "dpkg-query: no packages found" >&2; exit 1\n' > "$d/dpkg-query"
    printf '#!/bin/sh\necho "apt-get $* (as ${STUB_AS:-self})" >> "%s/calls"\n' "$d" > "$d/apt-get"
    printf '#!/bin/sh\nexit 0\n' > "$d/python3"
    printf '#!/bin/sh\necho "make $*" >> "%s/calls"\n' "$d" > "$d/make"
    if [ "$3" = 1 ]; then
        printf '#!/bin/sh\nSTUB_AS=root; export STUB_AS; exec "$@"\n' > "$d/sudo"
    fi
    chmod +x "$d"/*
}

run_line() {  # run_line DIR: the README line in the source tree, PATH = DIR only
    (cd "$ROOT" && PATH="$1" sh -c "$line") >"$1/out" 2>&1
}

scenario() {  # scenario NAME UID WITH_SUDO LABEL: the line as that user; rc = its status
    mkbin "$TMP/$1" "$2" "$3"
    run_line "$TMP/$1"; rc=$?
    sed "s/^/# $4: /" "$TMP/$1/out" "$TMP/$1/calls" 2>/dev/null
}

installs_then_runs() {  # installs_then_runs NAME AS LABEL WHAT
    [ $rc = 0 ]; ok $? "$3: exit status $rc"
    grep -q "^apt-get install .*(as $2)" "$TMP/$1/calls" 2>/dev/null && grep -q '^make run' "$TMP/$1/calls"
    ok $? "$3: $4"
}

scenario root 0 0 "root"
installs_then_runs root self "as root without sudo" "apt-get installs, then make run runs"
scenario user 1000 1 "sudo user"
installs_then_runs user root "as a user with sudo" "apt-get runs through sudo, then make run runs"

scenario nosudo 1000 0 "user without sudo"
[ $rc != 0 ] && ! grep -q '^make' "$TMP/nosudo/calls" 2>/dev/null; ok $? "a user without sudo: stops (exit status $rc) before make"
grep -q 'as root or install sudo' "$TMP/nosudo/out"; ok $? "... with a sentence saying what to do"
exit $fail
