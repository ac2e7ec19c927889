#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The version is written once, in the VERSION file; everything that prints
# or records one must say the same: gravhost --version, the plugins'
# gp_api.version (compiled from the Makefile's VERSION), the Python
# package's __version__, the files setuptools reads for the wheels' versions
# (gravplug's and amuse-gravplug's), and CITATION.cff.
# (generated from tests/build/version-agree.sh by tests/build/module.mk)
root="@ROOT@"
build="@BUILD@"
want=$(cat "$root/VERSION" 2>/dev/null)
echo 1..7
fail=0
check() { # check N WHAT GOT
    if [ "$3" = "$want" ]; then echo "ok $1 - $2 says $want"
    else echo "not ok $1 - $2 says \"$3\", VERSION says \"$want\""; fail=1; fi
}
case "$want" in
    [0-9]*.[0-9]*.[0-9]*) echo "ok 1 - VERSION holds a version number ($want)" ;;
    *) echo "not ok 1 - VERSION holds a version number (got \"$want\")"; fail=1 ;;
esac
check 2 "gravhost --version" "$("$build/bin/gravhost" --version 2>&1 | sed -n 's/^gravhost //p')"
check 3 "gravhost info cpu-direct (the plugin's version)" \
    "$(GRAVPLUG_PATH="$build/plugins" "$build/bin/gravhost" info cpu-direct 2>&1 | sed -n 's/^plugin  *cpu-direct \([^ ]*\) .*/\1/p')"
if command -v python3 >/dev/null 2>&1; then
    check 4 "python gravplug.__version__" \
        "$(cd / && GRAVPLUG_BUILD="$build" GRAVPLUG_PATH="$build/plugins" PYTHONPATH="$root/python" python3 -c 'import gravplug; print(gravplug.__version__)' 2>&1)"
else
    echo "ok 4 # SKIP python3 is not installed"
fi
# setuptools reads python/VERSION (pyproject.toml: version = {file = "VERSION"})
if grep -q '^version = {file = "VERSION"}' "$root/python/pyproject.toml" && grep -q '"version"' "$root/python/pyproject.toml"; then
    check 5 "python/VERSION (the wheel's version, by pyproject.toml)" "$(cat "$root/python/VERSION" 2>/dev/null)"
else
    echo "not ok 5 - python/pyproject.toml takes its version from the VERSION file"; fail=1
fi
check 6 "CITATION.cff" "$(sed -n 's/^version: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$root/CITATION.cff")"
# python/amuse-gravplug/VERSION, the same way, for the amuse-gravplug wheel
if grep -q '^version = {file = "VERSION"}' "$root/python/amuse-gravplug/pyproject.toml" && grep -q '"version"' "$root/python/amuse-gravplug/pyproject.toml"; then
    check 7 "python/amuse-gravplug/VERSION (amuse-gravplug's version, by its pyproject.toml)" "$(cat "$root/python/amuse-gravplug/VERSION" 2>/dev/null)"
else
    echo "not ok 7 - python/amuse-gravplug/pyproject.toml takes its version from the VERSION file"; fail=1
fi
exit $fail
