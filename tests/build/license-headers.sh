#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every source file the repository tracks names its license in its first
# comment line (after a shebang), so a file copied out of the tree still
# says under what terms; and the license texts the headers point at exist.
# (generated from tests/build/license-headers.sh by tests/build/module.mk)
cd "@ROOT@" || exit 1
if ! command -v git >/dev/null 2>&1 || ! git rev-parse --git-dir >/dev/null 2>&1; then
    echo "1..0 # SKIP not a git checkout (the file list comes from git ls-files)"; exit 0
fi
echo 1..3
fail=0
if [ -f LICENSE ] && grep -q 'Apache License' LICENSE && grep -q 'Version 2.0, January 2004' LICENSE; then
    echo "ok 1 - LICENSE holds the Apache License 2.0"
else
    echo "not ok 1 - LICENSE holds the Apache License 2.0"; fail=1
fi
# The source kinds: C, CUDA, C++, Python, shell, make, the TAP scripts
# (tests/python/*.t are Python) and the extension-less scripts under .ci/.
files=$(git ls-files -- '*.c' '*.h' '*.cu' '*.cuh' '*.cc' '*.py' '*.sh' '*.mk' '*.t' Makefile '.ci/*')
missing=
count=0
for f in $files; do
    [ -f "$f" ] || continue
    count=$((count + 1))
    # the first line, or the second when the first is a shebang
    first=$(head -1 "$f")
    case "$first" in '#!'*) line=$(sed -n 2p "$f") ;; *) line=$first ;; esac
    case "$line" in
        *'SPDX-License-Identifier: Apache-2.0'*) ;;
        *) missing="$missing $f" ;;
    esac
done
if [ -z "$missing" ] && [ "$count" -gt 100 ]; then
    echo "ok 2 - all $count source files start with SPDX-License-Identifier: Apache-2.0"
else
    echo "not ok 2 - source files whose first comment line has no SPDX-License-Identifier: Apache-2.0 (of $count)"
    for f in $missing; do echo "#   $f"; done
    fail=1
fi
if grep -q '^license = "Apache-2.0"' python/pyproject.toml && grep -q '^license = "Apache-2.0"' python/amuse-gravplug/pyproject.toml &&
   grep -q '^license: Apache-2.0' CITATION.cff; then
    echo "ok 3 - both pyproject.toml files (gravplug, amuse-gravplug) and CITATION.cff say Apache-2.0"
else
    echo "not ok 3 - both pyproject.toml files (gravplug, amuse-gravplug) and CITATION.cff say Apache-2.0"; fail=1
fi
exit $fail
