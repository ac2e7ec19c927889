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
import math
import numbers

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


def _floats(x, what, shape):
    """x (not an ndarray) as float64; strings and booleans are refused, not
    read as numbers ("0.3" is not 0.3, True is not 1)."""
    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} must be {shape} of numbers: {exc}") from None
    if a.dtype.kind in "USVb" or (a.dtype.kind == "O" and any(
            isinstance(v, (str, bytes, bool, np.bool_)) for v in a.ravel())):
        raise TypeError(f"{what} must be {shape} of numbers, got {a.dtype.name} values")
    try:
        return np.array(a, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} must be {shape} of numbers: {exc}") from None


def as_vectors(x, what, n=None, allow_single=False):
    """An (n, 3) float64 C-contiguous array, passed through unchanged when it
    already is one. n: required row count or None. allow_single: a lone
    point of shape (3,) is read as (1, 3)."""
    if not isinstance(x, np.ndarray):
        x = _floats(x, what, "an (n, 3) array")
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
        x = _floats(x, what, "a 1-D array")
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


_ID_RANGE = "ids are integers 0..2**64-1"


def _one_id(v, what, k):
    """One id given as a Python object, converted exactly or refused."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise TypeError(f"{what}[{k}] is {v!r}, not a number; {_ID_RANGE}")
    if not isinstance(v, numbers.Integral):
        v = float(v)
        if v != v or v in (math.inf, -math.inf) or v != math.floor(v):
            raise ValueError(f"{what}[{k}] is {v!r}, not an integer; {_ID_RANGE}")
    v = int(v)
    if not 0 <= v < 2**64:
        raise ValueError(f"{what}[{k}] is {v}, outside 0..2**64-1")
    return v


def as_ids(ids, what, n):
    """A (n,) uint64 array of particle ids (always a fresh copy). Every id
    is converted exactly or refused with a sentence naming it: integers in
    0..2**64-1, and floats only when integral and in that range (1.0 is 1;
    0.5, -1, NaN and strings are refused, never truncated or wrapped)."""
    a = np.asarray(ids)
    if not isinstance(ids, np.ndarray) and a.dtype.kind in "USV":
        a = np.asarray(ids, dtype=object)  # numpy made every entry a string: find the one that was
    if a.shape != (n,):
        raise ValueError(f"{what} must have shape ({n},), got {a.shape}")
    kind = a.dtype.kind
    if kind == "u":
        return np.array(a, dtype=np.uint64)
    if kind in "if":
        bad = a < 0
        if kind == "f":
            with np.errstate(invalid="ignore"):
                bad = ~np.isfinite(a) | bad | (a != np.floor(a)) | (a >= 2.0**64)
        k = np.flatnonzero(bad)
        if k.size:
            _one_id(a[k[0]].item(), what, int(k[0]))
        return a.astype(np.uint64)
    if kind == "O":
        return np.array([_one_id(v, what, k) for k, v in enumerate(a)], dtype=np.uint64)
    first = a[0].item() if a.size else None
    raise TypeError(f"{what} holds {a.dtype} values ({first!r} first), not numbers; {_ID_RANGE}")


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
