# SPDX-License-Identifier: Apache-2.0
"""Solver: one instance of a gravplug plugin, driven with numpy arrays.

    import numpy as np, gravplug
    with gravplug.Solver("cpu-tree", theta=0.5, eps=0.01) as s:
        s.set_particles(pos, mass)          # pos (n, 3), mass (n,) float64
        acc, pot = s.forces()               # (n, 3), (n,)
        acc, pot = s.field(points)          # field of all particles at points

ABI 1.1 plugins also hold and predict the particles (set_state, predict,
get_positions), take a subset of sources (set_source_subset) and masses in
place (update_masses); s.has("predict") says whether the plugin offers a
call, and calling one it lacks raises UnsupportedError. ABI 1.2 plugins add
the jerk (set_state_jerk, get_velocities), nearest neighbours, Huayno's
pairwise step and neighbour lists (compute_forces_ex, get_neighbours).

Array policy (see _arrays.py): float64 C-contiguous numpy arrays go to C
without a copy; numpy arrays of another dtype or layout are rejected with a
TypeError/ValueError before any C call; lists and tuples are converted.
"""
import ctypes
import dataclasses
import logging
import math
import numbers
import threading

import collections

import numpy as np

from . import _abi
from ._abi import Capability, ParamType, Status
from ._arrays import (as_index, as_scalars, as_vectors, dptr, output, uptr)
from ._closing import Closing
from ._plugin import open_plugin
from .errors import (BadStateError, InvalidArgumentError, UnknownParameterError,
                     UnsupportedError, error_for)

_log = logging.getLogger("gravplug")
_log.addHandler(logging.NullHandler())   # silent unless the user configures logging
_LOG_LEVELS = {_abi.LOG_ERROR: logging.ERROR, _abi.LOG_WARNING: logging.WARNING,
               _abi.LOG_INFO: logging.INFO, _abi.LOG_DEBUG: logging.DEBUG}


def _s(b):
    return None if b is None else b.decode("utf-8", "replace")


@dataclasses.dataclass(frozen=True)
class ParamInfo:
    """One entry of a plugin's describe_params."""
    name: str
    type: ParamType
    default: str
    allowed: str | None
    doc: str

    def parse(self, text):
        """A value as get_param writes it, as a Python value of this type."""
        try:
            if self.type == ParamType.DOUBLE:
                return float(text)
            if self.type == ParamType.INT:
                return int(text)
            if self.type == ParamType.BOOL:
                return text.strip().lower() in ("true", "1", "yes")
        except ValueError:
            pass
        return text            # enums, and values like rebuild=auto

    def format(self, value):
        """A Python value as the string set_param parses; raises
        InvalidArgumentError/TypeError before C when it cannot fit."""
        if isinstance(value, (bytes, str)):
            return value.decode() if isinstance(value, bytes) else value
        if self.type == ParamType.BOOL:
            if isinstance(value, (bool, np.bool_)) or value in (0, 1):
                return "true" if value else "false"
            raise TypeError(f"parameter {self.name} is a bool; got {value!r}")
        if isinstance(value, (bool, np.bool_)):
            raise TypeError(f"parameter {self.name} is of type "
                            f"{self.type.name.lower()}, not bool; got {value!r}")
        if self.type == ParamType.ENUM:
            # Enums may also take numbers (rebuild = auto|always|N).
            if isinstance(value, numbers.Real) and float(value).is_integer():
                return str(int(value))
            raise TypeError(f"parameter {self.name} is one of {self.allowed}; "
                            f"got {value!r}")
        if self.type == ParamType.INT:
            if isinstance(value, numbers.Integral) or (
                    isinstance(value, numbers.Real) and float(value).is_integer()):
                self._check_range(float(value))
                return str(int(value))
            raise TypeError(f"parameter {self.name} is an integer; got {value!r}")
        if isinstance(value, numbers.Real):
            v = float(value)
            if math.isnan(v):
                raise InvalidArgumentError(
                    f"parameter {self.name} = nan is not a number; "
                    f"allowed: {self.allowed or 'any finite value'}", None, "gravplug")
            self._check_range(v)
            return repr(v)
        raise TypeError(f"parameter {self.name}: cannot pass a "
                        f"{type(value).__name__} ({value!r}); give a number or a string")

    def _check_range(self, v):
        """Checks a '[lo,hi)' style range from describe_params, if any."""
        a = (self.allowed or "").strip()
        if len(a) < 5 or a[0] not in "[(" or a[-1] not in "])" or "," not in a:
            return
        lo_s, hi_s = a[1:-1].split(",", 1)
        try:
            lo, hi = float(lo_s), float(hi_s)
        except ValueError:
            return
        bad = (v < lo or (a[0] == "(" and v == lo) or v > hi or (a[-1] == ")" and v == hi))
        if bad:
            raise InvalidArgumentError(
                f"parameter {self.name} = {v!r} is outside its allowed range {a} "
                f"({self.doc})", None, "set_param")


@dataclasses.dataclass
class Stats:
    """Cumulative counters of an instance (gp_stats)."""
    force_calls: int = 0
    field_calls: int = 0
    tree_builds: int = 0
    tree_refits: int = 0
    pp_interactions: int = 0
    pc_interactions: int = 0
    seconds_build: float = 0.0
    seconds_moments: float = 0.0
    seconds_walk: float = 0.0
    seconds_transfer: float = 0.0

    def as_dict(self):
        return dataclasses.asdict(self)


class Params:
    """Live view of an instance's parameters: s.params["theta"] reads
    get_param, s.params["theta"] = 0.7 calls set_param."""

    def __init__(self, solver):
        self._solver = solver

    def __getitem__(self, name):
        return self._solver.get_param(name)

    def __setitem__(self, name, value):
        self._solver.set_param(name, value)

    def __iter__(self):
        return iter(self._solver._info)

    def __len__(self):
        return len(self._solver._info)

    def __contains__(self, name):
        return name in self._solver._info

    def keys(self):
        return list(self._solver._info)

    def items(self):
        return [(k, self[k]) for k in self]

    def as_dict(self):
        return dict(self.items())

    def __repr__(self):
        return f"Params({self.as_dict()!r})"


#: What Solver.compute_forces_ex returns: each field an array in active
#: order, or None when it was not asked for.
Outputs = collections.namedtuple(
    "Outputs", ["acc", "pot", "jerk", "nn_index", "nn_dist2", "pair_step", "pair_step_even"],
    defaults=(None,))


def describe_params(plugin):
    """ParamInfo list of a plugin (name or path); needs no instance."""
    p = open_plugin(plugin)
    return list(_read_param_info(p.api).values())


def _read_param_info(api):
    count = ctypes.c_size_t(0)
    arr = api.describe_params(ctypes.byref(count))
    info = {}
    for i in range(count.value if arr else 0):
        e = arr[i]
        try:
            t = ParamType(e.type)
        except ValueError:
            t = e.type
        name = _s(e.name)
        info[name] = ParamInfo(name, t, _s(e.default_value) or "",
                               _s(e.allowed), _s(e.doc) or "")
    return info


class Solver(Closing):
    """An instance of a gravplug plugin.

    Solver(plugin, params=None, *, device=-1, logger=None, **kw)
      plugin  short name ("cpu-direct", "cpu-tree", "cuda-tree"...) or a path
      params  dict of parameters (names that are not Python identifiers)
      kw      more parameters: theta=0.5, eps=0.01, mac="bmax", ...
      device  GPU ordinal for GPU plugins (-1: the plugin's default)
      logger  a logging.Logger for the plugin's messages (default: "gravplug")

    Parameter names are checked against the plugin's describe_params before
    init (UnknownParameterError, listing the accepted names); values are
    converted to strings and checked by the plugin (InvalidArgumentError
    with its sentence). Every failure raises a GravplugError subclass.
    """

    def __init__(self, plugin="cpu-direct", params=None, *, device=-1,
                 logger=None, **kw):
        self._handle = None
        self._lock = threading.RLock()
        self._plugin = open_plugin(plugin)
        api = self._plugin.api
        self._api = api
        self._info = _read_param_info(api)
        all_params = dict(params or {})
        all_params.update(kw)
        strings = [(k, self._format(k, v)) for k, v in all_params.items()]

        log_to = self._logger = logger or _log

        def on_log(user, level, message):    # no reference to self: no cycle
            log_to.log(_LOG_LEVELS.get(level, logging.DEBUG), "%s", _s(message))
        self._log_cb = _abi.GpLogFn(on_log)   # kept alive as long as self

        pairs = (_abi.GpParam * max(1, len(strings)))()
        keep = []
        for i, (k, v) in enumerate(strings):
            kb, vb = k.encode(), v.encode()
            keep += [kb, vb]
            pairs[i].name, pairs[i].value = kb, vb
        args = _abi.GpInitArgs()
        args.struct_size = ctypes.sizeof(_abi.GpInitArgs)
        args.params = ctypes.cast(pairs, ctypes.POINTER(_abi.GpParam)) if strings else None
        args.n_params = len(strings)
        args.log = self._log_cb
        args.log_user = None
        args.device = int(device)
        handle = _abi.gp_solver_p()
        st = api.init(ctypes.byref(handle), ctypes.byref(args))
        if st != Status.OK:
            raise error_for(st, _s(api.last_error(None)), f"{self.name}: init")
        self._handle = handle
        self._n = 0
        self._n_active = 0

    # ---- identity ---------------------------------------------------------
    @property
    def name(self):
        return _s(self._api.name)

    @property
    def version(self):
        return _s(self._api.version)

    @property
    def path(self):
        """The plugin's .so file."""
        return self._plugin.path

    @property
    def capabilities(self):
        return Capability(self._api.capabilities)

    @property
    def abi_version(self):
        return (self._api.abi_major, self._api.abi_minor)

    @property
    def n(self):
        """Number of particles set (0 before set_particles)."""
        return self._n

    @property
    def n_active(self):
        return self._n_active

    def __repr__(self):
        state = "closed" if self._handle is None else f"n={self._n}"
        return f"<gravplug.Solver {self.name} {self.version} {state}>"

    # ---- lifetime ---------------------------------------------------------
    def close(self):
        """Frees the instance; later calls raise BadStateError. Idempotent."""
        with self._lock:
            if self._handle is not None:
                self._api.finalize(self._handle)
                self._handle = None

    @property
    def closed(self):
        return self._handle is None

    def _h(self, what):
        if self._handle is None:
            raise BadStateError(f"this {self.name} Solver was closed; create a "
                                f"new gravplug.Solver to {what}", None, self.name)
        return self._handle

    def _check(self, st, what):
        if st != Status.OK:
            raise error_for(st, _s(self._api.last_error(self._handle)),
                            f"{self.name}: {what}")

    # ---- parameters -------------------------------------------------------
    @property
    def param_info(self):
        """ParamInfo for every parameter, in describe_params order."""
        return list(self._info.values())

    @property
    def params(self):
        """Live mapping name -> current value (get_param / set_param)."""
        return Params(self)

    def _format(self, name, value):
        info = self._info.get(name)
        if info is None:
            raise UnknownParameterError(
                f"{self.name} has no parameter '{name}'; it accepts: "
                f"{', '.join(self._info) or '(none)'}", None, self.name)
        return info.format(value)

    def set_param(self, name, value):
        text = self._format(name, value)
        with self._lock:
            h = self._h("set parameters")
            self._check(self._api.set_param(h, name.encode(), text.encode()),
                        f"set_param({name}={text})")

    def get_param(self, name, raw=False):
        """Current value, typed from describe_params (raw=True: the string)."""
        if name not in self._info:
            self._format(name, None)           # raises UnknownParameterError
        buf = ctypes.create_string_buffer(256)
        with self._lock:
            h = self._h("read parameters")
            self._check(self._api.get_param(h, name.encode(), buf, len(buf)),
                        f"get_param({name})")
        text = _s(buf.value)
        return text if raw else self._info[name].parse(text)

    def describe(self):
        """A readable table of the plugin and its parameters (a str)."""
        caps = ", ".join(c.name.lower() for c in Capability if c in self.capabilities)
        lines = [f"{self.name} {self.version} (ABI {self.abi_version[0]}."
                 f"{self.abi_version[1]}; {caps})", f"  from {self.path}"]
        for p in self._info.values():
            cur = "?" if self.closed else self.get_param(p.name, raw=True)
            tname = p.type.name.lower() if isinstance(p.type, ParamType) else str(p.type)
            allowed = f" {p.allowed}" if p.allowed else ""
            lines.append(f"  {p.name:<10} = {cur:<10} {tname}{allowed}, "
                         f"default {p.default}: {p.doc}")
        return "\n".join(lines)

    # ---- particles --------------------------------------------------------
    def set_particles(self, pos, mass):
        """Replaces the particle set: pos (n, 3), mass (n,) or a scalar.
        Resets the active subset to all particles."""
        pos = as_vectors(pos, "pos")
        n = pos.shape[0]
        mass = as_scalars(mass, "mass", n)
        with self._lock:
            h = self._h("set particles")
            self._check(self._api.set_particles(h, n, dptr(pos), dptr(mass)),
                        "set_particles")
            self._n = self._n_active = n
            self._nb_rows = None     # set_particles forgets neighbour lists

    def update_positions(self, pos):
        """Moves the same n particles (masses unchanged); the cheap path."""
        if self._n == 0 and self._handle is not None:
            pos = as_vectors(pos, "pos")
        else:
            pos = as_vectors(pos, "pos", self._n)
        with self._lock:
            h = self._h("update positions")
            self._check(self._api.update_positions(h, dptr(pos)), "update_positions")

    def set_active(self, idx=None):
        """i-particles of the next forces() calls (indices into the
        set_particles order); None makes all particles active."""
        with self._lock:
            h = self._h("set the active subset")
            if idx is None:
                self._check(self._api.set_active_subset(h, 0, None), "set_active_subset")
                self._n_active = self._n
                return
            if self._n == 0:
                raise BadStateError("set_active before set_particles; set the "
                                    "particles first", None, self.name)
            a = as_index(idx, "idx", self._n)
            self._check(self._api.set_active_subset(h, a.shape[0], uptr(a)),
                        "set_active_subset")
            self._n_active = a.shape[0]

    # ---- forces -----------------------------------------------------------
    def _wants_pot(self, potential):
        return potential and bool(self._api.capabilities & Capability.POTENTIAL)

    def forces(self, potential=True, out=None):
        """(acc, pot) of the active particles, in active-index order:
        acc (n_active, 3), pot (n_active,) or None when potential=False or
        the plugin computes no potentials. out=(acc, pot) reuses arrays."""
        with self._lock:
            h = self._h("compute forces")
            k = self._n_active
            if k == 0:
                # No particles yet: let the plugin say so in its own words.
                dummy = np.empty((1, 3))
                self._check(self._api.compute_forces(h, dptr(dummy), None),
                            "compute_forces")
                raise BadStateError("compute_forces before set_particles; set "
                                    "the particles first", None, self.name)
            acc = output(out[0] if out else None, (k, 3), "out[0] (acc)")
            pot = (output(out[1] if out else None, (k,), "out[1] (pot)")
                   if self._wants_pot(potential) else None)
            self._check(self._api.compute_forces(h, dptr(acc), dptr(pot)),
                        "compute_forces")
        return acc, pot

    def field(self, points, potential=True, out=None):
        """(acc, pot) of the field of all particles at points (m, 3)."""
        pts = as_vectors(points, "points", allow_single=True)
        m = pts.shape[0]
        with self._lock:
            h = self._h("compute the field")
            acc = output(out[0] if out else None, (m, 3), "out[0] (acc)")
            pot = (output(out[1] if out else None, (m,), "out[1] (pot)")
                   if self._wants_pot(potential) else None)
            self._check(self._api.compute_field(h, m, dptr(pts), dptr(acc), dptr(pot)),
                        "compute_field")
        return acc, pot

    # ---- ABI 1.1: the plugin holds and predicts the particles ---------------
    def has(self, call):
        """Whether the plugin offers an appended (ABI 1.1) call, e.g.
        "predict": its table covers the member and fills it."""
        if call not in (f for f, _ in _abi.GpApi._fields_):
            raise UnknownParameterError(f"gp_api has no member '{call}'", None, self.name)
        return _abi.api_has(self._api, call)

    _MINOR_OF = {"set_state_jerk": 2, "get_velocities": 2, "compute_forces_ex": 2,
                 "get_neighbours": 2, "set_source_groups": 3, "compute_field_ex": 3}

    def _need(self, call):
        if not _abi.api_has(self._api, call):
            major, minor = self.abi_version
            want = self._MINOR_OF.get(call, 1)
            raise UnsupportedError(
                f"{self.name} (ABI {major}.{minor}) does not offer {call}, an ABI 1.{want} "
                f"call; use a plugin built for ABI 1.{want}", None, self.name)
        return getattr(self._api, call)

    def _subset(self, idx, what):
        """(count, uint32 index array or None) of a subset; None: all n."""
        if self._n == 0:
            raise BadStateError(f"{what} before set_particles; set the particles "
                                f"first", None, self.name)
        if idx is None:
            return self._n, None
        a = as_index(idx, "idx", self._n)
        return a.shape[0], a

    def set_state(self, pos, vel, acc, t, idx=None):
        """The kinematic state of a subset (idx; None: all particles in
        order): particle idx[k] was at pos[k] at time t[k] (t may be a
        scalar), moving with vel[k] and acc[k]. Its source position becomes
        pos until the next predict."""
        fn = self._need("set_state")
        with self._lock:
            h = self._h("set the state")
            k, a = self._subset(idx, "set_state")
            pos = as_vectors(pos, "pos", k)
            vel = as_vectors(vel, "vel", k)
            acc = as_vectors(acc, "acc", k)
            t = as_scalars(t, "t", k)
            self._check(fn(h, k, uptr(a), dptr(pos), dptr(vel), dptr(acc), dptr(t)),
                        "set_state")

    def predict(self, t):
        """Moves every source position to time t from the last set_state:
        x + dt v + (dt^2 / 2) a, dt = t - t_i (particles never given a state
        stay where they are)."""
        fn = self._need("predict")
        if isinstance(t, (bool, np.bool_)) or not isinstance(t, numbers.Real):
            raise TypeError(f"predict: t must be a number, got {t!r}")
        with self._lock:
            self._check(fn(self._h("predict"), float(t)), f"predict({t!r})")

    def get_positions(self, idx=None, out=None):
        """Current source positions of a subset (idx; None: all) as an
        (k, 3) array: after predict, bit for bit what the forces see."""
        fn = self._need("get_positions")
        with self._lock:
            h = self._h("read positions")
            k, a = self._subset(idx, "get_positions")
            pos = output(out, (k, 3), "out")
            self._check(fn(h, k, uptr(a), dptr(pos)), "get_positions")
        return pos

    def set_source_subset(self, idx=None):
        """j-particles of the next forces() and field() calls (idx; None:
        all sources again). An active particle that is a source still
        skips itself."""
        fn = self._need("set_source_subset")
        with self._lock:
            h = self._h("set the source subset")
            if idx is None:
                self._check(fn(h, 0, None), "set_source_subset")
                return
            k, a = self._subset(idx, "set_source_subset")
            self._check(fn(h, k, uptr(a)), "set_source_subset")

    def update_masses(self, mass, idx=None):
        """New masses (>= 0) for a subset (idx; None: all), in place: the
        positions and held state stay, a tree plugin refits."""
        fn = self._need("update_masses")
        with self._lock:
            h = self._h("update masses")
            k, a = self._subset(idx, "update_masses")
            mass = as_scalars(mass, "mass", k)
            self._check(fn(h, k, uptr(a), dptr(mass)), "update_masses")

    # ---- ABI 1.2: jerk, neighbours, pairwise steps ----------------------------
    def set_state_jerk(self, pos, vel, acc, jerk, t, idx=None):
        """set_state with the jerk: these particles are predicted to third
        order, x + dt v + (dt^2/2) a + (dt^3/6) j and v + dt a + (dt^2/2) j.
        (set_state gives a particle zero jerk again.)"""
        fn = self._need("set_state_jerk")
        with self._lock:
            h = self._h("set the state")
            k, a = self._subset(idx, "set_state_jerk")
            pos = as_vectors(pos, "pos", k)
            vel = as_vectors(vel, "vel", k)
            acc = as_vectors(acc, "acc", k)
            jerk = as_vectors(jerk, "jerk", k)
            t = as_scalars(t, "t", k)
            self._check(fn(h, k, uptr(a), dptr(pos), dptr(vel), dptr(acc), dptr(jerk),
                           dptr(t)), "set_state_jerk")

    def get_velocities(self, idx=None, out=None):
        """Velocities of a subset (idx; None: all) as a (k, 3) array, at the
        positions' time: bit for bit what the jerk sees (0 for a particle
        never given a state)."""
        fn = self._need("get_velocities")
        with self._lock:
            h = self._h("read velocities")
            k, a = self._subset(idx, "get_velocities")
            vel = output(out, (k, 3), "out")
            self._check(fn(h, k, uptr(a), dptr(vel)), "get_velocities")
        return vel

    def compute_forces_ex(self, potential=False, jerk=False, nn=False, pair_step=False,
                          nb_radius=None, nb_step=0.0, pair_step_even=False, nb_step_even=0.0):
        """compute_forces with ABI 1.2's outputs, for the active particles in
        active order. Returns Outputs(acc, pot, jerk, nn_index, nn_dist2,
        pair_step, pair_step_even), each None unless asked for: potential,
        jerk (n_active, 3), nn (nn_index uint32 with 2**32 - 1 for none,
        nn_dist2 the squared unsoftened distance), pair_step (Huayno's
        pairwise step with eta = 1, minimised over the sources) and, ABI
        1.3, pair_step_even (the step made even in the relative velocity,
        min of tau(r, v) and tau(r, -v)). nb_radius (n_active radii, or a
        scalar for all), nb_step > 0 and nb_step_even > 0 (ABI 1.3) ask for
        neighbour lists (sources strictly inside the radius, or with a
        pairwise or even step below the bound; several: the union), read
        with get_neighbours()."""
        fn = self._need("compute_forces_ex")
        with self._lock:
            h = self._h("compute forces")
            if self._n == 0:
                raise BadStateError("compute_forces_ex before set_particles; set the "
                                    "particles first", None, self.name)
            k = self._n_active
            o, out = self._outputs("compute_forces_ex", k, potential, jerk, nn, pair_step,
                                   nb_radius, nb_step, pair_step_even, nb_step_even)
            self._check(fn(h, ctypes.byref(o)), "compute_forces_ex")
            # the plugin keeps lists for this call's active rows, or none
            self._nb_rows = k if (o.nb_radius or nb_step > 0 or nb_step_even > 0) else None
        return out

    def _outputs(self, what, k, potential, jerk, nn, pair_step, nb_radius, nb_step,
                 pair_step_even, nb_step_even):
        """A GpOutputs for k rows and the Outputs its arrays fill."""
        for name, x in (("nb_step", nb_step), ("nb_step_even", nb_step_even)):
            if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
                raise TypeError(f"{what}: {name} must be a number, got {x!r}")
        if isinstance(nb_radius, (bool, np.bool_, str, bytes)):
            raise TypeError(f"{what}: nb_radius must be a number or one number a row, got {nb_radius!r}")
        if (pair_step_even or nb_step_even) and self.abi_version[1] < 3:
            major, minor = self.abi_version
            raise UnsupportedError(
                f"{self.name} (ABI {major}.{minor}) has no even pair step, an ABI 1.3 output; "
                f"use a plugin built for ABI 1.3", None, self.name)
        acc = np.empty((k, 3))
        pot = np.empty(k) if self._wants_pot(potential) else None
        jk = np.empty((k, 3)) if jerk else None
        nni = np.empty(k, dtype=np.uint32) if nn else None
        nnd = np.empty(k) if nn else None
        ps = np.empty(k) if pair_step else None
        pe = np.empty(k) if pair_step_even else None
        rad = None if nb_radius is None else as_scalars(
            np.full(k, float(nb_radius)) if isinstance(nb_radius, numbers.Real)
            else nb_radius, "nb_radius", k)
        o = _abi.GpOutputs()
        o.struct_size = ctypes.sizeof(_abi.GpOutputs)
        o.acc, o.pot, o.jerk = dptr(acc), dptr(pot), dptr(jk)
        o.nn_index, o.nn_dist2, o.pair_step = uptr(nni), dptr(nnd), dptr(ps)
        o.nb_radius = dptr(rad)
        o.nb_step = float(nb_step)
        o.pair_step_even, o.nb_step_even = dptr(pe), float(nb_step_even)
        o._keep = rad   # the radii live as long as the struct
        return o, Outputs(acc, pot, jk, nni, nnd, ps, pe)

    # ---- ABI 1.3: source groups, outputs at points ------------------------------
    def set_source_groups(self, group=None):
        """Source groups: group[i] (uint32) for each particle, or None to
        clear them. While set, a particle feels no source of its own group
        (2**32 - 1: in no group, feels every source), in every output.
        set_particles clears them."""
        fn = self._need("set_source_groups")
        with self._lock:
            h = self._h("set the source groups")
            if group is None:
                self._check(fn(h, 0, None), "set_source_groups")
                return
            if self._n == 0:
                raise BadStateError("set_source_groups before set_particles; set the "
                                    "particles first", None, self.name)
            g = np.ascontiguousarray(group)
            if g.shape != (self._n,) or not np.issubdtype(g.dtype, np.integer) or \
                    (g.size and (g.min() < 0 or g.max() > 0xFFFFFFFF)):
                raise ValueError(f"set_source_groups: group must be {self._n} integers in "
                                 f"[0, 2**32 - 1], one per particle")
            g = g.astype(np.uint32)
            self._check(fn(h, g.shape[0], uptr(g)), "set_source_groups")

    def compute_field_ex(self, points, vel=None, exclude=None, potential=False, jerk=False,
                         nn=False, pair_step=False, nb_radius=None, nb_step=0.0,
                         pair_step_even=False, nb_step_even=0.0):
        """compute_forces_ex's outputs at explicit points (m, 3), moving with
        vel (m, 3; needed for jerk, pair steps and lists by step), each
        excluding the particle exclude[k] (its own: it then feels the groups
        as that particle does; 2**32 - 1 or exclude None: none). The held
        state is not changed. Returns Outputs, lists for get_neighbours()."""
        fn = self._need("compute_field_ex")
        with self._lock:
            h = self._h("compute the field")
            if self._n == 0:
                raise BadStateError("compute_field_ex before set_particles; set the "
                                    "particles first", None, self.name)
            pts = as_vectors(points, "points", None)
            m = pts.shape[0]
            v = None if vel is None else as_vectors(vel, "vel", m)
            ex = None
            if exclude is not None:
                ex = np.ascontiguousarray(exclude)
                if ex.shape != (m,) or not np.issubdtype(ex.dtype, np.integer) or \
                        (ex.size and (ex.min() < 0 or ex.max() > 0xFFFFFFFF)):
                    raise ValueError(f"compute_field_ex: exclude must be {m} particle indices "
                                     f"(2**32 - 1: none)")
                ex = ex.astype(np.uint32)
            o, out = self._outputs("compute_field_ex", m, potential, jerk, nn, pair_step,
                                   nb_radius, nb_step, pair_step_even, nb_step_even)
            self._check(fn(h, m, dptr(pts), dptr(v), uptr(ex), ctypes.byref(o)),
                        "compute_field_ex")
            self._nb_rows = m if (o.nb_radius or nb_step > 0 or nb_step_even > 0) else None
        return out

    def get_neighbours(self):
        """The neighbour lists of the last compute_forces_ex that asked for
        them, in CSR form: (offset, nbrs), offset uint64 (n_active + 1,),
        nbrs uint32; the neighbours of active particle k are
        nbrs[offset[k]:offset[k + 1]], ascending particle indices."""
        fn = self._need("get_neighbours")
        u64p = ctypes.POINTER(ctypes.c_uint64)
        with self._lock:
            h = self._h("read neighbour lists")
            rows = getattr(self, "_nb_rows", None)
            # Without lists the plugin refuses (GP_ERR_BAD_STATE) in its words;
            # the room for n + 1 offsets is never written then.
            offset = np.empty((self._n if rows is None else rows) + 1, dtype=np.uint64)
            need = ctypes.c_size_t(0)
            st = fn(h, 0, offset.ctypes.data_as(u64p), None, ctypes.byref(need))
            if st != Status.OK and not (st == Status.INVALID_ARGUMENT and need.value > 0):
                self._check(st, "get_neighbours")
            nbrs = np.empty(need.value, dtype=np.uint32)
            self._check(fn(h, need.value, offset.ctypes.data_as(u64p), uptr(nbrs),
                           ctypes.byref(need)), "get_neighbours")
        return offset, nbrs

    def stats(self):
        """Cumulative counters (a Stats dataclass; .as_dict() for a dict)."""
        st = _abi.GpStats()
        st.struct_size = ctypes.sizeof(_abi.GpStats)
        with self._lock:
            h = self._h("read statistics")
            self._check(self._api.get_stats(h, ctypes.byref(st)), "get_stats")
        return Stats(**{f.name: getattr(st, f.name) for f in dataclasses.fields(Stats)})
