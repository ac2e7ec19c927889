# SPDX-License-Identifier: Apache-2.0
"""The legacy interface of gravplug's AMUSE code: GravplugInterface, the
function-level interface AMUSE talks to, which starts the Python worker
(worker.py) over sockets and declares the legacy functions beyond
GravitationalDynamicsInterface's (solver, integrator, plugin parameters)."""
import os
import tempfile
import warnings

from amuse.community.interface.gd import GravitationalDynamicsInterface, GravityFieldInterface
from amuse.community.interface.stopping_conditions import StoppingConditionInterface
from amuse.rfi.core import LegacyFunctionSpecification, PythonCodeInterface, legacy_function
from amuse.support.literature import LiteratureReferencesMixIn

from . import forkserver
from .worker import GravplugImplementation

# The script the launcher runs (a path, not an import: it imports this module).
WORKER_START = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker_start.py")


def worker_launcher(worker_dir):
    """This gravplug's worker launcher in worker_dir (forkserver.launcher)."""
    return forkserver.launcher(worker_dir, WORKER_START)


IN, OUT = LegacyFunctionSpecification.IN, LegacyFunctionSpecification.OUT


def _spec(*params):
    """A legacy function's specification: (name, dtype, direction) for each
    parameter, an int32 error code as the result."""
    f = LegacyFunctionSpecification()
    for name, dtype, direction in params:
        f.addParameter(name, dtype=dtype, direction=direction)
    f.result_type = "int32"
    return f


def _whole_arrays(base, name, extra=()):
    """The legacy function `name` of `base`, made to take whole arrays: the
    worker gets numpy arrays and answers in one message. extra: optional
    parameters (name, dtype, direction, default) appended to base's."""
    spec_of = base.__dict__[name].specification_function

    def spec():
        f = spec_of()
        f.can_handle_array = False
        f.must_handle_array = True
        for pname, dtype, direction, default in extra:
            f.addParameter(pname, dtype=dtype, direction=direction, default=default)
        return f
    spec.__name__ = name
    spec.__doc__ = spec_of.__doc__
    return legacy_function(spec)


# The methods' papers, by what uses them: a plugin of a tree, an
# integrator. AMUSE lists a code's references from class docstrings, so
# each instance registers the class of its own choice (_cited).
REFERENCES = {
    "tree": ("Barnes & Hut (1986), the tree", "ADS:1986Natur.324..446B", "Barnes, J. & Hut, P., 1986"),
    "hermite": ("Makino & Aarseth (1992), the Hermite scheme", "ADS:1992PASJ...44..141M",
                "Makino, J. & Aarseth, S. J., 1992"),
    "hold": ("Pelupessy et al. (2012), HOLD", "ADS:2012NewA...17..711P",
             "Pelupessy, F. I., Jänes, J. & Portegies Zwart, S., 2012"),
}
_USES = {"cpu-tree": "tree", "cuda-tree": "tree", "mpi-tree": "tree",
         "hermite": "hermite", "hold": "hold", "hold-kdk": "hold"}


def _cited(solver, integrator):
    """A class whose docstring names the papers of the methods used by
    solver and integrator (none for a direct plugin and leapfrog, say)."""
    keys = [_USES[k] for k in (os.path.basename(str(solver)).removeprefix("gravplug-")
                               .removesuffix(".so"), str(integrator)) if k in _USES]
    refs = "\n".join(f"    .. [#] {REFERENCES[k][1]} ({REFERENCES[k][2]}: {REFERENCES[k][0]})"
                     for k in keys)
    return type("Gravplug-methods", (), {"__doc__": f"The methods Gravplug uses here.\n\n{refs}\n"}) \
        if keys else None


class GravplugInterface(PythonCodeInterface, GravitationalDynamicsInterface,
                        GravityFieldInterface, StoppingConditionInterface,
                        LiteratureReferencesMixIn):
    """The low-level AMUSE interface; the code runs in a Python worker.
    solver= and integrator= (optional) choose the plugin and integrator
    at once, as set_solver/set_integrator would. literature_references
    name the papers of the methods in use (REFERENCES). stands_in_for=
    (optional: a code of worker.NUMBERING, "ph4", "hermite", ...) numbers
    the particles as that code does; by default from 1, never reused."""

    def __init__(self, solver=None, integrator=None, stands_in_for=None, **options):
        options.setdefault("channel_type", "sockets")
        # One Python process needs no MPI: started directly, not through
        # mpiexec (faster, and immune to a system mpiexec AMUSE may have
        # recorded that cannot start it).
        options.setdefault("initialize_mpi", False)
        # AMUSE writes the generated worker script into worker_dir (the
        # current directory by default): keep it out of the user's way.
        # A folder of this user's alone: a shared temporary folder lets
        # another user make that name first (forkserver.private_dir).
        if not options.get("worker_dir"):
            wd, why = forkserver.private_dir(
                os.path.join(tempfile.gettempdir(), f"gravplug-amuse-{os.getuid()}"))
            if wd is None:
                wd = tempfile.mkdtemp(prefix="gravplug-amuse-")
                warnings.warn(f"gravplug: not using the shared worker folder: {why}; "
                              f"this code's workers start from {wd} (remove the folder, or pass "
                              f"worker_dir=, to share one again)", RuntimeWarning, stacklevel=2)
            options["worker_dir"] = wd
        # The worker: forked from a warm fork server (forkserver.py) where the
        # sockets channel runs it without MPI; GRAVPLUG_AMUSE_FORKSERVER=0,
        # or MPI, gets AMUSE's own worker script (name None: AMUSE writes it).
        name = None
        if (options["channel_type"] == "sockets" and not options["initialize_mpi"]
                and os.environ.get("GRAVPLUG_AMUSE_FORKSERVER", "1") != "0"):
            name = worker_launcher(options["worker_dir"])
        PythonCodeInterface.__init__(self, GravplugImplementation, name, **options)
        LiteratureReferencesMixIn.__init__(self)
        try:
            for setter, value in ((self.set_solver, solver), (self.set_integrator, integrator),
                                  (self.set_stands_in_for, stands_in_for)):
                if value is not None:
                    setter(str(value))
        except BaseException:
            self.stop()
            raise
        self.cite(solver or "cpu-tree", integrator or "leapfrog")

    def cite(self, solver, integrator):
        """Registers the papers of the methods solver and integrator use."""
        cls = _cited(solver, integrator)
        if cls is not None:
            from amuse.support.literature import TrackLiteratureReferences
            TrackLiteratureReferences.default().register_class(cls)

    # GravitationalDynamicsInterface's per-particle functions, taking whole
    # arrays (one message for N particles)
    new_particle = _whole_arrays(GravitationalDynamicsInterface, "new_particle",
                                 extra=(("id", "int32", IN, -1),))
    delete_particle = _whole_arrays(GravitationalDynamicsInterface, "delete_particle")
    get_state = _whole_arrays(GravitationalDynamicsInterface, "get_state")
    set_state = _whole_arrays(GravitationalDynamicsInterface, "set_state")
    get_mass = _whole_arrays(GravitationalDynamicsInterface, "get_mass")
    set_mass = _whole_arrays(GravitationalDynamicsInterface, "set_mass")
    get_radius = _whole_arrays(GravitationalDynamicsInterface, "get_radius")
    set_radius = _whole_arrays(GravitationalDynamicsInterface, "set_radius")
    get_position = _whole_arrays(GravitationalDynamicsInterface, "get_position")
    set_position = _whole_arrays(GravitationalDynamicsInterface, "set_position")
    get_velocity = _whole_arrays(GravitationalDynamicsInterface, "get_velocity")
    set_velocity = _whole_arrays(GravitationalDynamicsInterface, "set_velocity")
    get_acceleration = _whole_arrays(GravitationalDynamicsInterface, "get_acceleration")
    get_potential = _whole_arrays(GravitationalDynamicsInterface, "get_potential")

    @legacy_function
    def set_acceleration():
        f = _spec(("index_of_the_particle", "int32", IN), ("ax", "float64", IN),
                  ("ay", "float64", IN), ("az", "float64", IN))
        f.must_handle_array = True
        return f

    @legacy_function
    def set_potential():
        f = _spec(("index_of_the_particle", "int32", IN), ("potential", "float64", IN))
        f.must_handle_array = True
        return f

    @legacy_function
    def get_particle_timestep():
        f = _spec(("index_of_the_particle", "int32", IN), ("timestep", "float64", OUT))
        f.must_handle_array = True
        return f

    @legacy_function
    def get_state_and_derived():
        """Every attribute of the code's particles in one message (what
        channel.copy() and particles.copy() read): the state, then ax, ay,
        az, the potential and the particle's step."""
        f = _spec(("index_of_the_particle", "int32", IN),
                  *((name, "float64", OUT) for name in
                    ("mass", "x", "y", "z", "vx", "vy", "vz", "radius", "ax", "ay", "az",
                     "potential", "timestep")))
        f.must_handle_array = True
        return f

    @legacy_function
    def set_particle_timestep():
        f = _spec(("index_of_the_particle", "int32", IN), ("timestep", "float64", IN))
        f.must_handle_array = True
        return f

    @legacy_function
    def get_epsilon_squared():
        return _spec(("epsilon_squared", "float64", OUT))

    @legacy_function
    def set_epsilon_squared():
        return _spec(("epsilon_squared", "float64", IN))

    @legacy_function
    def get_timestep_parameter():
        return _spec(("value", "float64", OUT))

    @legacy_function
    def set_timestep_parameter():
        return _spec(("value", "float64", IN))

    # ph4's names for timestep_parameter: only under stands_in_for="ph4"
    # (elsewhere eta is Gravplug's integrator parameter, another number)
    @legacy_function
    def get_eta():
        return _spec(("value", "float64", OUT))

    @legacy_function
    def set_eta():
        return _spec(("value", "float64", IN))

    @legacy_function
    def describe_integrator():
        return _spec(("integrator", "string", IN), ("table", "string", OUT))

    @legacy_function
    def set_integrator_parameter():
        return _spec(("name", "string", IN), ("value", "string", IN))

    @legacy_function
    def get_integrator_parameter():
        return _spec(("name", "string", IN), ("value", "string", OUT))

    @legacy_function
    def get_is_time_reversed_allowed():
        return _spec(("value", "bool", OUT))

    @legacy_function
    def set_is_time_reversed_allowed():
        return _spec(("value", "bool", IN))

    @legacy_function
    def set_stands_in_for():
        return _spec(("code", "string", IN))

    @legacy_function
    def get_solver():
        return _spec(("solver", "string", OUT))

    @legacy_function
    def set_solver():
        return _spec(("solver", "string", IN))

    @legacy_function
    def get_integrator():
        return _spec(("integrator", "string", OUT))

    @legacy_function
    def set_integrator():
        return _spec(("integrator", "string", IN))

    @legacy_function
    def set_time_step():
        return _spec(("time_step", "float64", IN))

    @legacy_function
    def get_opening_angle():
        return _spec(("value", "float64", OUT))

    @legacy_function
    def set_opening_angle():
        return _spec(("value", "float64", IN))

    @legacy_function
    def get_last_error():
        return _spec(("message", "string", OUT))

    @legacy_function
    def describe_plugin():
        return _spec(("solver", "string", IN), ("table", "string", OUT))

    @legacy_function
    def set_plugin_parameter():
        return _spec(("name", "string", IN), ("value", "string", IN))

    @legacy_function
    def get_plugin_parameter():
        return _spec(("name", "string", IN), ("value", "string", OUT))
