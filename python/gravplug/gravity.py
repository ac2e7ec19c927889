# SPDX-License-Identifier: Apache-2.0
"""Gravity: an AMUSE-style gravity code on the gravplug integrators.

    import gravplug
    from gravplug import ic
    p = ic.make("plummer", 2000, seed=1)
    with gravplug.Gravity(solver="cpu-tree", integrator="block-rk2",
                          theta=0.5, eps=0.01, dt=1/16, eta=0.2) as g:
        g.particles.add_particles(p.pos, p.vel, p.mass)
        e0 = g.kinetic_energy + g.potential_energy
        g.evolve_model(1.0)
        print(g.model_time, g.kinetic_energy + g.potential_energy - e0)
        ax, ay, az = g.get_gravity_at_point(0.0, x, y, z)

Names follow AMUSE (particles, evolve_model, model_time, kinetic_energy,
potential_energy, get_gravity_at_point, get_potential_at_point), but values
are plain floats and numpy arrays in N-body units (G = 1 unless the solver's
G says otherwise): no unit objects. gravplug.amuse.Gravplug is the real
AMUSE code class, with units and converters, built on this one.

Built on libgravplug.so's gp_sim C API (integrators/gp_sim.h): time,
positions, velocities and time-step levels live in C; Python only passes
arrays in and out.
"""
import ctypes
import math
import threading
from ctypes import POINTER, c_char_p, c_double, c_int, c_size_t, c_uint64, c_void_p

import numpy as np

from . import _abi
from ._arrays import as_ids, as_scalars, as_vectors, dptr
from ._closing import Closing
from ._lib import load_library
from .errors import (BadStateError, InvalidArgumentError, UnknownParameterError,
                     error_for)
from .solver import Stats, _read_param_info, _s
from ._plugin import open_plugin

_lib = None
_u64p = POINTER(c_uint64)


def _bind():
    global _lib
    if _lib is not None:
        return _lib
    lib = load_library()
    sig = {
        "gp_sim_new": (c_int, [POINTER(c_void_p)]),
        "gp_sim_free": (None, [c_void_p]),
        "gp_sim_last_error": (c_char_p, [c_void_p]),
        "gp_sim_open_solver": (c_int, [c_void_p, c_char_p, c_size_t,
                                       POINTER(c_char_p), POINTER(c_char_p)]),
        "gp_sim_solver_name": (c_char_p, [c_void_p]),
        "gp_sim_set_solver_param": (c_int, [c_void_p, c_char_p, c_char_p]),
        "gp_sim_get_solver_param": (c_int, [c_void_p, c_char_p, c_char_p, c_size_t]),
        "gp_sim_solver_stats": (c_int, [c_void_p, POINTER(_abi.GpStats)]),
        "gp_sim_set_particles": (c_int, [c_void_p, c_size_t, _abi.c_double_p,
                                         _abi.c_double_p, _abi.c_double_p, _u64p]),
        "gp_sim_count": (c_size_t, [c_void_p]),
        "gp_sim_get_particles": (c_int, [c_void_p, _abi.c_double_p, _abi.c_double_p,
                                         _abi.c_double_p, _u64p]),
        "gp_sim_set_state": (c_int, [c_void_p, _abi.c_double_p, _abi.c_double_p]),
        "gp_sim_set_masses": (c_int, [c_void_p, _abi.c_double_p]),
        "gp_sim_set_solver_path": (c_int, [c_void_p, c_char_p]),
        "gp_sim_solver_path": (c_char_p, [c_void_p]),
        "gp_sim_solver_path_in_use": (c_char_p, [c_void_p]),
        "gp_sim_time": (c_double, [c_void_p]),
        "gp_sim_set_time": (c_int, [c_void_p, c_double]),
        "gp_integrator_count": (c_size_t, []),
        "gp_integrator_name": (c_char_p, [c_size_t]),
        "gp_integrator_summary": (c_char_p, [c_size_t]),
        "gp_integrator_flags": (c_int, [c_char_p, POINTER(ctypes.c_uint)]),
        "gp_integrator_param": (c_int, [c_char_p, c_size_t, POINTER(c_char_p),
                                        POINTER(c_char_p), POINTER(c_char_p)]),
        "gp_sim_set_integrator": (c_int, [c_void_p, c_char_p]),
        "gp_sim_integrator": (c_char_p, [c_void_p]),
        "gp_sim_set_integrator_param": (c_int, [c_void_p, c_char_p, c_char_p]),
        "gp_sim_get_integrator_param": (c_int, [c_void_p, c_char_p, c_char_p, c_size_t]),
        "gp_sim_evolve": (c_int, [c_void_p, c_double]),
        "gp_sim_step": (c_int, [c_void_p, c_double]),
        "gp_sim_synchronised": (c_int, [c_void_p]),
        "gp_sim_energies": (c_int, [c_void_p, POINTER(c_double), POINTER(c_double)]),
        "gp_sim_momenta": (c_int, [c_void_p, _abi.c_double_p, _abi.c_double_p,
                                   _abi.c_double_p]),
        "gp_sim_field_at": (c_int, [c_void_p, c_size_t, _abi.c_double_p,
                                    _abi.c_double_p, _abi.c_double_p]),
        "gp_sim_counter": (c_int, [c_void_p, c_char_p, _u64p]),
        "gp_sim_level_counts": (c_int, [c_void_p, _u64p, c_size_t, POINTER(c_size_t)]),
        "gp_sim_particle_timesteps": (c_int, [c_void_p, _abi.c_double_p]),
        "gp_sim_checkpoint_save": (c_int, [c_void_p, c_char_p, c_void_p, c_size_t]),
        "gp_sim_checkpoint_load": (c_int, [c_void_p, c_char_p, c_void_p, c_size_t,
                                           POINTER(c_size_t)]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    _lib = lib
    return lib


def integrators():
    """{name: summary} of the registered integrators."""
    lib = _bind()
    return {_s(lib.gp_integrator_name(i)): _s(lib.gp_integrator_summary(i))
            for i in range(lib.gp_integrator_count())}


# gp_integrator_flags' bits (integrators/gp_sim.h)
SCHEME_FLAGS = {"block_steps": 1 << 0, "top_steps": 1 << 1, "mpi": 1 << 2,
                "needs_jerk": 1 << 3, "time_symmetric": 1 << 4, "backward": 1 << 5}


def integrator_flags(name):
    """The set of what integrator `name` is (SCHEME_FLAGS' names: "backward"
    where it evolves to an earlier time, "time_symmetric", ...)."""
    bits = ctypes.c_uint(0)
    if _bind().gp_integrator_flags(str(name).encode(), ctypes.byref(bits)) != 0:
        raise UnknownParameterError(
            f"no integrator named '{name}'; known: {', '.join(integrators())}",
            None, "integrator")
    return {k for k, b in SCHEME_FLAGS.items() if bits.value & b}


def integrator_params(name):
    """[(param, default, doc)] of integrator `name`."""
    lib = _bind()
    out, i = [], 0
    while True:
        pn, dv, doc = c_char_p(), c_char_p(), c_char_p()
        if lib.gp_integrator_param(name.encode(), i, ctypes.byref(pn),
                                   ctypes.byref(dv), ctypes.byref(doc)) != 0:
            break
        out.append((_s(pn.value), _s(dv.value), _s(doc.value)))
        i += 1
    if not out and name not in integrators():
        raise UnknownParameterError(
            f"no integrator named '{name}'; known: {', '.join(integrators())}",
            None, "integrator")
    return out


def _text(v):
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    return str(v)


_integrator_params = integrator_params   # (Gravity's keyword shadows the name)


class Particles:
    """The particles of a Gravity object, AMUSE-style. Reading an attribute
    returns a fresh numpy copy of the current state; assigning one writes it
    back to C (position/velocity through gp_sim_set_state, mass through
    gp_sim_set_masses)."""

    def __init__(self, g):
        self._g = g

    def __len__(self):
        return self._g.n

    def add_particles(self, pos, vel, mass):
        """Appends particles (the whole set is re-sent to C; the time is kept)."""
        g = self._g
        pos = as_vectors(pos, "pos")
        vel = as_vectors(vel, "vel", pos.shape[0])
        mass = as_scalars(mass, "mass", pos.shape[0])
        if g.n:
            p0, v0, m0 = g._get()
            pos = np.ascontiguousarray(np.concatenate([p0, pos]))
            vel = np.ascontiguousarray(np.concatenate([v0, vel]))
            mass = np.ascontiguousarray(np.concatenate([m0, mass]))
        g.set_particles(pos, vel, mass)

    position = property(lambda self: self._g._get()[0],
                        lambda self, pos: self._g._set_state(pos=pos),
                        doc="(n, 3) positions now; setting them is a drift of the same particles")
    velocity = property(lambda self: self._g._get()[1],
                        lambda self, vel: self._g._set_state(vel=vel),
                        doc="(n, 3) velocities now; setting them is a kick of the same particles")
    mass = property(lambda self: self._g._get()[2],
                    lambda self, m: self._g.set_masses(m),
                    doc="(n,) masses; setting them changes masses in place")

    x = property(lambda self: self.position[:, 0])
    y = property(lambda self: self.position[:, 1])
    z = property(lambda self: self.position[:, 2])
    vx = property(lambda self: self.velocity[:, 0])
    vy = property(lambda self: self.velocity[:, 1])
    vz = property(lambda self: self.velocity[:, 2])

    @property
    def acceleration(self):
        return self._g.accelerations

    @property
    def potential(self):
        return self._g.potentials


class Gravity(Closing):
    """Gravity(solver="cpu-tree", integrator="block-rk2", *,
    solver_params=None, integrator_params=None, **params)

    params go to the solver when its describe_params knows the name, else to
    the integrator when its table does (dt, eta, criterion, max_level, rtol,
    ...); an unknown name raises UnknownParameterError listing both. Use
    solver_params / integrator_params for a name both know.
    """

    def __init__(self, solver="cpu-tree", integrator="block-rk2", *,
                 solver_params=None, integrator_params=None, **params):
        lib = _bind()
        self._lib = lib
        self._lock = threading.RLock()
        self._sim = None
        h = c_void_p()
        st = lib.gp_sim_new(ctypes.byref(h))
        if st != 0:
            raise error_for(st, _s(lib.gp_sim_last_error(None)), "gp_sim_new")
        self._sim = h
        sp = dict(solver_params or {})
        ip = dict(integrator_params or {})
        known_solver = set(_read_param_info(open_plugin(solver).api)) \
            if solver != "auto" else None
        known_int = {p for p, _, _ in _integrator_params(integrator)}
        for k, v in params.items():
            if known_solver is None:        # "auto": the plugin is not known yet
                (ip if k in known_int and k != "eps" else sp)[k] = v
            elif k in known_solver:
                sp[k] = v
            elif k in known_int:
                ip[k] = v
            else:
                self.close()
                raise UnknownParameterError(
                    f"'{k}' is neither a parameter of solver {solver} "
                    f"({', '.join(sorted(known_solver))}) nor of integrator "
                    f"{integrator} ({', '.join(sorted(known_int))})", None, "Gravity")
        try:
            self.set_solver(solver, **sp)
            self.set_integrator(integrator, **ip)
        except Exception:
            self.close()
            raise

    # ---- plumbing ---------------------------------------------------------
    def _h(self):
        if self._sim is None:
            raise BadStateError("this Gravity object was closed; create a new one",
                                None, "Gravity")
        return self._sim

    def _check(self, st, what):
        if st != 0:
            raise error_for(st, _s(self._lib.gp_sim_last_error(self._sim)), what)

    def close(self):
        """Frees the simulation (and its solver). Idempotent."""
        with self._lock:
            if self._sim is not None:
                self._lib.gp_sim_free(self._sim)
                self._sim = None

    stop = close   # AMUSE spelling

    def __repr__(self):
        if self._sim is None:
            return "<gravplug.Gravity closed>"
        return (f"<gravplug.Gravity {self.solver_name}/{self.integrator} n={self.n} "
                f"t={self.model_time:g}>")

    # ---- solver and integrator ---------------------------------------------
    def set_solver(self, solver, **params):
        """Opens `solver` (short name, path or "auto") with params and makes it
        the force solver; usable mid-run to swap solvers seamlessly."""
        names = [k.encode() for k in params]
        values = [_text(v).encode() for v in params.values()]
        na = (c_char_p * max(1, len(names)))(*names)
        va = (c_char_p * max(1, len(values)))(*values)
        with self._lock:
            self._check(self._lib.gp_sim_open_solver(self._h(), str(solver).encode(),
                                                     len(names), na, va),
                        f"set_solver({solver})")

    @property
    def solver_name(self):
        return _s(self._lib.gp_sim_solver_name(self._h()))

    @property
    def solver_path(self):
        """How block steps talk to the solver: "auto" (ABI 1.1 when the
        plugin offers it), "1.0" or "1.1" (gp_sim_set_solver_path). Setting
        it checks that the solver can take that path."""
        return _s(self._lib.gp_sim_solver_path(self._h()))

    @solver_path.setter
    def solver_path(self, path):
        with self._lock:
            self._check(self._lib.gp_sim_set_solver_path(self._h(), str(path).encode()),
                        f"solver_path = {path!r}")

    @property
    def solver_path_in_use(self):
        """"1.1" or "1.0": the path a block step takes now."""
        return _s(self._lib.gp_sim_solver_path_in_use(self._h()))

    def _set_named(self, c_call, name, value, what):
        with self._lock:
            self._check(c_call(self._h(), name.encode(), _text(value).encode()), f"{what}({name})")

    def _get_named(self, c_call, name, what):
        buf = ctypes.create_string_buffer(256)
        with self._lock:
            self._check(c_call(self._h(), name.encode(), buf, len(buf)), f"{what}({name})")
        return _s(buf.value)

    def set_solver_param(self, name, value):
        self._set_named(self._lib.gp_sim_set_solver_param, name, value, "set_solver_param")

    def get_solver_param(self, name):
        return self._get_named(self._lib.gp_sim_get_solver_param, name, "get_solver_param")

    def set_integrator(self, name, **params):
        with self._lock:
            self._check(self._lib.gp_sim_set_integrator(self._h(), name.encode()),
                        f"set_integrator({name})")
            for k, v in params.items():
                self.set_integrator_param(k, v)

    @property
    def integrator(self):
        return _s(self._lib.gp_sim_integrator(self._h()))

    def set_integrator_param(self, name, value):
        self._set_named(self._lib.gp_sim_set_integrator_param, name, value, "set_integrator_param")

    def get_integrator_param(self, name):
        return self._get_named(self._lib.gp_sim_get_integrator_param, name, "get_integrator_param")

    # ---- particles -----------------------------------------------------------
    @property
    def n(self):
        return int(self._lib.gp_sim_count(self._h()))

    @property
    def particles(self):
        return Particles(self)

    def set_particles(self, pos, vel, mass, ids=None, time=None):
        """Replaces all particles (pos, vel (n,3), mass (n,)); time, if given,
        becomes the model time."""
        pos = as_vectors(pos, "pos")
        n = pos.shape[0]
        vel = as_vectors(vel, "vel", n)
        mass = as_scalars(mass, "mass", n)
        idp = None
        if ids is not None:
            ids = as_ids(ids, "ids", n)
            idp = ids.ctypes.data_as(_u64p)
        with self._lock:
            h = self._h()
            self._check(self._lib.gp_sim_set_particles(h, n, dptr(pos), dptr(vel),
                                                       dptr(mass), idp), "set_particles")
            if time is not None:
                self._check(self._lib.gp_sim_set_time(h, float(time)), "set_time")

    def _need_particles(self, what):
        if self.n == 0:
            raise BadStateError(f"{what} needs particles; add them first "
                                f"(g.particles.add_particles(pos, vel, mass))",
                                None, "Gravity")

    def _get(self):
        with self._lock:
            n = self.n
            pos, vel, mass = np.empty((n, 3)), np.empty((n, 3)), np.empty(n)
            if n:
                self._check(self._lib.gp_sim_get_particles(self._h(), dptr(pos), dptr(vel),
                                                           dptr(mass), None), "get_particles")
        return pos, vel, mass

    def set_state(self, pos=None, vel=None):
        """Overwrites positions and/or velocities of the same n particles at
        the current time (a framework's kick or drift)."""
        self._set_state(pos, vel)

    def _set_state(self, pos=None, vel=None):
        self._need_particles("setting positions or velocities")
        n = self.n
        pos = None if pos is None else as_vectors(pos, "position", n)
        vel = None if vel is None else as_vectors(vel, "velocity", n)
        with self._lock:
            self._check(self._lib.gp_sim_set_state(self._h(), dptr(pos), dptr(vel)),
                        "set_state")

    def set_masses(self, mass):
        """New masses (n,), >= 0, at the current time, mid-run: the run goes
        on from here (no restart); only the changed masses go to an ABI 1.1
        solver, in place (update_masses), else it gets a fresh particle set."""
        self._need_particles("setting masses")
        mass = as_scalars(mass, "mass", self.n)
        with self._lock:
            self._check(self._lib.gp_sim_set_masses(self._h(), dptr(mass)), "set_masses")

    positions = property(lambda self: self._get()[0], doc="(n,3) copy")
    velocities = property(lambda self: self._get()[1], doc="(n,3) copy")
    masses = property(lambda self: self._get()[2], doc="(n,) copy")

    # ---- time -------------------------------------------------------------------
    @property
    def model_time(self):
        return float(self._lib.gp_sim_time(self._h()))

    def evolve_model(self, t_end):
        """Advances to t_end; every particle is synchronised there."""
        t_end = float(t_end)
        if not math.isfinite(t_end):
            raise InvalidArgumentError(f"evolve_model: t_end = {t_end} is not finite",
                                       None, "evolve_model")
        self._need_particles("evolve_model")
        with self._lock:
            self._check(self._lib.gp_sim_evolve(self._h(), t_end), f"evolve_model({t_end})")

    def step(self, t_end=math.inf):
        """One integrator step (one block step under block-rk2), not past t_end."""
        self._need_particles("step")
        with self._lock:
            self._check(self._lib.gp_sim_step(self._h(), float(t_end)), "step")

    # ---- diagnostics ----------------------------------------------------------
    def _energies(self):
        self._need_particles("energies")
        k, p = c_double(), c_double()
        with self._lock:
            self._check(self._lib.gp_sim_energies(self._h(), ctypes.byref(k),
                                                  ctypes.byref(p)), "energies")
        return k.value, p.value

    kinetic_energy = property(lambda self: self._energies()[0])
    potential_energy = property(lambda self: self._energies()[1])
    total_energy = property(lambda self: sum(self._energies()))

    def momenta(self):
        """dict with momentum p, angular momentum L (about the origin), com."""
        self._need_particles("momenta")
        p, L, c = np.empty(3), np.empty(3), np.empty(3)
        with self._lock:
            self._check(self._lib.gp_sim_momenta(self._h(), dptr(p), dptr(L), dptr(c)),
                        "momenta")
        return {"p": p, "L": L, "com": c}

    def counters(self):
        """The integrator's counters as a dict (steps, force_calls, ...)."""
        out = {}
        v = c_uint64()
        with self._lock:
            h = self._h()
            for name in ("steps", "force_calls", "particle_forces", "diag_force_calls",
                         "last_active", "solver_swaps", "syncs", "state_steps",
                         "state_resyncs"):
                if self._lib.gp_sim_counter(h, name.encode(), ctypes.byref(v)) == 0:
                    out[name] = v.value
        return out

    def level_counts(self):
        """Particles per time-step level now (level 0 = dt_max)."""
        counts = np.zeros(64, dtype=np.uint64)
        used = c_size_t()
        with self._lock:
            self._check(self._lib.gp_sim_level_counts(self._h(), counts.ctypes.data_as(_u64p),
                                                      64, ctypes.byref(used)), "level_counts")
        return counts[:used.value].copy()

    def particle_timesteps(self):
        """(n,) each particle's time step now: dt_max / 2^level under block
        steps, the shared dt otherwise (gp_sim_particle_timesteps)."""
        self._need_particles("particle_timesteps")
        dt = np.zeros(self.n)
        with self._lock:
            self._check(self._lib.gp_sim_particle_timesteps(self._h(), dptr(dt)), "particle_timesteps")
        return dt

    def solver_stats(self):
        st = _abi.GpStats()
        st.struct_size = ctypes.sizeof(_abi.GpStats)
        with self._lock:
            self._check(self._lib.gp_sim_solver_stats(self._h(), ctypes.byref(st)),
                        "solver_stats")
        return Stats(**{k: getattr(st, k) for k in Stats.__dataclass_fields__})

    # ---- field at points (AMUSE's GravityFieldInterface) -------------------------------
    def _field(self, points, want_acc, want_pot):
        self._need_particles("the field at points")
        m = points.shape[0]
        acc = np.empty((m, 3)) if want_acc else None
        pot = np.empty(m) if want_pot else None
        with self._lock:
            self._check(self._lib.gp_sim_field_at(self._h(), m, dptr(points), dptr(acc),
                                                  dptr(pot)), "field_at")
        return acc, pot

    def field(self, points, potential=True):
        """(acc (m,3), pot (m,)) of all particles at points (m,3), with the
        solver's own softening."""
        pts = as_vectors(points, "points", allow_single=True)
        return self._field(pts, True, potential)

    def _points(self, eps, x, y, z):
        x, y, z = (np.atleast_1d(np.asarray(v, dtype=np.float64)) for v in (x, y, z))
        if not (x.shape == y.shape == z.shape) or x.ndim != 1:
            raise ValueError(f"x, y, z must be 1-D of one length, got shapes "
                             f"{x.shape}, {y.shape}, {z.shape}")
        e = np.broadcast_to(np.asarray(eps, dtype=np.float64), x.shape)
        if np.any(~np.isfinite(e)) or np.any(e < 0):
            raise InvalidArgumentError("eps must be finite and >= 0", None, "field")
        return e, np.ascontiguousarray(np.stack([x, y, z], axis=1))

    def _field_eps(self, eps, x, y, z, want_acc, want_pot):
        """Field with per-point softening added in quadrature to the
        solver's: eps = 0 (what AMUSE's bridge passes) uses the solver's."""
        e, pts = self._points(eps, x, y, z)
        m = pts.shape[0]
        acc, pot = np.empty((m, 3)), np.empty(m)
        with self._lock:
            base_text = self.get_solver_param("eps") if np.any(e > 0) else None
            base = float(base_text) if base_text is not None else 0.0
            try:
                for val in np.unique(e):
                    sel = np.flatnonzero(e == val)
                    if val > 0:
                        self.set_solver_param("eps", math.hypot(base, float(val)))
                    elif base_text is not None:
                        self.set_solver_param("eps", base_text)
                    a, p = self._field(np.ascontiguousarray(pts[sel]), want_acc, want_pot)
                    if want_acc:
                        acc[sel] = a
                    if want_pot:
                        pot[sel] = p
            finally:
                if base_text is not None:
                    self.set_solver_param("eps", base_text)
        return acc, pot

    def get_gravity_at_point(self, eps, x, y, z):
        """(ax, ay, az) arrays: the acceleration the particles produce at the
        points (x, y, z), AMUSE's signature (eps: per-point softening)."""
        acc, _ = self._field_eps(eps, x, y, z, True, False)
        return acc[:, 0].copy(), acc[:, 1].copy(), acc[:, 2].copy()

    def get_potential_at_point(self, eps, x, y, z):
        """phi array: the potential of the particles at the points."""
        _, pot = self._field_eps(eps, x, y, z, False, True)
        return pot

    @property
    def accelerations(self):
        """(n,3) accelerations of the particles now (one field evaluation at
        their positions; a particle's own softened term adds no force)."""
        return self.field(self.positions, potential=False)[0]

    @property
    def potentials(self):
        """(n,) potentials of the particles now, self term excluded."""
        pos, _, mass = self._get()
        _, pot = self._field(pos, False, True)
        eps = float(self.get_solver_param("eps"))
        if eps > 0:
            G = float(self.get_solver_param("G"))
            pot = pot + G * mass / eps          # remove the softened self term
        return pot

    # ---- checkpoints ---------------------------------------------------------------
    def save_checkpoint(self, path):
        with self._lock:
            self._check(self._lib.gp_sim_checkpoint_save(self._h(), str(path).encode(),
                                                         None, 0), "checkpoint_save")

    def load_checkpoint(self, path):
        with self._lock:
            self._check(self._lib.gp_sim_checkpoint_load(self._h(), str(path).encode(),
                                                         None, 0, None), "checkpoint_load")
