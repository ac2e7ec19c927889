# SPDX-License-Identifier: Apache-2.0
"""The high-level class of gravplug's AMUSE code: Gravplug, a
GravitationalDynamics and GravityFieldCode over the legacy interface
(interface.py), with AMUSE's parameters, particle sets, states and methods,
and every parameter of the chosen plugin as a typed entry."""
import json

import numpy as np

from amuse.community.interface.gd import GravitationalDynamics, GravityFieldCode
from amuse.community.interface.stopping_conditions import StoppingConditions
from amuse.datamodel.parameters import ModuleMethodParameterDefinition
from amuse.units import nbody_system
from amuse.support.exceptions import AmuseException

from .interface import GravplugInterface

# Names AMUSE already uses: a plugin parameter of the same name is exposed
# as plugin_<name>. eps is epsilon_squared's root.
_RESERVED = {"eps", "epsilon_squared", "timestep", "dt", "opening_angle", "solver",
             "integrator", "begin_time", "timestep_parameter", "is_time_reversed_allowed"}


def _typed(text):
    """An integrator parameter's value typed from its text, as the plugin
    parameters are from their table: int, float, else the string."""
    for kind in (int, float):
        try:
            return kind(text)
        except (TypeError, ValueError):
            pass
    return text



def _text(value):
    """A parameter value as the worker takes it: bools as true/false,
    floats exactly (repr), the rest as str."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return str(value)


class _PluginDefault(ModuleMethodParameterDefinition):
    """A parameter whose default is the plugin's own: AMUSE does not write
    it at commit (it would overwrite what plugin_params= or
    set_plugin_parameter set before, and theta through opening_angle)."""

    def set_default_value(self, parameter, object):
        pass


class _PluginParameter(_PluginDefault):
    """One describe_params entry of the plugin as an AMUSE parameter:
    read with get_plugin_parameter, written with set_plugin_parameter,
    typed from the plugin's table (double, int, bool; enums as strings)."""

    def __init__(self, name, plugin_name, kind, default, doc):
        self.plugin_name, self.kind = plugin_name, kind
        _PluginDefault.__init__(
            self, "get_plugin_parameter", "set_plugin_parameter", name,
            f"plugin parameter {plugin_name}: {doc}", self._parse(default))

    def _parse(self, text):
        try:
            if self.kind == "double":
                return float(text)
            if self.kind == "int":
                return int(text)
            if self.kind == "bool":
                return str(text).strip().lower() in ("true", "1", "yes")
        except ValueError:
            pass
        return text

    def get_value(self, parameter, object):
        text = object.get_plugin_parameter(self.plugin_name)
        return None if text == "" else self._parse(text)   # None: not in the current plugin

    def set_value(self, parameter, object, value):
        if isinstance(value, (bool, np.bool_)):
            text = "true" if value else "false"
        elif isinstance(value, float):
            text = repr(value)
        else:
            text = str(value)
        object.set_plugin_parameter(self.plugin_name, text)
        parameter.is_set = True


class _IntegratorParameter(_PluginDefault):
    """One parameter of the integrator as an AMUSE parameter (eta,
    criterion, max_level, ...): read with get_integrator_parameter, written
    with set_integrator_parameter, typed from its default's text."""

    def __init__(self, name, integrator_name, default, doc):
        self.integrator_name = integrator_name
        _PluginDefault.__init__(
            self, "get_integrator_parameter", "set_integrator_parameter", name,
            f"integrator parameter {integrator_name}: {doc}", _typed(default))

    def get_value(self, parameter, object):
        text = object.get_integrator_parameter(self.integrator_name)
        return None if text == "" else _typed(text)   # None: not in the current integrator

    def set_value(self, parameter, object, value):
        object.set_integrator_parameter(self.integrator_name,
                                        repr(value) if isinstance(value, float) else str(value))
        parameter.is_set = True


class _ExactEndTime(_PluginDefault):
    """Hermite's end_time_accuracy_factor, under stands_in_for="hermite":
    how far past the requested time Hermite's last step may end, 0 for
    exactly there, which is what every Gravplug integrator does. Reads 0;
    any other value is refused, saying so."""

    def __init__(self):
        _PluginDefault.__init__(
            self, None, None, "end_time_accuracy_factor",
            "Hermite's: evolve_model ends exactly at the time asked for (0); "
            "Gravplug has no other end", 0.0)

    def get_value(self, parameter, object):
        return 0.0

    def set_value(self, parameter, object, value):
        if float(value) != 0.0:
            raise AmuseException(
                f"end_time_accuracy_factor {value}: Gravplug's evolve_model ends exactly at the "
                "time asked for, which is Hermite's 0; other values are not supported")
        parameter.is_set = True


class Gravplug(GravitationalDynamics, GravityFieldCode):
    """AMUSE gravity code: Gravplug(unit_converter=None, solver="cpu-tree",
    integrator="leapfrog", plugin_params=None, **options).

    Parameters: epsilon_squared (its root goes to the plugin as eps),
    timestep (also dt: the integrator's step, dt_max under block-rk2),
    opening_angle (the plugin's theta), begin_time, solver, integrator,
    AMUSE's stopping_conditions_*, and every other parameter of the plugin
    chosen here under its own name (theta, mac, order, precision, ...),
    typed from its describe_params. plugin_params={...} sets those at
    construction. stands_in_for="ph4" (or "hermite", "huayno") numbers the
    particles as that code does (GravplugInterface). A wrong plugin, plugin
    parameter or value raises here, at the call, with gravplug's sentence in
    the exception text."""

    def __init__(self, unit_converter=None, solver="cpu-tree",
                 integrator="leapfrog", plugin_params=None, stands_in_for=None, **options):
        self.stopping_conditions = StoppingConditions(self)
        self._stands_in_for = stands_in_for
        # solver and integrator straight to the worker, not through the
        # parameters: a new code stays UNINITIALIZED, as AMUSE's codes do
        legacy = GravplugInterface(solver=solver, integrator=integrator,
                                   stands_in_for=stands_in_for, **options)
        try:
            table, err = legacy.describe_plugin(str(solver))
            self._plugin_table = json.loads(table) if err == 0 else []
            table, err = legacy.describe_integrator(str(integrator))
            self._integrator_table = json.loads(table) if err == 0 else []
            GravitationalDynamics.__init__(self, legacy, unit_converter, **options)
            for k, v in dict(plugin_params or {}).items():
                legacy.set_plugin_parameter(str(k), _text(v))
        except BaseException:
            legacy.stop()
            raise

    def set_plugin_parameter(self, name, value):
        """Sets a plugin parameter by its plugin name; value may be a number,
        a bool or a string (as the constructor's plugin_params take them)."""
        return self.overridden().set_plugin_parameter(str(name), _text(value))

    def set_integrator_parameter(self, name, value):
        """Sets an integrator parameter by its name (eta, criterion, ...)."""
        return self.overridden().set_integrator_parameter(str(name), _text(value))

    def define_particle_sets(self, handler):
        GravitationalDynamics.define_particle_sets(self, handler)
        # particles.ax/ay/az and particles.potential_in_code (once per state;
        # "potential" is taken by AMUSE's own particles.potential() method)
        handler.add_getter("particles", "get_acceleration", names=("ax", "ay", "az"))
        handler.add_getter("particles", "get_potential", names=("potential_in_code",))
        handler.add_getter("particles", "get_particle_timestep", names=("timestep",))
        # all of them in one message when all are read (AMUSE takes a getter
        # whose names are exactly, or within, the ones asked for, so a read
        # of positions alone never computes the field through this one)
        handler.add_getter("particles", "get_state_and_derived",
                           names=("mass", "x", "y", "z", "vx", "vy", "vz", "radius", "ax", "ay",
                                  "az", "potential_in_code", "timestep"))
        handler.add_setter("particles", "set_particle_timestep", names=("timestep",))
        # a copy of the particles copied back writes them: the values read are
        # taken as no change, others refused (worker.py, _derived)
        handler.add_setter("particles", "set_acceleration", names=("ax", "ay", "az"))
        handler.add_setter("particles", "set_potential", names=("potential_in_code",))
        self.stopping_conditions.define_particle_set(handler)

    def define_state(self, handler):
        GravitationalDynamics.define_state(self, handler)
        handler.add_method("RUN", "get_acceleration")
        handler.add_method("RUN", "get_particle_timestep")
        GravityFieldCode.define_state(self, handler)
        for m in ("get_solver", "set_solver", "get_integrator", "set_integrator",
                  "set_time_step", "set_plugin_parameter", "get_plugin_parameter",
                  "get_opening_angle", "set_opening_angle", "get_last_error",
                  "describe_plugin", "describe_integrator", "set_integrator_parameter",
                  "get_integrator_parameter", "get_timestep_parameter", "set_timestep_parameter",
                  "get_is_time_reversed_allowed", "set_is_time_reversed_allowed",
                  "get_epsilon_squared", "set_epsilon_squared"):
            handler.add_method("!UNINITIALIZED!STOPPED", m)
        self.stopping_conditions.define_state(handler)

    def define_parameters(self, handler):
        # Not GravitationalDynamics.define_parameters: its timestep is
        # read-only. As BHTree, every parameter is defined here.
        handler.add_method_parameter(
            "get_begin_time", "set_begin_time", "begin_time",
            "model time to start the simulation at",
            default_value=0.0 | nbody_system.time)
        handler.add_method_parameter(
            "get_eps2", "set_eps2", "epsilon_squared",
            "softening length squared (eps = its root goes to the plugin)",
            default_value=0.0 | nbody_system.length ** 2)
        handler.add_method_parameter(
            "get_time_step", "set_time_step", "timestep",
            "integrator time step (the largest block step for block-rk2)",
            default_value=(1.0 / 64) | nbody_system.time)
        handler.add_alias_parameter("dt", "timestep", "the same as timestep")
        handler.definitions["parameters"].append(_PluginDefault(
            "get_opening_angle", "set_opening_angle", "opening_angle",
            "tree opening angle: the plugin's theta (kept, unused, by direct plugins)",
            default_value=0.5))
        # the constructor's choice stays (not overwritten by a default at commit)
        handler.definitions["parameters"].append(_PluginDefault(
            "get_solver", "set_solver", "solver",
            "gravplug plugin: short name (cpu-direct, cpu-tree, cuda-tree) or path",
            default_value="cpu-tree"))
        handler.definitions["parameters"].append(_PluginDefault(
            "get_integrator", "set_integrator", "integrator",
            "gravplug integrator name (leapfrog, rk4, block-rk2, ...)",
            default_value="leapfrog"))
        handler.definitions["parameters"].append(_PluginDefault(
            "get_timestep_parameter", "set_timestep_parameter", "timestep_parameter",
            "the integrator's accuracy in the meaning of the code replaced: ph4's under "
            "hermite (eta = timestep_parameter**2), Huayno's under hold (eta itself); "
            "nan for fixed-step integrators", default_value=float("nan")))
        handler.definitions["parameters"].append(_PluginDefault(
            "get_is_time_reversed_allowed", "set_is_time_reversed_allowed",
            "is_time_reversed_allowed",
            "evolve_model to an earlier time integrates backward (on by default where "
            "the integrator can; it cannot be turned on where it cannot)", default_value=True))
        if self._stands_in_for == "hermite":
            handler.definitions["parameters"].append(_ExactEndTime())
        self.stopping_conditions.define_parameters(handler)
        plugin_names = set()
        for name, kind, default, allowed, doc in getattr(self, "_plugin_table", []):
            if name == "eps":
                continue
            entry = f"plugin_{name}" if name in _RESERVED else name
            plugin_names.add(entry)
            handler.definitions["parameters"].append(
                _PluginParameter(entry, name, kind, default,
                                 f"{doc}" + (f" (allowed: {allowed})" if allowed else "")))
        for name, default, doc in getattr(self, "_integrator_table", []):
            if name in ("dt", "eps"):       # timestep; the plugin's eps
                continue
            entry = f"integrator_{name}" if name in _RESERVED or name in plugin_names else name
            handler.definitions["parameters"].append(_IntegratorParameter(entry, name, default, doc))

    def define_methods(self, handler):
        GravitationalDynamics.define_methods(self, handler)
        L, V = nbody_system.length, nbody_system.speed
        # new_particle's optional id: kept as the index under stands_in_for="ph4"
        handler.add_method("new_particle", (nbody_system.mass, L, L, L, V, V, V, L, handler.NO_UNIT),
                           (handler.INDEX, handler.ERROR_CODE))
        handler.add_method("get_eps2", (), (nbody_system.length ** 2, handler.ERROR_CODE))
        handler.add_method("set_eps2", (nbody_system.length ** 2,), (handler.ERROR_CODE,))
        handler.add_method("get_time_step", (), (nbody_system.time, handler.ERROR_CODE))
        handler.add_method("set_time_step", (nbody_system.time,), (handler.ERROR_CODE,))
        handler.add_method("get_opening_angle", (), (handler.NO_UNIT, handler.ERROR_CODE))
        handler.add_method("set_opening_angle", (handler.NO_UNIT,), (handler.ERROR_CODE,))
        handler.add_method("get_solver", (), (handler.NO_UNIT, handler.ERROR_CODE))
        handler.add_method("set_solver", (handler.NO_UNIT,), (handler.ERROR_CODE,))
        handler.add_method("get_integrator", (), (handler.NO_UNIT, handler.ERROR_CODE))
        handler.add_method("set_integrator", (handler.NO_UNIT,), (handler.ERROR_CODE,))
        handler.add_method("set_plugin_parameter", (handler.NO_UNIT, handler.NO_UNIT),
                           (handler.ERROR_CODE,))
        handler.add_method("get_plugin_parameter", (handler.NO_UNIT,),
                           (handler.NO_UNIT, handler.ERROR_CODE))
        handler.add_method("get_last_error", (), (handler.NO_UNIT, handler.ERROR_CODE))
        handler.add_method("get_epsilon_squared", (), (nbody_system.length ** 2, handler.ERROR_CODE))
        handler.add_method("set_epsilon_squared", (nbody_system.length ** 2,), (handler.ERROR_CODE,))
        handler.add_method("get_timestep_parameter", (), (handler.NO_UNIT, handler.ERROR_CODE))
        handler.add_method("set_timestep_parameter", (handler.NO_UNIT,), (handler.ERROR_CODE,))
        handler.add_method("get_is_time_reversed_allowed", (), (handler.NO_UNIT, handler.ERROR_CODE))
        handler.add_method("set_is_time_reversed_allowed", (handler.NO_UNIT,), (handler.ERROR_CODE,))
        handler.add_method("set_integrator_parameter", (handler.NO_UNIT, handler.NO_UNIT),
                           (handler.ERROR_CODE,))
        handler.add_method("get_integrator_parameter", (handler.NO_UNIT,),
                           (handler.NO_UNIT, handler.ERROR_CODE))
        handler.add_method("set_acceleration", (handler.INDEX, nbody_system.acceleration,
                                                nbody_system.acceleration, nbody_system.acceleration),
                           (handler.ERROR_CODE,))
        handler.add_method("set_potential", (handler.INDEX, nbody_system.potential),
                           (handler.ERROR_CODE,))
        handler.add_method("get_particle_timestep", (handler.INDEX,),
                           (nbody_system.time, handler.ERROR_CODE))
        handler.add_method("set_particle_timestep", (handler.INDEX, nbody_system.time),
                           (handler.ERROR_CODE,))
        A = nbody_system.acceleration
        handler.add_method("get_state_and_derived", (handler.INDEX,),
                           (nbody_system.mass, L, L, L, V, V, V, L, A, A, A, nbody_system.potential,
                            nbody_system.time, handler.ERROR_CODE))
        self.stopping_conditions.define_methods(handler)
