#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gravplug.Solver from Python: error paths, array policy, cpu-direct physics.

Runs from a checkout without installing: the package is taken from
python/ next to this file and libgravplug.so from the build tree
(GRAVPLUG_BUILD, set by tests/python/module.mk, or <repo>/build).
"""

import os

import pyprelude  # noqa: E402,F401  (python/ on the path; skips without numpy)
import numpy as np  # noqa: E402

from gravplug._tap import Tap  # noqa: E402

t = Tap()
with t.stop_unless("gravplug imports and finds libgravplug.so"):
    import gravplug
    from gravplug import _arrays
    lib = gravplug.where()["library"]
t.ok(True, f"gravplug finds libgravplug.so ({lib})")
G = gravplug

# ---- the exceptions: one per status, each also the built-in it names ----------
BUILTIN = {G.Status.INVALID_ARGUMENT: ValueError, G.Status.BAD_STATE: RuntimeError,
           G.Status.OUT_OF_MEMORY: MemoryError, G.Status.DEVICE: RuntimeError,
           G.Status.UNSUPPORTED: NotImplementedError, G.Status.UNKNOWN_PARAMETER: LookupError,
           G.Status.ABI_MISMATCH: RuntimeError, G.Status.INTERNAL: RuntimeError}
for st, builtin in BUILTIN.items():
    try:
        e = G.errors.error_for(st, "the plugin's sentence", "a call")
        good = (isinstance(e, G.GravplugError) and isinstance(e, builtin) and e.status == st
                and "the plugin's sentence" in str(e) and st.c_name in str(e))
        detail = repr(e)
    except Exception as ex:  # a class that cannot be made at all
        good, detail = False, f"{type(ex).__name__}: {ex}"
    t.ok(good, f"status {st.c_name} raises a {builtin.__name__} that carries the sentence", detail)

# ---- loading and parameters ---------------------------------------------------
e = t.raises(G.PluginNotFoundError, lambda: G.Solver("no-such-plugin"),
             "unknown plugin name raises PluginNotFoundError",
             lambda e: "no-such-plugin" in str(e) and isinstance(e, FileNotFoundError))
t.ok(e is not None and "GRAVPLUG_PATH" in e.sentence,
     "its sentence says where to look (GRAVPLUG_PATH)", e and e.sentence)
t.raises(G.PluginNotFoundError, lambda: G.Solver("/nonexistent/gravplug-x.so"),
         "a missing plugin path raises PluginNotFoundError")
# A table with a NULL 1.0 member (describe_params) is refused at load,
# naming it, through libgravplug and through the bare-file fallback: it
# used to crash Solver with SIGSEGV.
nullplug = os.path.join(os.path.dirname(os.path.dirname(lib)), "tests", "fixtures", "gravplug-nullmember.so")
if os.path.exists(nullplug):
    from gravplug import _plugin
    t.raises(G.GravplugError, lambda: G.Solver(nullplug), "Solver on a table with describe_params NULL",
             lambda e: "describe_params" in str(e))
    t.raises(G.AbiMismatchError, lambda: _plugin._open_path(nullplug),
             "the bare-file loader refuses it too", lambda e: "describe_params" in str(e))
else:
    t.skip(2, f"{nullplug} not built")

# The bare-file loader's trust rules are the library's: every directory up
# to / counts (one above the plugin's may be world-writable only when
# sticky), and the file it checked is the file it loads.
import shutil  # noqa: E402
import tempfile  # noqa: E402
from gravplug import _plugin  # noqa: E402
top = tempfile.mkdtemp()
shared = os.path.join(top, "shared")
os.makedirs(os.path.join(shared, "mine"))
copy = os.path.join(shared, "mine", "gravplug-cpu-direct.so")
shutil.copy(G.Solver("cpu-direct").path, copy)
os.chmod(shared, 0o777)
t.raises(G.PluginNotFoundError, lambda: _plugin._open_path(copy),
         "bare-file loader: a world-writable folder above without the sticky bit is refused",
         lambda e: "sticky" in str(e) and shared in str(e))
os.chmod(shared, 0o1777)
h = _plugin._open_path(copy)
t.ok(h.name == "cpu-direct" and h.path == copy, "with the sticky bit it loads, the path as given", h.path)
os.chmod(shared, 0o755)
shutil.rmtree(top)

s = G.Solver("cpu-direct", eps=0.0)
t.ok(s.name == "cpu-direct" and G.Capability.EXACT in s.capabilities,
     "Solver('cpu-direct') opens, reports EXACT", repr(s))
t.ok("eps" in s.params and "G" in s.params, "params lists eps and G",
     list(s.params))
t.ok(s.params["eps"] == 0.0 and isinstance(s.params["eps"], float),
     "params['eps'] reads a float 0.0", repr(s.params["eps"]))
s.params["eps"] = 0.25
t.is_num(s.get_param("eps"), 0.25, 0, "params['eps'] = 0.25 goes through set_param")
s.set_param("eps", 0)
t.ok("eps" in s.describe() and "cpu-direct" in s.describe(), "describe() is a table")
t.ok(any(p.name == "eps" for p in G.describe_params("cpu-direct")),
     "describe_params works without an instance")

e = t.raises(G.UnknownParameterError, lambda: G.Solver("cpu-direct", theta=0.5),
             "unknown parameter at init raises UnknownParameterError",
             lambda e: isinstance(e, LookupError) and "eps" in str(e))
e = t.raises(G.UnknownParameterError, lambda: s.set_param("thetaa", 1),
             "unknown parameter in set_param raises UnknownParameterError",
             lambda e: e.status == G.Status.UNKNOWN_PARAMETER and e.code == 6
             and e.status_name == "GP_ERR_UNKNOWN_PARAMETER")
e = t.raises(G.InvalidArgumentError, lambda: s.set_param("eps", "abc"),
             "unparsable value raises InvalidArgumentError (plugin's sentence)",
             lambda e: isinstance(e, ValueError) and "abc" in e.sentence
             and e.status_name == "GP_ERR_INVALID_ARGUMENT")
t.raises(G.InvalidArgumentError, lambda: G.Solver("cpu-direct", eps="abc"),
         "bad value at init raises InvalidArgumentError")
t.raises(G.InvalidArgumentError, lambda: s.set_param("eps", -1.0),
         "value outside describe_params' range is rejected", lambda e: "[0,inf)" in str(e))
t.raises(TypeError, lambda: s.set_param("eps", [1, 2]), "a list as a value is a TypeError")
t.ok(s.params["eps"] == 0.0, "failed set_param calls leave eps unchanged")

# ---- state errors -------------------------------------------------------------
e = t.raises(G.BadStateError, lambda: s.forces(),
             "forces() before set_particles raises BadStateError",
             lambda e: e.status_name == "GP_ERR_BAD_STATE" and "set_particles" in e.sentence)
t.raises(G.BadStateError, lambda: s.update_positions(np.zeros((2, 3))),
         "update_positions before set_particles raises BadStateError")
t.raises(G.BadStateError, lambda: s.field(np.zeros((1, 3))),
         "field() before set_particles raises BadStateError")

# ---- array policy: checked before C ------------------------------------------
pos = np.array([[0.0, 0, 0], [1, 0, 0]])
mass = np.array([1.0, 2.0])
t.ok(_arrays.as_vectors(pos, "pos") is pos, "a float64 C-contiguous (n,3) array is passed as is (no copy)")
t.raises(TypeError, lambda: s.set_particles(pos.astype(np.float32), mass),
         "float32 positions raise TypeError", lambda e: "float64" in str(e))
t.raises(TypeError, lambda: s.set_particles(pos.astype(np.int64), mass),
         "integer positions raise TypeError")
t.raises(ValueError, lambda: s.set_particles(np.zeros((2, 2)), mass),
         "shape (n,2) raises ValueError", lambda e: "(n, 3)" in str(e))
t.raises(ValueError, lambda: s.set_particles(np.zeros(6), mass),
         "a flat (3n,) array raises ValueError")
t.raises(ValueError, lambda: s.set_particles(np.zeros((2, 6))[:, ::2], mass),
         "non-contiguous positions raise ValueError", lambda e: "contiguous" in str(e))
t.raises(ValueError, lambda: s.set_particles(np.asfortranarray(np.ones((2, 3))), mass),
         "Fortran-ordered positions raise ValueError")
t.raises(ValueError, lambda: s.set_particles(pos, np.ones(3)),
         "mass of the wrong length raises ValueError")
t.raises(ValueError, lambda: s.set_particles(np.zeros((0, 3)), np.zeros(0)),
         "zero particles raise ValueError")
t.ok(s.n == 0, "rejected arrays never reached the plugin (n still 0)")

nanpos = pos.copy()
nanpos[1, 2] = np.nan
t.raises(G.InvalidArgumentError, lambda: s.set_particles(nanpos, mass),
         "NaN position raises InvalidArgumentError from the plugin",
         lambda e: "NaN" in e.sentence or "finite" in e.sentence)
t.raises(G.InvalidArgumentError, lambda: s.set_particles(pos, np.array([1.0, -1.0])),
         "negative mass raises InvalidArgumentError")

# ---- two-body physics (cpu-direct, exact) -------------------------------------
s.set_particles(pos, mass)            # m=1 at 0, m=2 at x=1
acc, pot = s.forces()
t.ok(np.allclose(acc, [[2, 0, 0], [-1, 0, 0]], rtol=1e-14, atol=0),
     "two-body accelerations: a1 = +G m2/r^2, a2 = -G m1/r^2", acc)
t.ok(np.allclose(pot, [-2, -1], rtol=1e-14), "two-body potentials: -G m_j / r", pot)
t.ok(s.n == 2 and s.n_active == 2, "n and n_active after set_particles")

s.set_param("eps", 0.5)
acc, pot = s.forces()
t.is_num(acc[0, 0], 2 / 1.25 ** 1.5, 1e-14, "softened force: G m r / (r^2+eps^2)^(3/2)")
t.is_num(pot[1], -1 / 1.25 ** 0.5, 1e-14, "softened potential: -G m / sqrt(r^2+eps^2)")
s.set_param("eps", 0)
s.set_param("G", 2.0)
acc, _ = s.forces()
t.is_num(acc[1, 0], -2.0, 1e-14, "G = 2 doubles the acceleration")
s.set_param("G", 1.0)

a_f, p_f = s.field([[0.5, 0.5, 0]])
r1, r2 = np.array([-0.5, -0.5, 0]), np.array([0.5, -0.5, 0])
want = 1 * r1 / np.linalg.norm(r1) ** 3 + 2 * r2 / np.linalg.norm(r2) ** 3
t.ok(np.allclose(a_f[0], want, rtol=1e-14), "field at a point (list input converted)", a_f, want)
t.is_num(p_f[0], -3 / np.sqrt(0.5), 1e-14, "potential at a point")
t.raises(G.InvalidArgumentError, lambda: s.field(np.array([[np.inf, 0, 0]])),
         "an Inf field point raises InvalidArgumentError from the plugin")

s.update_positions(np.array([[0.0, 0, 0], [2, 0, 0]]))
acc, _ = s.forces()
t.is_num(acc[0, 0], 0.5, 1e-14, "update_positions moves particles (force at r=2)")

s.set_active([1])
acc, pot = s.forces()
t.ok(acc.shape == (1, 3) and np.isclose(acc[0, 0], -0.25), "set_active([1]): forces of that particle only", acc)
t.raises(ValueError, lambda: s.set_active([2]), "active index >= n raises ValueError")
t.raises(ValueError, lambda: s.set_active([-1]), "negative active index raises ValueError")
t.raises(TypeError, lambda: s.set_active([0.5]), "float active indices raise TypeError")
t.raises(G.InvalidArgumentError, lambda: s.set_active([1, 1]),
         "a repeated active index raises InvalidArgumentError from the plugin")
acc, _ = s.forces()
t.ok(acc.shape == (1, 3), "a failed set_active leaves the previous subset")
s.set_active(None)

out = (np.empty((2, 3)), np.empty(2))
acc, pot = s.forces(out=out)
t.ok(acc is out[0] and pot is out[1], "forces(out=...) fills the caller's arrays in place")
t.raises(ValueError, lambda: s.forces(out=(np.empty((3, 3)), np.empty(3))),
         "out arrays of the wrong shape raise ValueError")

st = s.stats()
t.ok(st.force_calls >= 5 and st.field_calls >= 1 and st.pp_interactions > 0,
     "stats() counts force and field calls", st)
t.ok(isinstance(st.as_dict(), dict), "stats().as_dict() is a dict")

# ---- a larger check against numpy ---------------------------------------------
rng = np.random.default_rng(7)
P = rng.normal(size=(200, 3))
M = rng.uniform(0.5, 1.5, size=200)
s.set_particles(P, M)
s.set_param("eps", 0.01)
acc, pot = s.forces()
d = P[None, :, :] - P[:, None, :]
r2 = (d ** 2).sum(-1) + 0.01 ** 2
np.fill_diagonal(r2, np.inf)
ref = (M[None, :, None] * d / r2[..., None] ** 1.5).sum(1)
err = np.abs(acc - ref).max() / np.abs(ref).max()
t.ok(err < 1e-12, f"N=200 forces match a numpy direct sum (max rel. error {err:.2e})")

# ---- two instances in two threads at once (ctypes releases the GIL) -------------
import threading  # noqa: E402
with G.Solver("cpu-direct", eps=0.01) as sa, G.Solver("cpu-direct", eps=0.01) as sb:
    sa.set_particles(P, M)
    sb.set_particles(P[::-1].copy(), M[::-1].copy())
    results = {}

    def run(name, solver):
        results[name] = [solver.forces()[0] for _ in range(5)]
    threads = [threading.Thread(target=run, args=("a", sa)), threading.Thread(target=run, args=("b", sb))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    same = all(np.array_equal(x, acc) for x in results["a"]) and \
        all(np.array_equal(x, acc[::-1]) or np.allclose(x, acc[::-1], rtol=1e-13) for x in results["b"])
    t.ok(same, "two solvers used from two threads give the serial results (bit-identical run to run)")

# ---- lifetime ------------------------------------------------------------------
s.close()
s.close()
t.ok(s.closed, "close() twice is fine")
t.raises(G.BadStateError, lambda: s.forces(), "forces() after close raises BadStateError (no crash)")
t.raises(G.BadStateError, lambda: s.set_param("eps", 1), "set_param after close raises BadStateError")
with G.Solver("cpu-direct") as s2:
    s2.set_particles([[0, 0, 0], [0, 0, 1]], [1, 1])
    t.ok(s2.forces()[0].shape == (2, 3), "context manager + list inputs")
t.ok(s2.closed, "leaving the with block closes the solver")

t.done_testing()
