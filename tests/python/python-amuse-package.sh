#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# What an AMUSE user does: `pip install ./python ./python/amuse-gravplug`
# into the environment that holds amuse-framework, then
# `from amuse.community.gravplug.interface import Gravplug` works like
# amuse.community.bhtree, runs a small Plummer sphere with energy kept, and
# `pip uninstall` takes it away again, leaving AMUSE's own files (the
# amuse and amuse.community packages belong to amuse-framework) as they were.
#
# The environment: a fresh venv, made by the Python that has AMUSE
# (GRAVPLUG_AMUSE_PYTHON; else $GRAVPLUG_AMUSE_VENV/bin/python, default the
# venv .ci/install-amuse builds; else python3), with a copy of that
# amuse-framework install (the files its RECORD names) and a .pth line for
# the rest of its site-packages (numpy, mpi4py, the mpich library).
# A copy, not that site-packages on the path alone: `amuse` is a regular
# package, so amuse/community/gravplug in a second site-packages directory
# would not be found; and the AMUSE install itself is never written to.
# The gravplug wheel's make step reuses this build tree (GRAVPLUG_MAKE_BUILD).
# (generated from tests/python/python-amuse-package.sh by tests/python/module.mk)
unset MFLAGS MAKELEVEL GRAVPLUG_PATH GRAVPLUG_LIB GRAVPLUG_BUILD PYTHONPATH
# AMUSE's install pins setuptools<70 in a constraint file (docs/PYTHON.md):
# exported, it would refuse the setuptools>=77 both wheels build with.
unset PIP_CONSTRAINT
# The wheel's make keeps the outer make's overrides, not its jobserver.
MAKEFLAGS=$(printf '%s' "${MAKEFLAGS:-}" | sed -E 's/--jobserver-(auth|fds)=[^ ]*//g; s/(^| )-j[0-9]*( |$)/ /g')
export MAKEFLAGS
root="@ROOT@"
build="@BUILD@"

# ---- the Python that has AMUSE -----------------------------------------------
venv_amuse=${GRAVPLUG_AMUSE_VENV:-$HOME/.local/share/gravplug/amuse-venv}
amuse_py=
for cand in "${GRAVPLUG_AMUSE_PYTHON:-}" "$venv_amuse/bin/python" "$(command -v python3 2>/dev/null)"; do
    [ -n "$cand" ] && [ -x "$cand" ] || continue
    if (cd / && "$cand" -c 'import amuse, mpi4py, numpy; from amuse.rfi import python_code') > /dev/null 2>&1; then
        amuse_py=$cand; break
    fi
done
if [ -z "$amuse_py" ]; then
    echo "1..0 # SKIP AMUSE not usable here (no Python with amuse-framework and mpi4py); set GRAVPLUG_AMUSE_PYTHON, or run .ci/install-amuse"
    exit 0
fi
# where amuse-framework is installed: its site-packages, its dist-info
info=$(cd / && "$amuse_py" -c '
import importlib.metadata as md, os
d = md.distribution("amuse-framework")
print(d.version); print(os.path.abspath(str(d.locate_file("")))); print(os.path.abspath(str(d._path)))' 2>/dev/null)
amuse_version=$(printf '%s\n' "$info" | sed -n 1p)
amuse_site=$(printf '%s\n' "$info" | sed -n 2p)
amuse_dist=$(printf '%s\n' "$info" | sed -n 3p)
if [ -z "$amuse_version" ] || [ ! -f "$amuse_site/amuse/__init__.py" ] || [ ! -f "$amuse_dist/RECORD" ]; then
    echo "1..0 # SKIP $amuse_py imports amuse, but not from a pip-installed amuse-framework with a RECORD (got: $info)"
    exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gravplug-amuse-pkg.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
venv="$tmp/venv"
if ! "$amuse_py" -m venv "$venv" > "$tmp/venv.log" 2>&1 || [ ! -x "$venv/bin/pip" ]; then
    echo "1..0 # SKIP $amuse_py -m venv with pip does not work: $(tail -1 "$tmp/venv.log")"; exit 0
fi
py="$venv/bin/python"
site=$(cd / && "$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# amuse-framework as pip installed it: every file its RECORD names (the
# amuse package, the dist-info, share/amuse/config.mk ... beside the venv)
if ! (cd / && "$amuse_py" - "$site" > "$tmp/copy.log" 2>&1 <<'PY'
import csv, importlib.metadata as md, os, shutil, sys
d = md.distribution("amuse-framework")
for path, _, _ in csv.reader(d.read_text("RECORD").splitlines()):
    src, dst = str(d.locate_file(path)), os.path.normpath(os.path.join(sys.argv[1], path))
    if os.path.isfile(src):
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)
PY
); then
    echo "Bail out! copying amuse-framework into a fresh venv failed: $(tail -1 "$tmp/copy.log")"; exit 1
fi
printf '%s\n' "$amuse_site" > "$site/zz-amuse-install.pth"
# pip builds both wheels in an isolated environment (tap-lib.sh)
. "@ROOT@/tests/tap-lib.sh"
pip_backend_or_skip "$venv/bin/pip"
# every file amuse-framework's RECORD names is there with its hash
# (amuse/__init__.py, amuse/community/__init__.py, ... of the copy)
cat > "$tmp/framework-intact.py" <<'PY'
import base64, csv, hashlib, importlib.metadata as md, os, sys
d = md.distribution("amuse-framework")
root = str(d.locate_file(""))
bad, n = [], 0
for path, digest, _ in csv.reader(d.read_text("RECORD").splitlines()):
    if not digest:
        continue
    algo, want = digest.split("=", 1)
    try:
        with open(os.path.join(root, path), "rb") as f:
            got = base64.urlsafe_b64encode(hashlib.new(algo, f.read()).digest()).rstrip(b"=").decode()
    except OSError as exc:
        got = f"missing ({exc.strerror})"
    n += 1
    if got != want:
        bad.append(f"{path}: {got}")
print(f"{n} files of amuse-framework {d.version} in {root}; changed or missing: {bad[:5]}")
sys.exit(1 if bad or n < 100 else 0)
PY
# A Plummer sphere of 64 bodies, 32 leapfrog steps on cpu-direct, through
# AMUSE's import path: the energy is kept to 1e-3 (it drifts by 2.9e-5 on
# this seed), the particles have moved, and the class is gravplug.amuse's
# own (one implementation).
cat > "$tmp/evolve.py" <<'PY'
import sys
from amuse.community.gravplug.interface import Gravplug, GravplugInterface
import amuse.community.gravplug
import gravplug.amuse
from amuse.ic.plummer import new_plummer_model
from amuse.support.literature import TrackLiteratureReferences
from amuse.units import nbody_system as nb
import numpy as np

TrackLiteratureReferences.suppress_output()
assert Gravplug is gravplug.amuse.Gravplug and GravplugInterface is gravplug.amuse.GravplugInterface
assert amuse.community.gravplug.Gravplug is Gravplug
np.random.seed(7)
stars = new_plummer_model(64)
g = Gravplug(solver="cpu-direct", integrator="leapfrog")
g.parameters.epsilon_squared = 0.05 ** 2 | nb.length ** 2
g.parameters.timestep = 1 / 128 | nb.time
g.particles.add_particles(stars)
e0 = (g.kinetic_energy + g.potential_energy).value_in(nb.energy)
x0 = g.particles.x.value_in(nb.length)
g.evolve_model(0.25 | nb.time)
t = g.model_time.value_in(nb.time)
e1 = (g.kinetic_energy + g.potential_energy).value_in(nb.energy)
moved = float(np.abs(g.particles.x.value_in(nb.length) - x0).max())
g.stop()
de = abs((e1 - e0) / e0)
print(f"Gravplug from {amuse.community.gravplug.__file__}: N=64, t={t}, E0={e0:.6f}, "
      f"|dE/E|={de:.2e}, largest |dx|={moved:.3f}")
sys.exit(0 if abs(t - 0.25) < 1e-12 and de < 1e-3 and moved > 1e-3 and e0 < 0 else 1)
PY

echo 1..7
t 1 "a fresh venv with amuse-framework $amuse_version (a copy of the one in $amuse_site) and no gravplug" sh -c "
    cd / && '$py' -c 'import amuse.community, mpi4py, numpy; print(amuse.community.__file__)' 2>&1 |
    grep -qx '$site/amuse/community/__init__.py' &&
    '$py' '$tmp/framework-intact.py' && ! '$py' -c 'import gravplug' 2>/dev/null &&
    ! '$py' -c 'import amuse.community.gravplug' 2>/dev/null"
t0=$(date +%s)
t 2 "pip install ./python ./python/amuse-gravplug" \
    env GRAVPLUG_MAKE_BUILD="$build" "$venv/bin/pip" install --no-cache-dir "$root/python" "$root/python/amuse-gravplug"
t_install=$(( $(date +%s) - t0 ))
t 3 "amuse-gravplug installed amuse/community/gravplug/ alone (no amuse/__init__.py, no amuse/community/__init__.py), and amuse-framework's files are unchanged" sh -c "
    cd / && '$py' - <<'PY' && '$py' '$tmp/framework-intact.py'
import importlib.metadata as md, sys
d = md.distribution('amuse-gravplug')
files = [str(f) for f in d.files]
print(files)
own = [f for f in files if not f.startswith('amuse_gravplug-')]
ok = own and all(f.startswith('amuse/community/gravplug/') for f in own) and \
     'amuse/community/gravplug/interface.py' in own
sys.exit(0 if ok else 1)
PY"
t0=$(date +%s)
t 4 "from amuse.community.gravplug.interface import Gravplug: 64 bodies, 32 steps, |dE/E| < 1e-3" \
    sh -c "cd / && timeout 120 '$py' '$tmp/evolve.py'"
t_evolve=$(( $(date +%s) - t0 ))
echo "# pip install took ${t_install} s, the evolve (worker start included) ${t_evolve} s"
sed -n 's/^Gravplug from/# Gravplug from/p' "$tmp/log"
t 5 "pip uninstall -y amuse-gravplug gravplug" "$venv/bin/pip" uninstall -y amuse-gravplug gravplug
t 6 "nothing of gravplug is left: amuse.community.gravplug and gravplug do not import" sh -c "
    left=\$(ls -d '$site'/gravplug* '$site'/amuse_gravplug* '$site'/amuse/community/gravplug 2>/dev/null)
    test -z \"\$left\" || { echo \"left: \$left\"; exit 1; }
    cd / && ! '$py' -c 'import amuse.community.gravplug' 2>/dev/null && ! '$py' -c 'import gravplug' 2>/dev/null"
t 7 "AMUSE is whole after the uninstall: every amuse-framework file as its RECORD says, amuse.community imports" sh -c "
    cd / && '$py' '$tmp/framework-intact.py' && '$py' -c 'import amuse.community; from amuse.community.interface.gd import GravitationalDynamics'"
exit $fail
