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
from .gravity import Gravity, Particles, integrator_flags, integrator_params, integrators
from .solver import Outputs, ParamInfo, Solver, Stats, describe_params



def _version():
    """The version of this copy of the package.

    In a checkout (python/gravplug beside python/pyproject.toml and the
    top-level VERSION file) the VERSION file is the truth, whatever
    gravplug distribution happens to be installed too; installed, the
    distribution's metadata (which the build read from that same file).
    """
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    python_dir = os.path.dirname(here)
    version_file = os.path.join(os.path.dirname(python_dir), "VERSION")
    if os.path.isfile(os.path.join(python_dir, "pyproject.toml")) and os.path.isfile(version_file):
        with open(version_file, encoding="utf-8") as f:
            return f.read().strip()
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("gravplug")
    except PackageNotFoundError:
        return "unknown"


__version__ = _version()


def where():
    """A dict saying which libgravplug.so is used and where plugins are looked for."""
    return {"library": library_path(), "plugin_search_path": search_path(),
            "plugins": dict(list_plugins())}


__all__ = ["Solver", "Outputs", "Gravity", "Particles", "ParamInfo", "Stats", "ic",
           "describe_params", "integrators", "integrator_flags", "integrator_params", "list_plugins",
           "search_path", "status_name", "where", "Capability", "ParamType", "Status",
           "GravplugError", "InvalidArgumentError", "BadStateError", "OutOfMemoryError",
           "DeviceError", "UnsupportedError", "UnknownParameterError", "AbiMismatchError",
           "InternalError", "PluginNotFoundError", "LibraryNotFoundError"]
