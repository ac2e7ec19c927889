"""An AMUSE gravity code backed by a gravplug plugin.

    from amuse.units import nbody_system
    from amuse.ic.plummer import new_plummer_model
    from gravplug.amuse import Gravplug

    stars = new_plummer_model(1000)
    gravity = Gravplug(solver="cpu-tree", integrator="leapfrog")
    gravity.parameters.epsilon_squared = 0.01**2 | nbody_system.length**2
    gravity.particles.add_particles(stars)
    gravity.evolve_model(1 | nbody_system.time)
    print(gravity.kinetic_energy, gravity.potential_energy)
    gravity.stop()

It is a regular AMUSE community code: the high-level class (Gravplug)
derives from GravitationalDynamics and GravityFieldCode, so units,
converters, particle sets, channels and bridge work as with any other code.
The code itself runs in an AMUSE Python worker (PythonCodeInterface, over
the sockets channel by default: no MPI needed), which drives a
gravplug.Gravity object. The worker must find libgravplug.so and the
plugins as any gravplug program does (GRAVPLUG_LIB, GRAVPLUG_PATH, ...);
the environment is inherited.

Needs the AMUSE framework (`pip install amuse-framework`); importing this
module without it raises ImportError.
"""
import functools
import os
import sys
import tempfile

import numpy as np

from amuse.community.interface.gd import (GravitationalDynamics,
                                          GravitationalDynamicsInterface,
                                          GravityFieldCode,
                                          GravityFieldInterface)
from amuse.rfi.core import (LegacyFunctionSpecification, PythonCodeInterface,
                            legacy_function)
from amuse.support.literature import LiteratureReferencesMixIn
from amuse.units import nbody_system
from amuse.units.quantities import is_quantity

OK, ERROR = 0, -1


def _plain(v, unit):
    """A float or array in N-body units, whether v carries units or not."""
    return np.asarray(v.value_in(unit) if is_quantity(v) else v, dtype=np.float64)


def _guarded(method):
    """Worker methods return AMUSE error codes, never raise (an exception
    would kill the worker); the gravplug sentence is kept for
    get_last_error and written to the worker's stderr."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 — reported through the code
            self.last_error = f"{method.__name__}: {exc}"
            print(f"gravplug worker: {self.last_error}", file=sys.stderr, flush=True)
            return ERROR
    return wrapper


class GravplugImplementation:
    """Runs in the AMUSE worker process: particles kept here, time and
    forces in a gravplug.Gravity (the C integrators and a plugin)."""

    def __init__(self):
        self.solver = "cpu-tree"
        self.integrator = "leapfrog"
        self.eps2 = 0.0
        self.timestep = 1.0 / 64
        self.begin_time = 0.0
        self.plugin_params = {}
        self.last_error = ""
        self._reset()

    def _reset(self):
        self.index = []          # particle ids, in Gravity order
        self.row_of = {}         # particle id -> row in Gravity
        self.cache = {}          # per-particle results of the current state
        self.state = {}          # id -> [m, x, y, z, vx, vy, vz, r]
        self.next_id = 1
        self.gravity = None
        self.dirty = True        # particle set or parameters changed: rebuild
        self.moved = False       # only positions/velocities changed: push
        self.time = self.begin_time

    # ---- lifetime ---------------------------------------------------------
    def initialize_code(self):
        self._reset()
        return OK

    def cleanup_code(self):
        if self.gravity is not None:
            self.gravity.close()
        self._reset()
        return OK

    def commit_parameters(self):
        self.time = self.begin_time
        return OK

    def recommit_parameters(self):
        self.dirty = True
        return OK

    def _build(self):
        """(Re)creates the Gravity object from the Python-side state."""
        import gravplug
        ids = sorted(self.state)
        rows = np.array([self.state[i] for i in ids], dtype=np.float64).reshape(-1, 8)
        if self.gravity is not None:
            self.gravity.close()
            self.gravity = None
        self.index = ids
        self.row_of = {i: k for k, i in enumerate(ids)}
        self.cache = {}
        if not ids:
            self.dirty = False
            return
        g = gravplug.Gravity(solver=self.solver, integrator=self.integrator,
                             eps=float(np.sqrt(self.eps2)), dt=self.timestep,
                             **self.plugin_params)
        g.set_particles(np.ascontiguousarray(rows[:, 1:4]),
                        np.ascontiguousarray(rows[:, 4:7]),
                        np.ascontiguousarray(rows[:, 0]), time=self.time)
        self.gravity = g
        self.dirty = self.moved = False

    def _rows(self):
        return np.array([self.state[i] for i in self.index], dtype=np.float64).reshape(-1, 8)

    def _sync(self):
        if self.dirty or self.gravity is None:
            self._build()
        elif self.moved:
            self.cache = {}
            rows = self._rows()
            self.gravity.set_state(np.ascontiguousarray(rows[:, 1:4]),
                                   np.ascontiguousarray(rows[:, 4:7]))
        self.moved = False

    def _pull(self):
        """Copies positions/velocities back from Gravity after a run."""
        if self.gravity is None:
            return
        pos, vel = self.gravity.positions, self.gravity.velocities
        for k, i in enumerate(self.index):
            s = self.state[i]
            s[1:4] = pos[k]
            s[4:7] = vel[k]

    def commit_particles(self):
        self._build()
        return OK

    def recommit_particles(self):
        self._build()
        return OK

    def synchronize_model(self):
        return OK

    def evolve_model(self, time):
        t = float(_plain(time, nbody_system.time))
        self._sync()
        if self.gravity is not None:
            self.gravity.evolve_model(t)
            self.cache = {}
            self._pull()
            self.time = self.gravity.model_time
        else:
            self.time = t
        return OK

    # ---- particles ----------------------------------------------------------
    def new_particle(self, index_of_the_particle, mass, x, y, z, vx, vy, vz, radius=0.0):
        i = self.next_id
        self.next_id += 1
        self.state[i] = [mass, x, y, z, vx, vy, vz, radius]
        index_of_the_particle.value = i
        self.dirty = True
        return OK

    def delete_particle(self, index_of_the_particle):
        if self.state.pop(int(index_of_the_particle), None) is None:
            return ERROR
        self.dirty = True
        return OK

    def _get(self, i, slots, outs):
        s = self.state.get(int(i))
        if s is None:
            return ERROR
        for k, o in zip(slots, outs):
            o.value = s[k]
        return OK

    def _set(self, i, slots, values):
        s = self.state.get(int(i))
        if s is None:
            return ERROR
        for k, v in zip(slots, values):
            s[k] = float(v)
        if all(1 <= k <= 6 for k in slots):
            self.moved = True        # a kick or drift: no rebuild needed
        elif any(k == 0 for k in slots):
            self.dirty = True        # masses changed
        return OK

    def get_state(self, index_of_the_particle, mass, x, y, z, vx, vy, vz, radius):
        return self._get(index_of_the_particle, range(8), (mass, x, y, z, vx, vy, vz, radius))

    def set_state(self, index_of_the_particle, mass, x, y, z, vx, vy, vz, radius=0.0):
        return self._set(index_of_the_particle, range(8), (mass, x, y, z, vx, vy, vz, radius))

    def get_mass(self, index_of_the_particle, mass):
        return self._get(index_of_the_particle, (0,), (mass,))

    def set_mass(self, index_of_the_particle, mass):
        return self._set(index_of_the_particle, (0,), (mass,))

    def get_radius(self, index_of_the_particle, radius):
        return self._get(index_of_the_particle, (7,), (radius,))

    def set_radius(self, index_of_the_particle, radius):
        return self._set(index_of_the_particle, (7,), (radius,))

    def get_position(self, index_of_the_particle, x, y, z):
        return self._get(index_of_the_particle, (1, 2, 3), (x, y, z))

    def set_position(self, index_of_the_particle, x, y, z):
        return self._set(index_of_the_particle, (1, 2, 3), (x, y, z))

    def get_velocity(self, index_of_the_particle, vx, vy, vz):
        return self._get(index_of_the_particle, (4, 5, 6), (vx, vy, vz))

    def set_velocity(self, index_of_the_particle, vx, vy, vz):
        return self._set(index_of_the_particle, (4, 5, 6), (vx, vy, vz))

    def _row(self, i):
        self._sync()
        return self.row_of.get(int(i))

    def _cached(self, name):
        """Per-particle accelerations/potentials, computed once per state:
        AMUSE asks for them one particle at a time."""
        if name not in self.cache:
            self.cache[name] = getattr(self.gravity, name)
        return self.cache[name]

    def get_acceleration(self, index_of_the_particle, ax, ay, az):
        k = self._row(index_of_the_particle)
        if k is None:
            return ERROR
        ax.value, ay.value, az.value = self._cached("accelerations")[k]
        return OK

    def get_potential(self, index_of_the_particle, potential):
        k = self._row(index_of_the_particle)
        if k is None:
            return ERROR
        potential.value = self._cached("potentials")[k]
        return OK

    # ---- global quantities --------------------------------------------------
    def _scalar(self, out, f, empty=0.0):
        self._sync()
        out.value = f() if self.gravity is not None else empty
        return OK

    def get_kinetic_energy(self, kinetic_energy):
        return self._scalar(kinetic_energy, lambda: self.gravity.kinetic_energy)

    def get_potential_energy(self, potential_energy):
        return self._scalar(potential_energy, lambda: self.gravity.potential_energy)

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
        self.timestep = float(time_step)
        self.dirty = True
        return OK

    def get_eps2(self, epsilon_squared):
        epsilon_squared.value = self.eps2
        return OK

    def set_eps2(self, epsilon_squared):
        self.eps2 = float(epsilon_squared)
        self.dirty = True
        return OK

    def _masses(self):
        return np.array([self.state[i][0] for i in sorted(self.state)])

    def _column(self, k):
        return np.array([self.state[i][k] for i in sorted(self.state)])

    def get_total_mass(self, mass):
        mass.value = float(self._masses().sum())
        return OK

    def _com(self, slots, outs):
        m = self._masses()
        if m.sum() <= 0:
            for o in outs:
                o.value = 0.0
            return OK
        for k, o in zip(slots, outs):
            o.value = float((m * self._column(k)).sum() / m.sum())
        return OK

    def get_center_of_mass_position(self, x, y, z):
        return self._com((1, 2, 3), (x, y, z))

    def get_center_of_mass_velocity(self, vx, vy, vz):
        return self._com((4, 5, 6), (vx, vy, vz))

    def get_total_radius(self, radius):
        if not self.state:
            radius.value = 0.0
            return OK
        out = [type(radius)() for _ in range(3)]
        self._com((1, 2, 3), out)
        c = np.array([o.value for o in out])
        p = np.stack([self._column(k) for k in (1, 2, 3)], axis=1)
        radius.value = float(np.sqrt(((p - c) ** 2).sum(axis=1)).max())
        return OK

    def get_number_of_particles(self, number_of_particles):
        number_of_particles.value = len(self.state)
        return OK

    def get_index_of_first_particle(self, index_of_the_particle):
        if not self.state:
            return 1
        index_of_the_particle.value = min(self.state)
        return OK

    def get_index_of_next_particle(self, index_of_the_particle, index_of_the_next_particle):
        later = [i for i in self.state if i > int(index_of_the_particle)]
        if not later:
            return 1
        index_of_the_next_particle.value = min(later)
        return OK

    # ---- field at points (GravityFieldInterface) --------------------------------
    def get_gravity_at_point(self, eps, x, y, z, ax, ay, az, npoints=None):
        L = nbody_system.length
        self._sync()
        e, px, py, pz = (_plain(v, L) for v in (eps, x, y, z))
        if self.gravity is None:
            gx = gy = gz = np.zeros_like(px)
        else:
            gx, gy, gz = self.gravity.get_gravity_at_point(e, px, py, pz)
        # Plain N-body floats: this AMUSE version's Python worker packs
        # outputs without unit conversion.
        ax.value, ay.value, az.value = gx, gy, gz
        return OK

    def get_potential_at_point(self, eps, x, y, z, phi, npoints=None):
        L = nbody_system.length
        self._sync()
        e, px, py, pz = (_plain(v, L) for v in (eps, x, y, z))
        if self.gravity is None:
            p = np.zeros_like(px)
        else:
            p = self.gravity.get_potential_at_point(e, px, py, pz)
        phi.value = p
        return OK

    # ---- gravplug-specific settings ---------------------------------------------
    def get_solver(self, solver):
        solver.value = self.solver
        return OK

    def set_solver(self, solver):
        self.solver = str(solver)
        self.dirty = True
        return OK

    def get_integrator(self, integrator):
        integrator.value = self.integrator
        return OK

    def set_integrator(self, integrator):
        self.integrator = str(integrator)
        self.dirty = True
        return OK

    def set_plugin_parameter(self, name, value):
        self.plugin_params[str(name)] = str(value)
        self.dirty = True
        return OK

    def get_last_error(self, message):
        message.value = self.last_error
        return OK


for _name in ("commit_particles", "recommit_particles", "evolve_model", "get_acceleration",
              "get_potential", "get_kinetic_energy", "get_potential_energy",
              "get_gravity_at_point", "get_potential_at_point", "cleanup_code",
              "synchronize_model"):
    setattr(GravplugImplementation, _name, _guarded(getattr(GravplugImplementation, _name)))


def _string_accessor(name, direction):
    f = LegacyFunctionSpecification()
    f.addParameter(name, dtype="string", direction=direction)
    f.result_type = "int32"
    return f


class GravplugInterface(PythonCodeInterface, GravitationalDynamicsInterface,
                        GravityFieldInterface, LiteratureReferencesMixIn):
    """The low-level AMUSE interface; the code runs in a Python worker."""

    def __init__(self, **options):
        options.setdefault("channel_type", "sockets")
        # AMUSE writes the generated worker script into worker_dir (the
        # current directory by default): keep it out of the user's way.
        if not options.get("worker_dir"):
            wd = os.path.join(tempfile.gettempdir(), f"gravplug-amuse-{os.getuid()}")
            os.makedirs(wd, exist_ok=True)
            options["worker_dir"] = wd
        # name_of_the_worker=None: AMUSE writes the worker script itself.
        PythonCodeInterface.__init__(self, GravplugImplementation, None, **options)
        LiteratureReferencesMixIn.__init__(self)

    @legacy_function
    def get_solver():
        return _string_accessor("solver", LegacyFunctionSpecification.OUT)

    @legacy_function
    def set_solver():
        return _string_accessor("solver", LegacyFunctionSpecification.IN)

    @legacy_function
    def get_integrator():
        return _string_accessor("integrator", LegacyFunctionSpecification.OUT)

    @legacy_function
    def set_integrator():
        return _string_accessor("integrator", LegacyFunctionSpecification.IN)

    @legacy_function
    def set_time_step():
        f = LegacyFunctionSpecification()
        f.addParameter("time_step", dtype="float64", direction=f.IN)
        f.result_type = "int32"
        return f

    @legacy_function
    def get_last_error():
        return _string_accessor("message", LegacyFunctionSpecification.OUT)

    @legacy_function
    def set_plugin_parameter():
        f = LegacyFunctionSpecification()
        f.addParameter("name", dtype="string", direction=f.IN)
        f.addParameter("value", dtype="string", direction=f.IN)
        f.result_type = "int32"
        return f


class Gravplug(GravitationalDynamics, GravityFieldCode):
    """AMUSE gravity code: Gravplug(unit_converter=None, solver="cpu-tree",
    integrator="leapfrog", **plugin_params). Plugin parameters other than
    eps (theta=0.5, mac="bmax", ...) are passed by keyword and go to the
    plugin unchanged; softening is AMUSE's epsilon_squared parameter."""

    def __init__(self, unit_converter=None, solver="cpu-tree",
                 integrator="leapfrog", plugin_params=None, **options):
        extra = dict(plugin_params or {})
        legacy = GravplugInterface(**options)
        GravitationalDynamics.__init__(self, legacy, unit_converter, **options)
        self.parameters.solver = solver
        self.parameters.integrator = integrator
        for k, v in extra.items():
            self.set_plugin_parameter(k, str(v))

    def define_particle_sets(self, handler):
        GravitationalDynamics.define_particle_sets(self, handler)
        # particles.ax/ay/az and particles.potential_in_code (once per state;
        # "potential" is taken by AMUSE's own particles.potential() method)
        handler.add_getter("particles", "get_acceleration", names=("ax", "ay", "az"))
        handler.add_getter("particles", "get_potential", names=("potential_in_code",))

    def define_state(self, handler):
        GravitationalDynamics.define_state(self, handler)
        handler.add_method("RUN", "get_acceleration")
        GravityFieldCode.define_state(self, handler)
        for m in ("get_solver", "set_solver", "get_integrator", "set_integrator",
                  "set_time_step", "set_plugin_parameter", "get_last_error"):
            handler.add_method("!UNINITIALIZED!STOPPED", m)

    def define_parameters(self, handler):
        GravitationalDynamics.define_parameters(self, handler)
        handler.add_method_parameter(
            "get_eps2", "set_eps2", "epsilon_squared",
            "softening length squared (eps = its root goes to the plugin)",
            default_value=0.0 | nbody_system.length ** 2)
        handler.add_method_parameter(
            "get_solver", "set_solver", "solver",
            "gravplug plugin: short name (cpu-direct, cpu-tree, cuda-tree) or path",
            default_value="cpu-tree")
        handler.add_method_parameter(
            "get_integrator", "set_integrator", "integrator",
            "gravplug integrator name (leapfrog, rk4, block-rk2, ...)",
            default_value="leapfrog")
        handler.add_method_parameter(
            "get_time_step", "set_time_step", "dt",
            "integrator time step (the largest block step for block-rk2)",
            default_value=(1.0 / 64) | nbody_system.time)

    def define_methods(self, handler):
        GravitationalDynamics.define_methods(self, handler)
        handler.add_method("get_eps2", (), (nbody_system.length ** 2, handler.ERROR_CODE))
        handler.add_method("set_eps2", (nbody_system.length ** 2,), (handler.ERROR_CODE,))
        handler.add_method("get_time_step", (), (nbody_system.time, handler.ERROR_CODE))
        handler.add_method("set_time_step", (nbody_system.time,), (handler.ERROR_CODE,))
        handler.add_method("get_solver", (), (handler.NO_UNIT, handler.ERROR_CODE))
        handler.add_method("set_solver", (handler.NO_UNIT,), (handler.ERROR_CODE,))
        handler.add_method("get_integrator", (), (handler.NO_UNIT, handler.ERROR_CODE))
        handler.add_method("set_integrator", (handler.NO_UNIT,), (handler.ERROR_CODE,))
        handler.add_method("set_plugin_parameter", (handler.NO_UNIT, handler.NO_UNIT),
                           (handler.ERROR_CODE,))
        handler.add_method("get_last_error", (), (handler.NO_UNIT, handler.ERROR_CODE))
