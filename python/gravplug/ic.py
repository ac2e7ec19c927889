# SPDX-License-Identifier: Apache-2.0
"""Initial conditions from libgravplug.so (host_stub/ic/ic.h; the gp_ic set:
host_stub/particles/particle_set.h).

    from gravplug import ic
    p = ic.make("plummer", 4096, seed=42)           # N-body (Henon) units
    p.pos, p.vel, p.mass, p.id                       # numpy arrays
    g = ic.make("galaxy", 20000, seed=1, disk_mass=0.05)
    ic.models()                                      # names
    print(ic.describe("galaxy"))                     # options, defaults, docs

Options are passed by keyword and sent to C as strings (bools as
true/false); unknown names or bad values raise InvalidArgumentError with
the library's sentence. Every model is reproducible from (n, seed, options)
and returned in its centre-of-mass frame.
"""
import ctypes
import dataclasses
import operator
from ctypes import POINTER, Structure, c_char_p, c_double, c_int, c_size_t, c_uint64

import numpy as np

from . import _abi
from ._lib import load_library
from .errors import InvalidArgumentError


class _GpIc(Structure):
    _fields_ = [("n", c_size_t), ("pos", POINTER(c_double)), ("vel", POINTER(c_double)),
                ("mass", POINTER(c_double)), ("id", POINTER(c_uint64))]


class _GpIcOpts(Structure):
    _fields_ = [("params", POINTER(_abi.GpParam)), ("n_params", c_size_t)]


class _GpIcOptInfo(Structure):
    _fields_ = [("name", c_char_p), ("type", c_int), ("default_value", c_char_p),
                ("allowed", c_char_p), ("doc", c_char_p)]


_OPT_TYPES = {0: "double", 1: "int", 2: "bool", 3: "string", 4: "enum"}
_lib = None


def _bind():
    global _lib
    if _lib is None:
        lib = load_library()
        lib.gp_ic_make.argtypes = [c_char_p, c_size_t, c_uint64, ctypes.c_void_p,
                                   POINTER(_GpIc), c_char_p, c_size_t]
        lib.gp_ic_make.restype = c_int
        lib.gp_ic_free.argtypes = [POINTER(_GpIc)]
        lib.gp_ic_free.restype = None
        lib.gp_ic_models.argtypes = []
        lib.gp_ic_models.restype = POINTER(c_char_p)
        lib.gp_ic_describe.argtypes = [c_char_p, POINTER(c_size_t)]
        lib.gp_ic_describe.restype = POINTER(_GpIcOptInfo)
        lib.gp_ic_summary.argtypes = [c_char_p]
        lib.gp_ic_summary.restype = c_char_p
        _lib = lib
    return _lib


@dataclasses.dataclass
class ICParticles:
    """Particles of an initial-conditions model: pos (n,3), vel (n,3),
    mass (n,), id (n,) — float64 C-contiguous, ready for Solver/Gravity."""
    pos: np.ndarray
    vel: np.ndarray
    mass: np.ndarray
    id: np.ndarray

    def __len__(self):
        return self.mass.shape[0]


def _opt_string(v):
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _whole(v, what):
    """v as an int, refusing what is not a whole number (1.5 would become
    1 silently); whole floats such as 1e5 are fine."""
    if isinstance(v, bool):
        raise TypeError(f"{what} must be a whole number, got {v!r}")
    try:
        return operator.index(v)
    except TypeError:
        pass
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a whole number, got {v!r}") from None
    if not f.is_integer():
        raise ValueError(f"{what} must be a whole number, got {v!r}")
    return int(f)


def make(model, n, seed=1, **opts):
    """n particles of `model` (plummer, hernquist, nfw, galaxy, uniform,
    kepler, file, snapshot). n = 0 is allowed where the model has its own
    count (kepler, file, snapshot)."""
    lib = _bind()
    n, seed = _whole(n, "n"), _whole(seed, "seed")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    keep, pairs = [], (_abi.GpParam * max(1, len(opts)))()
    for i, (k, v) in enumerate(opts.items()):
        kb, vb = str(k).encode(), _opt_string(v).encode()
        keep += [kb, vb]
        pairs[i].name, pairs[i].value = kb, vb
    o = _GpIcOpts(ctypes.cast(pairs, POINTER(_abi.GpParam)) if opts else None, len(opts))
    out = _GpIc()
    err = ctypes.create_string_buffer(1024)
    rc = lib.gp_ic_make(str(model).encode(), n, seed, ctypes.byref(o),
                        ctypes.byref(out), err, len(err))
    if rc != 0:
        raise InvalidArgumentError(err.value.decode("utf-8", "replace"), None, "ic.make")
    try:
        m = out.n
        pos = np.ctypeslib.as_array(out.pos, (m, 3)).copy()
        vel = np.ctypeslib.as_array(out.vel, (m, 3)).copy()
        mass = np.ctypeslib.as_array(out.mass, (m,)).copy()
        ids = (np.ctypeslib.as_array(out.id, (m,)).copy() if out.id
               else np.arange(m, dtype=np.uint64))
    finally:
        lib.gp_ic_free(ctypes.byref(out))
    return ICParticles(pos, vel, mass, ids)


def models():
    """Names of the models."""
    arr = _bind().gp_ic_models()
    names, i = [], 0
    while arr[i]:
        names.append(arr[i].decode())
        i += 1
    return names


def options(model):
    """[(name, type, default, allowed, doc)] of a model's options."""
    count = c_size_t(0)
    arr = _bind().gp_ic_describe(str(model).encode(), ctypes.byref(count))
    if not arr:
        raise InvalidArgumentError(f"unknown initial-conditions model '{model}'; "
                                   f"known: {', '.join(models())}", None, "ic.options")
    d = lambda b: None if b is None else b.decode()  # noqa: E731
    return [(d(e.name), _OPT_TYPES.get(e.type, str(e.type)), d(e.default_value),
             d(e.allowed), d(e.doc)) for e in arr[:count.value]]


def describe(model):
    """A readable summary of a model and its options (a str)."""
    s = _bind().gp_ic_summary(str(model).encode())
    lines = [f"{model}: {s.decode() if s else ''}"]
    for name, t, default, allowed, doc in options(model):
        lines.append(f"  {name:<12} {t:<6} default {default}"
                     f"{' ' + allowed if allowed else ''}: {doc}")
    return "\n".join(lines)
