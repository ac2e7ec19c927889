#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# What a Python user does: a fresh venv, `pip install ./python`, then
# `import gravplug` works with nothing else set (the wheel carries
# libgravplug.so and the plugins), a force call gives the right numbers,
# and `pip uninstall` takes it all away. The wheel's make step reuses this
# build tree (GRAVPLUG_MAKE_BUILD), so the test costs a pip install, not a
# second build. (generated from tests/python/python-wheel.sh by tests/python/module.mk)
unset MFLAGS MAKELEVEL GRAVPLUG_PATH GRAVPLUG_LIB GRAVPLUG_BUILD PYTHONPATH
# The wheel's make keeps the outer make's overrides, not its jobserver.
MAKEFLAGS=$(printf '%s' "${MAKEFLAGS:-}" | sed -E 's/--jobserver-(auth|fds)=[^ ]*//g; s/(^| )-j[0-9]*( |$)/ /g')
export MAKEFLAGS
root="@ROOT@"
build="@BUILD@"
version=$(cat "$root/VERSION")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gravplug-wheel.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
venv="$tmp/venv"
# numpy comes from the system's site-packages (no download); gravplug is
# not there, which step 1 shows.
if ! python3 -m venv --system-site-packages "$venv" > "$tmp/venv.log" 2>&1 || [ ! -x "$venv/bin/pip" ]; then
    echo "1..0 # SKIP python3 -m venv with pip is not available (Debian: apt-get install python3-venv)"; exit 0
fi
py="$venv/bin/python"
if ! (cd / && "$py" -c 'import numpy') > /dev/null 2>&1; then
    echo "1..0 # SKIP numpy is not installed for python3"; exit 0
fi
. "@ROOT@/tests/tap-lib.sh"
pip_backend_or_skip "$venv/bin/pip"
echo 1..7
t 1 "the fresh venv has no gravplug" sh -c "cd / && ! '$py' -c 'import gravplug'"
t 2 "pip install ./python builds the wheel with the native code and installs it" \
    env GRAVPLUG_MAKE_BUILD="$build" "$venv/bin/pip" install --no-cache-dir "$root/python"
site=$(cd / && "$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
t 3 "python -c \"import gravplug; print(gravplug.Solver('cpu-tree'))\" works from anywhere" sh -c "
    cd / && '$py' -c \"import gravplug; print(gravplug.Solver('cpu-tree'))\" | tee /dev/stderr |
    grep -q '^<gravplug.Solver cpu-tree $version '"
t 4 "it uses the library and plugins inside the installed package, and says version $version" sh -c "
    cd / && '$py' - <<'PY'
import gravplug, sys
w = gravplug.where()
print(w['library'], w['plugins'], gravplug.__version__)
lib = '$site/gravplug/lib/libgravplug.so'
ok = (w['library'] == lib and w['plugins'].get('cpu-tree') == '$site/gravplug/lib/gravplug/gravplug-cpu-tree.so'
      and gravplug.__version__ == '$version')
sys.exit(0 if ok else 1)
PY"
t 5 "one force call: two unit masses 2 apart attract with 1/4, on cpu-direct and cpu-tree" sh -c "
    cd / && '$py' - <<'PY'
import numpy as np, gravplug, sys
pos = np.array([[0.0, 0, 0], [0, 0, 2.0]]); mass = np.ones(2)
ok = True
for name in ('cpu-direct', 'cpu-tree'):
    with gravplug.Solver(name) as s:
        s.set_particles(pos, mass)
        acc, pot = s.forces()
    print(name, acc[:, 2], pot)
    ok &= bool(np.allclose(acc[:, 2], [0.25, -0.25], rtol=1e-6) and np.allclose(pot, [-0.5, -0.5], rtol=1e-6))
sys.exit(0 if ok else 1)
PY"
t 6 "pip uninstall -y gravplug" "$venv/bin/pip" uninstall -y gravplug
t 7 "nothing of gravplug is left in the venv, and import fails again" sh -c "
    left=\$(ls -d '$site'/gravplug* 2>/dev/null); test -z \"\$left\" || { echo \"left: \$left\"; exit 1; }
    cd / && ! '$py' -c 'import gravplug' 2>/dev/null"
exit $fail
