# SPDX-License-Identifier: Apache-2.0
"""Checking numpy arrays before they reach C.

The policy, one rule for every call:
  * A numpy array that already has the layout C wants (float64, native byte
    order, C-contiguous, aligned, the right shape) is passed to C as it is:
    no copy is ever made of it.
  * A numpy array with another dtype or layout is REJECTED with a TypeError
    (wrong dtype) or ValueError (wrong shape, non-contiguous), saying how to
    convert it. Converting silently would hide an O(n) copy in a call that
    promises none, so the copy is left to the caller, in plain sight.
  * Anything that is not a numpy array (a list, a tuple, a number) is
    converted with np.array(..., dtype=float64): there is no array to avoid
    copying, and small hand-written inputs stay easy.
  * Index arrays (set_active) are the exception: they are always converted
    to uint32 after a range check, a copy of n_active integers.
"""
import numpy as np

from ._abi import c_double_p, c_uint32_p


def _describe(a):
    return f"shape {a.shape}, dtype {a.dtype}"


def _check_layout(a, what, writable=False):
    if a.dtype != np.float64:
        raise TypeError(
            f"{what} must hold float64 values, got dtype {a.dtype}; convert it "
            f"with np.asarray({what.split()[0]}, dtype=np.float64) (a copy)")
    if not a.dtype.isnative:
        raise TypeError(f"{what} is float64 in non-native byte order; convert "
                        f"it with a.astype(np.float64)")
    if not a.flags.c_contiguous:
        raise ValueError(
            f"{what} is not C-contiguous ({_describe(a)}, strides "
            f"{a.strides}); pass np.ascontiguousarray({what.split()[0]}) (a copy)")
    if not a.flags.aligned:
        raise ValueError(f"{what} is not aligned in memory; pass a.copy()")
    if writable and not a.flags.writeable:
        raise ValueError(f"{what} is read-only; an output array must be writable")
    return a


def as_vectors(x, what, n=None, allow_single=False):
    """An (n, 3) float64 C-contiguous array, passed through unchanged when it
    already is one. n: required row count or None. allow_single: a lone
    point of shape (3,) is read as (1, 3)."""
    if not isinstance(x, np.ndarray):
        try:
            x = np.array(x, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{what} must be an (n, 3) array of numbers: {exc}") from None
    if allow_single and x.ndim == 1 and x.shape[0] == 3:
        x = x.reshape(1, 3)
    if x.ndim != 2 or x.shape[1] != 3:
        raise ValueError(f"{what} must have shape (n, 3), got shape {x.shape}")
    if n is not None and x.shape[0] != n:
        raise ValueError(f"{what} must have {n} rows (one per particle), "
                         f"got {x.shape[0]}")
    if x.shape[0] == 0:
        raise ValueError(f"{what} is empty; at least one row is required")
    return _check_layout(x, what)


def as_scalars(x, what, n):
    """A (n,) float64 C-contiguous array, unchanged when it already is one."""
    if not isinstance(x, np.ndarray):
        try:
            x = np.array(x, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{what} must be a 1-D array of numbers: {exc}") from None
        if x.ndim == 0:
            x = np.full(n, float(x))
    if x.ndim != 1:
        raise ValueError(f"{what} must be 1-D with {n} entries, got shape {x.shape}")
    if x.shape[0] != n:
        raise ValueError(f"{what} must have {n} entries (one per particle), "
                         f"got {x.shape[0]}")
    return _check_layout(x, what)


def as_index(idx, what, n):
    """A (k,) uint32 array of particle indices (always a fresh copy)."""
    a = np.asarray(idx)
    if a.ndim != 1:
        raise ValueError(f"{what} must be a 1-D sequence of particle indices, "
                         f"got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{what} is empty; pass None to make all particles active")
    if a.dtype == np.bool_:
        raise TypeError(f"{what} is a boolean mask; pass np.flatnonzero(mask)")
    if not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"{what} must hold integers, got dtype {a.dtype}")
    lo, hi = int(a.min()), int(a.max())
    if lo < 0 or hi >= n:
        raise ValueError(f"{what} holds index {lo if lo < 0 else hi}, outside "
                         f"0..{n - 1} (n = {n} particles)")
    return np.ascontiguousarray(a, dtype=np.uint32)


def output(out, shape, what):
    """A fresh output array, or the caller's `out` after checking it."""
    if out is None:
        return np.empty(shape, dtype=np.float64)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{what} must be a numpy array, got {type(out).__name__}")
    if out.shape != shape:
        raise ValueError(f"{what} must have shape {shape}, got {out.shape}")
    return _check_layout(out, what, writable=True)


def dptr(a):
    return None if a is None else a.ctypes.data_as(c_double_p)


def uptr(a):
    return None if a is None else a.ctypes.data_as(c_uint32_p)
