# SPDX-License-Identifier: Apache-2.0
"""ctypes bindings of the gp_sim stopping conditions (integrators/core/stopping.c,
declared in gp_sim.h): particle radii, enabling conditions, their
parameters, and what the last gp_sim_evolve met. Used on a Gravity
object's simulation handle (gravplug.amuse drives it); kept apart from
gravity.py so the two evolve independently.
"""
import ctypes
from ctypes import POINTER, c_char_p, c_double, c_int, c_size_t, c_uint, c_uint64, c_void_p

import numpy as np

from ._lib import load_library
from .errors import error_for
from .solver import _s

COLLISION, NUMBER_OF_STEPS, TIMEOUT, OUT_OF_BOX = 1, 2, 4, 8
_u64p = POINTER(c_uint64)
_dp = POINTER(c_double)
_lib = None


def _bind():
    global _lib
    if _lib is None:
        lib = load_library()
        sig = {
            "gp_sim_set_radii": (c_int, [c_void_p, _dp]),
            "gp_sim_stop_enable": (c_int, [c_void_p, c_uint, c_int]),
            "gp_sim_stop_enabled": (c_uint, [c_void_p]),
            "gp_sim_stop_set_param": (c_int, [c_void_p, c_char_p, c_double]),
            "gp_sim_stop_get_param": (c_int, [c_void_p, c_char_p, _dp]),
            "gp_sim_stop_set": (c_uint, [c_void_p]),
            "gp_sim_stop_count": (c_size_t, [c_void_p, c_uint]),
            "gp_sim_stop_particles": (c_int, [c_void_p, c_uint, c_size_t, _u64p, _u64p]),
            "gp_sim_last_error": (c_char_p, [c_void_p]),
        }
        for name, (res, args) in sig.items():
            f = getattr(lib, name)
            f.restype, f.argtypes = res, args
        _lib = lib
    return _lib


class Stopping:
    """The stopping conditions of one gp_sim (a Gravity object's _sim)."""

    def __init__(self, handle):
        self._lib = _bind()
        self._h = handle

    def _check(self, st, what):
        if st != 0:
            raise error_for(st, _s(self._lib.gp_sim_last_error(self._h)), what)

    def set_radii(self, radius):
        r = np.ascontiguousarray(radius, dtype=np.float64)
        self._check(self._lib.gp_sim_set_radii(self._h, r.ctypes.data_as(_dp)), "set_radii")

    def enable(self, conditions, on=True):
        self._check(self._lib.gp_sim_stop_enable(self._h, conditions, 1 if on else 0),
                    "stop_enable")

    @property
    def enabled(self):
        return int(self._lib.gp_sim_stop_enabled(self._h))

    def set_param(self, name, value):
        self._check(self._lib.gp_sim_stop_set_param(self._h, name.encode(), float(value)),
                    f"stopping parameter {name}")

    def get_param(self, name):
        v = c_double()
        self._check(self._lib.gp_sim_stop_get_param(self._h, name.encode(), ctypes.byref(v)),
                    f"stopping parameter {name}")
        return v.value

    @property
    def met(self):
        """GP_STOP_* mask of the conditions the last evolve met."""
        return int(self._lib.gp_sim_stop_set(self._h))

    def particles(self, condition):
        """(first, second) id arrays of a condition's entries."""
        n = int(self._lib.gp_sim_stop_count(self._h, condition))
        a, b = np.zeros(max(n, 1), np.uint64), np.zeros(max(n, 1), np.uint64)
        self._check(self._lib.gp_sim_stop_particles(self._h, condition, n,
                                                    a.ctypes.data_as(_u64p),
                                                    b.ctypes.data_as(_u64p)), "stop_particles")
        return a[:n], b[:n]
