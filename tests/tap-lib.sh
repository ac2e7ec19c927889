# SPDX-License-Identifier: Apache-2.0
# tests/tap-lib.sh — what the shell TAP tests share; sourced after the
# test has made its scratch folder $tmp.
#
#   t N DESCRIPTION COMMAND...   one TAP line for COMMAND; its output as
#                                comments when it fails (and fail=1)
#   pip_backend_or_skip PIP      exits with a TAP skip unless PIP can fetch
#                                the wheels' build backend (setuptools >= 77,
#                                for the SPDX license expression) from the
#                                package index or its cache; a short
#                                timeout: offline is a skip, not a long wait
fail=0
t() {
    n=$1; d=$2; shift 2
    if "$@" >"$tmp/log" 2>&1; then echo "ok $n - $d"; else echo "not ok $n - $d"; sed 's/^/# /' "$tmp/log"; fail=1; fi
}
pip_backend_or_skip() {
    if ! "$1" download -q --timeout 15 --retries 1 --no-deps -d "$tmp/probe" 'setuptools>=77' > "$tmp/probe.log" 2>&1; then
        echo "1..0 # SKIP pip cannot fetch the build backend setuptools>=77 (offline?): $(tail -1 "$tmp/probe.log")"
        exit 0
    fi
}
