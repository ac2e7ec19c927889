# SPDX-License-Identifier: Apache-2.0
"""An AMUSE gravity code backed by a gravplug plugin.

    from amuse.units import nbody_system
    from amuse.ic.plummer import new_plummer_model
    from gravplug.amuse import Gravplug

    stars = new_plummer_model(1000)
    gravity = Gravplug(solver="cpu-tree", integrator="leapfrog")
    gravity.parameters.epsilon_squared = 0.01**2 | nbody_system.length**2
    gravity.parameters.opening_angle = 0.4
    gravity.particles.add_particles(stars)
    gravity.evolve_model(1 | nbody_system.time)
    print(gravity.kinetic_energy, gravity.potential_energy)
    gravity.stop()

A drop-in for AMUSE's own gravity codes (BHTree, Huayno, ph4): the
high-level class derives from GravitationalDynamics and GravityFieldCode,
with AMUSE's StoppingConditions, the usual parameter names (epsilon_squared,
timestep, opening_angle, begin_time, stopping_conditions_*) plus every
parameter of the plugin as a typed entry, so units, converters, particle
sets, channels and bridge work as with any other code.

Files: worker.py (GravplugImplementation, in the worker process),
interface.py (GravplugInterface, the legacy functions), code.py (Gravplug,
the high-level class). The amuse-gravplug distribution
(python/amuse-gravplug) re-exports Gravplug and GravplugInterface as
amuse.community.gravplug, where AMUSE's own community codes live.

The code runs in an AMUSE Python worker (PythonCodeInterface, over the
sockets channel by default: no MPI needed) that drives a gravplug.Gravity:
positions, velocities, masses and time live in C (gp_sim); the worker keeps
a numpy copy for the particle getters. Every per-particle legacy function
handles whole arrays (must_handle_array), so reading or writing N particles
is one message, not N. Errors are raised in the worker and reach the caller
as an AMUSE CodeException whose text is the gravplug sentence, at the call
that caused them (constructor, parameter set, evolve).

The worker must find libgravplug.so and the plugins as any gravplug program
does (GRAVPLUG_LIB, GRAVPLUG_PATH, ...); the environment is inherited.
Needs the AMUSE framework (`pip install amuse-framework`); importing this
package without it raises ImportError.
"""
# The three parts, apart as AMUSE's community codes keep them: the worker
# (the process that runs the code), the legacy interface and the high-level
# class.
from .worker import GravplugImplementation
from .interface import GravplugInterface
from .code import Gravplug

__all__ = ["Gravplug", "GravplugInterface", "GravplugImplementation"]
