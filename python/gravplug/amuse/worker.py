# SPDX-License-Identifier: Apache-2.0
"""The worker side of gravplug's AMUSE code: GravplugImplementation runs in
the AMUSE Python worker process that the legacy interface (interface.py)
starts, and drives a gravplug.Gravity there. AMUSE's worker script imports
this module by name; importing it also gives the worker's socket
TCP_NODELAY (see _worker_socket_without_delay)."""
import functools
import json
import math
import os
import sys

import numpy as np

from amuse.units import nbody_system
from amuse.units.quantities import is_quantity

OK, ERROR = 0, -1


# The AMUSE releases whose worker internals the shim below was read against
# and tested with (tests/python/python-amuse.t, in CI after .ci/install-amuse).
# Any other AMUSE runs the code unpatched: correct, about 40 ms slower a call.
# 2024.6.0 is also the newest amuse-framework pip offers (checked November
# 2026). AMUSE's later releases (v2025.9.0, tagged on GitHub) are not on
# that index; their amuse/rfi/python_code.py still connects without
# TCP_NODELAY, but they were not tested here, so they are not listed.
NODELAY_TESTED = ("2024.6.0",)


def _amuse_version():
    try:
        from importlib.metadata import version
        return version("amuse-framework")
    except Exception:
        return ""


def _worker_socket_without_delay():
    """AMUSE 2024.6's Python worker connects back to the caller without
    TCP_NODELAY, and writes each reply in several pieces: Nagle's algorithm
    then holds the last piece until the caller's delayed ACK, about 40 ms
    per call whatever its size (AMUSE's C workers set TCP_NODELAY). Give
    the worker's socket TCP_NODELAY too. Runs on import, in the worker
    (which imports this module before it connects) and harmlessly in the
    caller; only amuse.rfi.python_code's use of socket is changed, and only
    in the AMUSE releases listed in NODELAY_TESTED."""
    import socket
    import types
    if _amuse_version() not in NODELAY_TESTED:
        return
    from amuse.rfi import python_code
    if not hasattr(python_code, "socket") or getattr(python_code.socket, "gravplug_nodelay", False):
        return

    def create_connection(*args, **kwargs):
        s = socket.create_connection(*args, **kwargs)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s
    shim = types.SimpleNamespace(**{k: getattr(socket, k) for k in dir(socket)
                                    if not k.startswith("__")})
    shim.create_connection = create_connection
    shim.gravplug_nodelay = True
    python_code.socket = shim


_worker_socket_without_delay()

# AMUSE's stopping-condition type numbers -> gp_sim's GP_STOP_* bits.
_COLLISION, _TIMEOUT, _STEPS, _OUT_OF_BOX = 0, 3, 4, 5
_STOP_BITS = {_COLLISION: 1, _STEPS: 2, _TIMEOUT: 4, _OUT_OF_BOX: 8}

# Plugin parameters whose default differs under AMUSE: the codes Gravplug
# stands in for (BHTree, ph4) answer in double, so the tree plugins do too
# unless precision is set.
AMUSE_PLUGIN_DEFAULTS = {"precision": "double"}


# How the codes Gravplug can stand in for number their particles, for
# GravplugInterface(stands_in_for=...): (first index, whether an id passed
# to new_particle is kept as the particle's index, as ph4 keeps it). Only
# codes whose numbering Gravplug reproduces; by default from 1, user ids
# ignored. Indices are never reused after a delete.
NUMBERING = {"ph4": (1, True), "hermite": (0, False), "huayno": (0, False)}


def timestep_parameter_to_eta(integrator, value):
    """The integrator's eta for AMUSE's timestep_parameter, in the meaning
    of the code replaced: ph4's for hermite (eta = timestep_parameter^2,
    ph4's 0.14 giving hermite's 0.02), Huayno's (the same eta) for hold,
    hold-kdk and the other schemes that have an eta."""
    return value * value if integrator == "hermite" else value


def eta_to_timestep_parameter(integrator, eta):
    return math.sqrt(eta) if integrator == "hermite" else eta

def _plain(v, unit):
    """A float or array in N-body units, whether v carries units or not."""
    return np.asarray(v.value_in(unit) if is_quantity(v) else v, dtype=np.float64)


class GravplugImplementation:
    """Runs in the AMUSE worker process. Time and the integrated state live
    in a gravplug.Gravity (the C integrators and a plugin); the numpy arrays
    here mirror it for the getters and collect edits until the next push.
    Methods raise on error: the AMUSE worker turns the exception into an
    error reply whose text is the gravplug sentence (and keeps running)."""

    def __init__(self):
        # AMUSE's citation list at exit is the caller's to print, not the
        # worker's (its stdout is the caller's terminal or TAP stream)
        from amuse.support.literature import TrackLiteratureReferences
        TrackLiteratureReferences.suppress_output()
        # The caller and the other workers run between this worker's calls,
        # and OpenMP's threads spin after each call by default, taking
        # their cores: passive waiting unless the environment chose (set
        # before the library loads libgomp, which reads it then). A bridge
        # with ph4 on two cores ran 1.6x faster for it, evolve no slower
        # (docs/PYTHON.md, "Threads").
        os.environ.setdefault("OMP_WAIT_POLICY", "passive")
        self.g = None
        self.last_error = ""
        self.solver, self.integrator = "cpu-tree", "leapfrog"
        self.eps2, self.timestep, self.begin_time = 0.0, 1.0 / 64, 0.0
        self.opening_angle = None     # None: the plugin's own theta
        self.plugin_params = {}
        self.stop_enabled = set()
        self.time_reversed = None     # None: as the integrator's flags allow
        self.stop_params = {}         # the gas conditions gravplug has no use for
        self.first_index, self.keeps_ids = 1, False    # NUMBERING's, by default
        self.stands_in_for = None
        self._empty()

    def _empty(self):
        self.ids = np.zeros(0, np.int64)       # AMUSE indices, ascending; gp_sim ids
        self.reported = {}            # attribute -> value last read, by row (NaN: none)
        self.mass = np.zeros(0)
        self.pos = np.zeros((0, 3))
        self.vel = np.zeros((0, 3))
        self.radius = np.zeros(0)
        self.next_id = self.first_index
        self.time = self.begin_time
        self.in_c = False        # the C simulation holds these particles
        self.structure = True    # particles added/removed: set_particles at the push
        self.moved_pos = self.moved_vel = self.new_mass = self.new_radius = False
        self.stale = False       # C is ahead of the arrays (after an evolve)
        self.cache = {}          # accelerations/potentials of the current state
        self.stops = []          # [(AMUSE type, [particle ids])] met by the last evolve

    def _fail(self, exc):
        self.last_error = str(exc)
        print(f"gravplug worker: {self.last_error}", file=sys.stderr, flush=True)
        raise exc

    def _guard(self, f, *args):
        try:
            return f(*args)
        except Exception as exc:  # noqa: BLE001 — re-raised with the sentence kept
            self._fail(exc)

    # ---- the C simulation -------------------------------------------------
    def _gravity(self):
        if self.g is None:
            import gravplug
            from gravplug._stopping import Stopping
            self.g = self._guard(lambda: gravplug.Gravity(
                solver=self.solver, integrator=self.integrator,
                solver_params=self._solver_params(self.solver),
                integrator_params={"dt": self.timestep}))
            self.stopping = Stopping(self.g._sim)
        return self.g

    def _solver_params(self, solver):
        """eps, and the plugin parameters set so far that `solver` has: a
        solver swapped in mid-run gets what it shares with the one before,
        the rest keep its own defaults."""
        known = self._param_info(solver)
        p = {"eps": math.sqrt(self.eps2)}
        p.update({k: v for k, v in AMUSE_PLUGIN_DEFAULTS.items() if k in known})
        p.update({k: v for k, v in self.plugin_params.items() if k in known})
        if self.opening_angle is not None and "theta" in known:
            p["theta"] = self.opening_angle
        return p

    @staticmethod
    @functools.lru_cache(maxsize=None)
    def _param_info(solver):
        """A plugin's parameter table (read once per plugin name: the
        constructor and every parameter call ask)."""
        import gravplug
        return {i.name: i for i in gravplug.describe_params(solver)}

    def _pull(self):
        """Copies positions/velocities back from C after an evolve."""
        if self.stale and self.in_c:
            pos, vel, _ = self.g._get()
            self.pos, self.vel = pos, vel
        self.stale = False

    def _push(self):
        """Sends the edits made since the last push to C."""
        g = self._gravity()
        n = len(self.ids)
        if self.structure:
            if n:
                g.set_particles(self.pos, self.vel, self.mass,
                                ids=self.ids.astype(np.uint64), time=self.time)
                self.stopping.set_radii(self.radius)
            self.in_c = n > 0
        elif self.in_c:
            if self.moved_pos or self.moved_vel:
                g.set_state(self.pos if self.moved_pos else None,
                            self.vel if self.moved_vel else None)
            if self.new_mass:
                g.set_masses(self.mass)
            if self.new_radius:
                self.stopping.set_radii(self.radius)
        else:
            self.structure = False
        if self.structure or self.moved_pos or self.moved_vel or self.new_mass:
            self.cache = {}
        self.structure = self.moved_pos = self.moved_vel = self.new_mass = self.new_radius = False

    def _rows(self, index):
        idx = np.atleast_1d(np.asarray(index, dtype=np.int64))
        if len(self.ids) == 0:
            bad, rows = idx, np.zeros(0, np.int64)
        else:
            rows = np.minimum(np.searchsorted(self.ids, idx), len(self.ids) - 1)
            bad = idx[self.ids[rows] != idx]
        if len(bad):
            self._fail(IndexError(f"no particle with index {int(bad[0])} in this Gravplug code "
                                  f"({len(self.ids)} particles); it was deleted or never added"))
        return rows

    # ---- lifetime ---------------------------------------------------------
    def initialize_code(self):
        self._empty()
        self._gravity()
        return OK

    def cleanup_code(self):
        if self.g is not None:
            self.g.close()
            self.g = None
        self._empty()
        return OK

    def commit_parameters(self):
        self.time = self.begin_time
        self._gravity()
        return OK

    def recommit_parameters(self):
        return OK

    def commit_particles(self):
        self._guard(self._push)
        return OK

    recommit_particles = commit_particles

    def synchronize_model(self):
        return OK

    def evolve_model(self, time):
        t = float(_plain(time, nbody_system.time))
        self.stops = []
        if t == self.time:
            return OK
        if t < self.time and not self._reversed_allowed():
            self._fail(ValueError(
                f"cannot evolve from t = {self.time!r} back to {t!r}: "
                + (f"integrator {self.integrator} does not integrate backward (those that do: "
                   f"{', '.join(self._backward_integrators())})"
                   if not self._can_reverse() else "is_time_reversed_allowed is off")))
        self._guard(self._push)
        if not self.in_c:
            self.time = t
            return OK
        self._guard(self.g.evolve_model, t)
        self.time = self.g.model_time
        self.stale, self.cache = True, {}
        met = self.stopping.met
        if met & 1:
            a, b = self.stopping.particles(1)
            self.stops += [(_COLLISION, [int(i), int(j)]) for i, j in zip(a, b)]
        if met & 8:
            a, _ = self.stopping.particles(8)
            self.stops += [(_OUT_OF_BOX, [int(i)]) for i in a]
        if met & 2:
            self.stops.append((_STEPS, []))
        if met & 4:
            self.stops.append((_TIMEOUT, []))
        return OK

    # ---- particles (whole arrays per call) ----------------------------------
    def _new_ids(self, k, id):
        """The indices of k new particles: the next free ones, or where the
        code keeps user ids (NUMBERING), each id >= 0 passed in `id`."""
        user = np.broadcast_to(np.asarray(id, np.int64), (k,)) if self.keeps_ids \
            else np.full(k, -1, np.int64)
        given = user[user >= 0]
        taken = np.intersect1d(given, self.ids) if len(given) else given
        if len(taken) or len(np.unique(given)) < len(given):
            srt = np.sort(given)
            dup = int(taken[0]) if len(taken) else int(srt[np.argmax(np.diff(srt) == 0)])
            self._fail(ValueError(f"particle id {dup} is already in use in this Gravplug code; "
                                  "pass a free id, or -1 for the next free one"))
        start = max(self.next_id, int(given.max()) + 1 if len(given) else 0)
        new = user.copy()
        new[user < 0] = np.arange(start, start + int((user < 0).sum()), dtype=np.int64)
        if k:
            self.next_id = max(self.next_id, int(new.max()) + 1)
        return new

    def new_particle(self, index_of_the_particle, mass, x, y, z, vx, vy, vz, radius=0.0, id=-1):
        self._pull()
        m = np.atleast_1d(np.asarray(mass, np.float64))
        k = len(m)
        cols = [np.broadcast_to(np.asarray(v, np.float64), (k,)) for v in (x, y, z, vx, vy, vz, radius)]
        new = self._new_ids(k, id)
        self.ids = np.concatenate([self.ids, new])
        self.mass = np.concatenate([self.mass, m])
        self.pos = np.concatenate([self.pos, np.stack(cols[0:3], axis=1)])
        self.vel = np.concatenate([self.vel, np.stack(cols[3:6], axis=1)])
        self.radius = np.concatenate([self.radius, cols[6]])
        self.reported = {name: np.concatenate([v, np.full(k, np.nan)])
                         for name, v in self.reported.items()}
        if np.any(np.diff(self.ids) < 0):   # user ids out of order: ids stay ascending
            o = np.argsort(self.ids, kind="stable")
            self.ids, self.mass, self.radius = self.ids[o], self.mass[o], self.radius[o]
            self.pos, self.vel = self.pos[o], self.vel[o]
            self.reported = {name: v[o] for name, v in self.reported.items()}
        self.structure = True
        index_of_the_particle.value = new
        return OK

    def delete_particle(self, index_of_the_particle):
        rows = self._rows(index_of_the_particle)
        self._pull()
        keep = np.ones(len(self.ids), bool)
        keep[rows] = False
        self.ids, self.mass, self.radius = self.ids[keep], self.mass[keep], self.radius[keep]
        self.pos, self.vel = self.pos[keep], self.vel[keep]
        self.reported = {name: v[keep] for name, v in self.reported.items()}
        self.structure = True
        return OK

    def _columns(self):
        return {"mass": self.mass, "radius": self.radius,
                "x": self.pos[:, 0], "y": self.pos[:, 1], "z": self.pos[:, 2],
                "vx": self.vel[:, 0], "vy": self.vel[:, 1], "vz": self.vel[:, 2]}

    def _get(self, index, **outs):
        rows = self._rows(index)
        self._pull()
        cols = self._columns()
        for name, holder in outs.items():
            holder.value = cols[name][rows]
        return OK

    def _set(self, index, **values):
        rows = self._rows(index)
        self._pull()
        cols = self._columns()
        for name, v in values.items():
            v = np.asarray(v, np.float64)
            if not np.all(np.isfinite(v)):
                self._fail(ValueError(f"{name} must be finite (got {v[~np.isfinite(v)][0]})"))
            if name in ("mass", "radius") and np.any(v < 0):
                self._fail(ValueError(f"{name} must be >= 0 (got {v[v < 0][0]})"))
            cols[name][rows] = v
            if name in ("x", "y", "z"):
                self.moved_pos = True
            elif name in ("vx", "vy", "vz"):
                self.moved_vel = True
            elif name == "mass":
                self.new_mass = True
            else:
                self.new_radius = True
        return OK

    def get_state(self, index_of_the_particle, mass, x, y, z, vx, vy, vz, radius):
        return self._get(index_of_the_particle, mass=mass, x=x, y=y, z=z,
                         vx=vx, vy=vy, vz=vz, radius=radius)

    def set_state(self, index_of_the_particle, mass, x, y, z, vx, vy, vz, radius=0.0):
        return self._set(index_of_the_particle, mass=mass, x=x, y=y, z=z,
                         vx=vx, vy=vy, vz=vz, radius=radius)

    def get_mass(self, index_of_the_particle, mass):
        return self._get(index_of_the_particle, mass=mass)

    def set_mass(self, index_of_the_particle, mass):
        return self._set(index_of_the_particle, mass=mass)

    def get_radius(self, index_of_the_particle, radius):
        return self._get(index_of_the_particle, radius=radius)

    def set_radius(self, index_of_the_particle, radius):
        return self._set(index_of_the_particle, radius=radius)

    def get_position(self, index_of_the_particle, x, y, z):
        return self._get(index_of_the_particle, x=x, y=y, z=z)

    def set_position(self, index_of_the_particle, x, y, z):
        return self._set(index_of_the_particle, x=x, y=y, z=z)

    def get_velocity(self, index_of_the_particle, vx, vy, vz):
        return self._get(index_of_the_particle, vx=vx, vy=vy, vz=vz)

    def set_velocity(self, index_of_the_particle, vx, vy, vz):
        return self._set(index_of_the_particle, vx=vx, vy=vy, vz=vz)

    def _per_particle(self, name):
        """Accelerations and potentials of all particles: one field call at
        their positions per state (the self term of the softened potential
        removed, as gravplug.Gravity.potentials does)."""
        self._guard(self._push)
        if name not in self.cache:
            if not self.in_c:
                return np.zeros((0, 3)) if name == "accelerations" else np.zeros(0)
            self._pull()
            acc, pot = self._guard(self.g._field, np.ascontiguousarray(self.pos), True, True)
            eps = math.sqrt(self.eps2)
            if eps > 0:
                pot = pot + float(self.g.get_solver_param("G")) * self.mass / eps
            self.cache = {"accelerations": acc, "potentials": pot}
        return self.cache[name]

    def _report(self, rows, **values):
        for name, v in values.items():
            if name not in self.reported:
                self.reported[name] = np.full(len(self.ids), np.nan)
            self.reported[name][rows] = v

    def get_acceleration(self, index_of_the_particle, ax, ay, az):
        rows = self._rows(index_of_the_particle)
        a = self._per_particle("accelerations")[rows]
        ax.value, ay.value, az.value = a[:, 0], a[:, 1], a[:, 2]
        self._report(rows, ax=a[:, 0], ay=a[:, 1], az=a[:, 2])
        return OK

    def get_potential(self, index_of_the_particle, potential):
        rows = self._rows(index_of_the_particle)
        potential.value = self._per_particle("potentials")[rows]
        self._report(rows, potential_in_code=potential.value)
        return OK

    def get_particle_timestep(self, index_of_the_particle, timestep):
        """Each particle's step now (ph4's and Huayno's particles.timestep)."""
        rows = self._rows(index_of_the_particle)
        self._guard(self._push)
        timestep.value = self._guard(self.g.particle_timesteps)[rows]
        self._report(rows, timestep=timestep.value)
        return OK

    def get_state_and_derived(self, index_of_the_particle, mass, x, y, z, vx, vy, vz, radius,
                              ax, ay, az, potential, timestep):
        """All of the particles' attributes in one message (channel.copy())."""
        i = index_of_the_particle
        return (self.get_state(i, mass, x, y, z, vx, vy, vz, radius)
                or self.get_acceleration(i, ax, ay, az) or self.get_potential(i, potential)
                or self.get_particle_timestep(i, timestep))

    def set_particle_timestep(self, index_of_the_particle, timestep):
        return self._derived(index_of_the_particle, timestep=timestep)

    def _derived(self, index, **values):
        """A write of a derived attribute (ax..., potential_in_code,
        timestep): the code computes them, so only the values it last
        reported are taken (a copy of its particles copied back), as no
        change; any other value is refused, saying why."""
        rows = self._rows(index)
        for name, v in values.items():
            seen = self.reported.get(name, np.full(len(self.ids), np.nan))[rows]
            x = np.broadcast_to(np.asarray(v, np.float64), seen.shape)
            # a copy in other units comes back rounded: equal to 1e-12; never
            # read (NaN) is a change
            ok = np.abs(x - seen) <= 1e-12 * np.maximum(np.abs(seen), 1e-300)
            if not ok.all():
                k = int(np.argmin(ok))
                self._fail(ValueError(
                    f"{name} of particle {int(self.ids[rows[k]])} is computed by the code and "
                    f"cannot be set (got {float(x[k])!r}); set positions, velocities or masses "
                    "instead"))
        return OK

    def set_acceleration(self, index_of_the_particle, ax, ay, az):
        return self._derived(index_of_the_particle, ax=ax, ay=ay, az=az)

    def set_potential(self, index_of_the_particle, potential):
        return self._derived(index_of_the_particle, potential_in_code=potential)

    # ---- global quantities --------------------------------------------------
    def _energies(self):
        self._guard(self._push)
        return self._guard(self.g._energies) if self.in_c else (0.0, 0.0)

    def get_kinetic_energy(self, kinetic_energy):
        kinetic_energy.value = self._energies()[0]
        return OK

    def get_potential_energy(self, potential_energy):
        potential_energy.value = self._energies()[1]
        return OK

    def get_time(self, time):
        time.value = self.time
        return OK

    def get_begin_time(self, time):
        time.value = self.begin_time
        return OK

    def set_begin_time(self, time):
        self.begin_time = float(time)
        return OK

    def get_time_step(self, time_step):
        time_step.value = self.timestep
        return OK

    def set_time_step(self, time_step):
        dt = float(time_step)
        self._guard(self._gravity().set_integrator_param, "dt", dt)
        self.timestep = dt
        return OK

    def get_eps2(self, epsilon_squared):
        epsilon_squared.value = self.eps2
        return OK

    def set_eps2(self, epsilon_squared):
        e2 = float(epsilon_squared)
        if not e2 >= 0 or not math.isfinite(e2):
            self._fail(ValueError(f"epsilon_squared must be finite and >= 0 (got {e2})"))
        self._guard(self._gravity().set_solver_param, "eps", math.sqrt(e2))
        self.eps2 = e2
        self.cache = {}
        return OK

    # BHTree's legacy names of the same (GravitationalDynamicsInterface's get_eps2)
    def get_epsilon_squared(self, epsilon_squared):
        return self.get_eps2(epsilon_squared)

    def set_epsilon_squared(self, epsilon_squared):
        return self.set_eps2(epsilon_squared)

    def _integrator_info(self, name=None):
        import gravplug
        return {k: (d, doc) for k, d, doc in gravplug.integrator_params(name or self.integrator)}

    def get_timestep_parameter(self, value):
        """nan where the integrator has no eta (leapfrog, rk*: fixed steps)."""
        if "eta" not in self._integrator_info():
            value.value = float("nan")
            return OK
        eta = float(self._guard(self._gravity().get_integrator_param, "eta"))
        value.value = eta_to_timestep_parameter(self.integrator, eta)
        return OK

    def set_timestep_parameter(self, value):
        v = float(value)
        if "eta" not in self._integrator_info():
            self._fail(ValueError(
                f"integrator {self.integrator} has no accuracy parameter (eta) for timestep_parameter: "
                f"its step is timestep; choose hermite, hold or a block-step integrator"))
        if not (v > 0 and math.isfinite(v)):
            self._fail(ValueError(f"timestep_parameter must be finite and > 0 (got {v})"))
        self._guard(self._gravity().set_integrator_param, "eta",
                    repr(timestep_parameter_to_eta(self.integrator, v)))
        return OK

    def _as_ph4(self, what):
        if self.stands_in_for != "ph4":
            self._fail(ValueError(
                f"{what} is ph4's name for timestep_parameter, kept under stands_in_for='ph4' only "
                "(Gravplug's own eta is the integrator parameter eta): use set_timestep_parameter, "
                "or set_integrator_parameter('eta', ...)"))

    def get_eta(self, value):
        self._as_ph4("get_eta")
        return self.get_timestep_parameter(value)

    def set_eta(self, value):
        self._as_ph4("set_eta")
        return self.set_timestep_parameter(value)

    def describe_integrator(self, integrator, table):
        """JSON [[name, default, doc], ...] of an integrator's parameters."""
        info = self._guard(self._integrator_info, str(integrator))
        table.value = json.dumps([[k, d, doc] for k, (d, doc) in info.items()])
        return OK

    def set_integrator_parameter(self, name, value):
        name, value = str(name), str(value)
        if name == "dt":
            return self.set_time_step(float(value))
        self._guard(self._gravity().set_integrator_param, name, value)
        return OK

    def get_integrator_parameter(self, name, value):
        name = str(name)
        if name not in self._integrator_info():
            value.value = ""     # a parameter of the constructor's integrator, not this one's
            return OK
        value.value = self._guard(self._gravity().get_integrator_param, name)
        return OK

    @staticmethod
    def _backward_integrators():
        import gravplug
        return [n for n in gravplug.integrators() if "backward" in gravplug.integrator_flags(n)]

    def _can_reverse(self):
        import gravplug
        return "backward" in gravplug.integrator_flags(self.integrator)

    def _reversed_allowed(self):
        return self._can_reverse() if self.time_reversed is None else \
            (self.time_reversed and self._can_reverse())

    def get_is_time_reversed_allowed(self, value):
        value.value = bool(self._reversed_allowed())
        return OK

    def set_is_time_reversed_allowed(self, value):
        on = bool(value)
        if on and not self._can_reverse():
            self._fail(ValueError(
                f"integrator {self.integrator} does not integrate backward (those that do: "
                f"{', '.join(self._backward_integrators())})"))
        self.time_reversed = on
        return OK

    def get_total_mass(self, mass):
        mass.value = float(self.mass.sum())
        return OK

    def _com(self, name):
        """The mass-weighted mean of self.pos or self.vel (by name: the
        arrays are read after the pull, not before it)."""
        self._pull()
        a = getattr(self, name)
        m = self.mass.sum()
        return (self.mass @ a) / m if m > 0 else np.zeros(3)

    def get_center_of_mass_position(self, x, y, z):
        x.value, y.value, z.value = self._com("pos")
        return OK

    def get_center_of_mass_velocity(self, vx, vy, vz):
        vx.value, vy.value, vz.value = self._com("vel")
        return OK

    def get_total_radius(self, radius):
        com = self._com("pos")
        radius.value = float(np.sqrt(((self.pos - com) ** 2).sum(1)).max()) if len(self.ids) else 0.0
        return OK

    def get_number_of_particles(self, number_of_particles):
        number_of_particles.value = len(self.ids)
        return OK

    def get_index_of_first_particle(self, index_of_the_particle):
        if not len(self.ids):
            index_of_the_particle.value = 0
            return 1
        index_of_the_particle.value = int(self.ids[0])
        return OK

    def get_index_of_next_particle(self, index_of_the_particle, index_of_the_next_particle):
        i = int(index_of_the_particle)
        k = int(np.searchsorted(self.ids, i, side="right"))
        if k == 0 or self.ids[k - 1] != i:
            index_of_the_next_particle.value = 0
            return ERROR     # GravitationalDynamicsInterface's "particle could not be found"
        if k >= len(self.ids):
            index_of_the_next_particle.value = 0
            return 1     # the last particle
        index_of_the_next_particle.value = int(self.ids[k])
        return OK

    # ---- field at points (GravityFieldInterface) --------------------------------
    def _field(self, x, y, z, want_acc, want_pot):
        """The field of the particles, with the code's own softening. The eps
        argument of AMUSE's field calls is not used, as in BHTree, Huayno
        and ph4 (a bridge passes the kicked code's softening there)."""
        L = nbody_system.length
        px, py, pz = (np.atleast_1d(_plain(v, L)) for v in (x, y, z))
        self._guard(self._push)
        if not self.in_c:
            return np.zeros((len(px), 3)), np.zeros(len(px))
        pts = np.ascontiguousarray(np.stack([px, py, pz], axis=1))
        return self._guard(self.g._field, pts, want_acc, want_pot)

    def get_gravity_at_point(self, eps, x, y, z, ax, ay, az, npoints=None):
        a, _ = self._field(x, y, z, True, False)
        # Plain N-body floats: this AMUSE version's Python worker packs
        # outputs without unit conversion.
        ax.value, ay.value, az.value = a[:, 0], a[:, 1], a[:, 2]
        return OK

    def get_potential_at_point(self, eps, x, y, z, phi, npoints=None):
        phi.value = self._field(x, y, z, False, True)[1]
        return OK

    # ---- stopping conditions (AMUSE's StoppingConditionInterface) -----------------
    def has_stopping_condition(self, type, result):
        result.value = 1 if int(type) in _STOP_BITS else 0
        return OK

    def _stop_bit(self, type):
        t = int(type)
        if t not in _STOP_BITS:
            self._fail(ValueError(f"stopping condition type {t} is not supported by Gravplug "
                                  f"(collision 0, timeout 3, number of steps 4, out of box 5)"))
        return _STOP_BITS[t]

    def enable_stopping_condition(self, type):
        self._gravity()
        self._guard(self.stopping.enable, self._stop_bit(type), True)
        self.stop_enabled.add(int(type))
        return OK

    def disable_stopping_condition(self, type):
        self._gravity()
        self._guard(self.stopping.enable, self._stop_bit(type), False)
        self.stop_enabled.discard(int(type))
        return OK

    def is_stopping_condition_enabled(self, type, result):
        result.value = 1 if int(type) in self.stop_enabled else 0
        return OK

    def is_stopping_condition_set(self, type, result):
        result.value = 1 if any(t == int(type) for t, _ in self.stops) else 0
        return OK

    def get_number_of_stopping_conditions_set(self, result):
        result.value = len(self.stops)
        return OK

    def get_stopping_condition_info(self, index, type, number_of_particles):
        i = int(index)
        if not 0 <= i < len(self.stops):
            self._fail(IndexError(f"stopping condition {i} is not set ({len(self.stops)} are)"))
        type.value, number_of_particles.value = self.stops[i][0], len(self.stops[i][1])
        return OK

    def get_stopping_condition_particle_index(self, index, index_of_the_column, index_of_particle):
        i, c = int(index), int(index_of_the_column)
        if not 0 <= i < len(self.stops) or not 0 <= c < len(self.stops[i][1]):
            self._fail(IndexError(f"stopping condition {i} has no particle {c}"))
        index_of_particle.value = self.stops[i][1][c]
        return OK

    def _stop_param(self, name, value=None):
        self._gravity()
        if value is None:
            return self._guard(self.stopping.get_param, name)
        self._guard(self.stopping.set_param, name, value)
        return OK

    def get_stopping_condition_timeout_parameter(self, value):
        value.value = self._stop_param("timeout")
        return OK

    def set_stopping_condition_timeout_parameter(self, value):
        return self._stop_param("timeout", value)

    def get_stopping_condition_number_of_steps_parameter(self, value):
        value.value = int(self._stop_param("number_of_steps"))
        return OK

    def set_stopping_condition_number_of_steps_parameter(self, value):
        return self._stop_param("number_of_steps", value)

    def get_stopping_condition_out_of_box_parameter(self, value):
        value.value = self._stop_param("out_of_box_size")
        return OK

    def set_stopping_condition_out_of_box_parameter(self, value):
        return self._stop_param("out_of_box_size", value)

    def get_stopping_condition_out_of_box_use_center_of_mass_parameter(self, value):
        value.value = bool(self._stop_param("out_of_box_use_center_of_mass"))
        return OK

    def set_stopping_condition_out_of_box_use_center_of_mass_parameter(self, value):
        return self._stop_param("out_of_box_use_center_of_mass", 1.0 if value else 0.0)

    # density and internal-energy limits are for gas codes: kept, unused
    def _gas(self, name, value=None):
        if value is None:
            return self.stop_params.get(name, -1.0)
        self.stop_params[name] = float(value)
        return OK

    def get_stopping_condition_minimum_density_parameter(self, value):
        value.value = self._gas("min_density")
        return OK

    def set_stopping_condition_minimum_density_parameter(self, value):
        return self._gas("min_density", value)

    def get_stopping_condition_maximum_density_parameter(self, value):
        value.value = self._gas("max_density")
        return OK

    def set_stopping_condition_maximum_density_parameter(self, value):
        return self._gas("max_density", value)

    def get_stopping_condition_minimum_internal_energy_parameter(self, value):
        value.value = self._gas("min_u")
        return OK

    def set_stopping_condition_minimum_internal_energy_parameter(self, value):
        return self._gas("min_u", value)

    def get_stopping_condition_maximum_internal_energy_parameter(self, value):
        value.value = self._gas("max_u")
        return OK

    def set_stopping_condition_maximum_internal_energy_parameter(self, value):
        return self._gas("max_u", value)

    # ---- gravplug-specific settings ---------------------------------------------
    def get_solver(self, solver):
        solver.value = self.solver
        return OK

    def set_stands_in_for(self, code):
        """Numbers particles as `code` does (NUMBERING); before any is added."""
        name = str(code).lower()
        if name not in NUMBERING:
            self._fail(ValueError(f"Gravplug does not number particles as {code!r} does; "
                                  f"choose one of {', '.join(sorted(NUMBERING))}"))
        if len(self.ids):
            self._fail(ValueError("set stands_in_for before adding particles: the indices "
                                  "given out so far would change meaning"))
        self.first_index, self.keeps_ids = NUMBERING[name]
        self.stands_in_for = name
        self.next_id = self.first_index
        return OK

    def set_solver(self, solver):
        name = str(solver)
        if self.g is None:
            self.solver = name
            self._gravity()
        else:
            self._guard(lambda: self.g.set_solver(name, **self._solver_params(name)))
            self.solver = name
        self.cache = {}
        return OK

    def get_integrator(self, integrator):
        integrator.value = self.integrator
        return OK

    def set_integrator(self, integrator):
        name = str(integrator)
        self._guard(lambda: self._gravity().set_integrator(name, dt=self.timestep))
        self.integrator = name
        return OK

    def describe_plugin(self, solver, table):
        """JSON [[name, type, default, allowed, doc], ...] of a plugin's
        describe_params; raises (unknown plugin) with the loader's sentence."""
        info = self._guard(self._param_info, str(solver))
        table.value = json.dumps([[i.name, i.type.name.lower(),
                                   AMUSE_PLUGIN_DEFAULTS.get(i.name, i.default), i.allowed, i.doc]
                                  for i in info.values()])
        return OK

    def set_plugin_parameter(self, name, value):
        name, value = str(name), str(value)
        if name == "eps":
            return self.set_eps2(float(value) ** 2)
        g = self._gravity()
        info = self._param_info(self.solver).get(name)
        text = value if info is None else self._guard(info.format, info.parse(value))
        self._guard(g.set_solver_param, name, text)
        self.plugin_params[name] = text
        if name == "theta":
            self.opening_angle = float(text)
        self.cache = {}
        return OK

    def get_plugin_parameter(self, name, value):
        name = str(name)
        if name == "eps":
            value.value = repr(math.sqrt(self.eps2))
            return OK
        if name not in self._param_info(self.solver):
            value.value = ""     # a parameter of the constructor's plugin, not this one's
            return OK
        value.value = self._guard(self._gravity().get_solver_param, name)
        return OK

    def get_opening_angle(self, value):
        if "theta" in self._param_info(self.solver):
            value.value = float(self._guard(self._gravity().get_solver_param, "theta"))
        else:
            value.value = self.opening_angle if self.opening_angle is not None else 0.5
        return OK

    def set_opening_angle(self, value):
        v = float(value)
        if not v >= 0 or not math.isfinite(v):
            self._fail(ValueError(f"opening_angle must be finite and >= 0 (got {v})"))
        if "theta" in self._param_info(self.solver):
            self._guard(self._gravity().set_solver_param, "theta", v)
        self.opening_angle = v    # kept for a later tree plugin; direct ones have none
        self.cache = {}
        return OK

    def get_last_error(self, message):
        message.value = self.last_error
        return OK
