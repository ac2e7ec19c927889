# SPDX-License-Identifier: Apache-2.0
"""gravplug: gravity-solver plugins from Python (ctypes + numpy).

    gravplug.Solver("cpu-tree", theta=0.5, eps=0.01)   one plugin instance
    gravplug.Gravity(solver=..., integrator=...)        AMUSE-style code
    gravplug.ic.make("plummer", n, seed)                initial conditions
    gravplug.list_plugins(), gravplug.where()           what is found where

See docs/PYTHON.md.
"""
from . import ic
from ._abi import Capability, ParamType, Status
from ._lib import library_path
from ._loader import list_plugins, search_path, status_name
from .errors import (AbiMismatchError, BadStateError, DeviceError, GravplugError,
                     InternalError, InvalidArgumentError, LibraryNotFoundError,
                     OutOfMemoryError, PluginNotFoundError, UnknownParameterError,
                     UnsupportedError)
from .gravity import Gravity, Particles, integrator_params, integrators
from .solver import ParamInfo, Solver, Stats, describe_params

__version__ = "0.1.0"


def where():
    """A dict saying which libgravplug.so is used and where plugins are looked for."""
    return {"library": library_path(), "plugin_search_path": search_path(),
            "plugins": dict(list_plugins())}


__all__ = ["Solver", "Gravity", "Particles", "ParamInfo", "Stats", "ic",
           "describe_params", "integrators", "integrator_params", "list_plugins",
           "search_path", "status_name", "where", "Capability", "ParamType", "Status",
           "GravplugError", "InvalidArgumentError", "BadStateError", "OutOfMemoryError",
           "DeviceError", "UnsupportedError", "UnknownParameterError", "AbiMismatchError",
           "InternalError", "PluginNotFoundError", "LibraryNotFoundError"]
