# SPDX-License-Identifier: Apache-2.0
"""Opening a plugin: by short name through libgravplug.so's loader, or by
path. Returns a PluginHandle holding the gp_api table; the .so stays
loaded for the life of the process (plugins are small, and a table that
outlives its library would be a crash waiting to happen)."""
import ctypes
import os
import threading

from . import _abi
from .errors import AbiMismatchError, PluginNotFoundError

_lock = threading.Lock()
_cache = {}


class PluginHandle:
    def __init__(self, api_ptr, path, keepalive):
        api = api_ptr.contents
        if api.abi_major != _abi.ABI_MAJOR:
            raise AbiMismatchError(
                f"plugin {path} speaks ABI {api.abi_major}.{api.abi_minor}; this "
                f"package speaks {_abi.ABI_MAJOR}.{_abi.ABI_MINOR}", None, "gravplug")
        if api.struct_size < _abi.API_SIZE_1_0:
            raise AbiMismatchError(
                f"plugin {path} has a gp_api table of {api.struct_size} bytes, "
                f"smaller than the {_abi.API_SIZE_1_0} of ABI 1.0; rebuild the "
                f"plugin against abi/gravplug.h", None, "gravplug")
        # as libgravplug's loader does (abi/gravplug_loader.c): the 1.0
        # members are called without asking, so none may be NULL
        for member in _abi.REQUIRED_1_0:
            if not getattr(api, member):
                raise AbiMismatchError(
                    f"plugin {path} leaves the member {member} of its gp_api table NULL, and every "
                    f"ABI {_abi.ABI_MAJOR}.0 member must be filled; fix the plugin's table or rebuild "
                    f"it against abi/gravplug.h", None, "gravplug")
        self.api = api
        self.path = path
        self._keepalive = keepalive

    @property
    def name(self):
        return self.api.name.decode()


def _looks_like_path(spec):
    return os.sep in spec or spec.endswith(".so")


def _open_path(path):
    """dlopen(path, RTLD_NOW | RTLD_LOCAL) and gravplug_entry(1)."""
    if not os.path.isfile(path):
        raise PluginNotFoundError(f"no plugin file at {path}", None, "gravplug")
    # as libgravplug's loader does (docs/TRUST.md): loading runs the code
    real = os.path.realpath(path)
    st = os.stat(real)
    why = None
    if st.st_mode & 0o002:
        why = f"{real} is writable by every user"
    elif st.st_uid not in (0, os.geteuid()):
        why = f"{real} belongs to user id {st.st_uid}, neither you nor root"
    d, own = os.path.dirname(real), True
    while why is None:
        mode = os.stat(d).st_mode
        if mode & 0o002 and (own or not mode & 0o1000):
            why = (f"its directory {d} is writable by every user" if own else
                   f"the directory {d} above it is writable by every user without the sticky bit")
        if d == os.path.dirname(d):
            break
        d, own = os.path.dirname(d), False
    if why:
        raise PluginNotFoundError(
            f"refusing to load plugin {path}: {why}; keep plugins in a directory only you (or root) "
            "can write, e.g. chmod o-w", None, "gravplug")
    try:
        lib = ctypes.CDLL(os.path.abspath(path), mode=os.RTLD_NOW | os.RTLD_LOCAL)
    except OSError as exc:
        raise PluginNotFoundError(f"cannot load {path}: {exc}", None, "gravplug") from None
    try:
        entry = _abi.EntryFn((_abi.ENTRY_SYMBOL, lib))
    except AttributeError:
        raise PluginNotFoundError(
            f"{path} is not a gravplug plugin (no {_abi.ENTRY_SYMBOL} symbol)",
            None, "gravplug") from None
    api = entry(_abi.ABI_MAJOR)
    if not api:
        raise AbiMismatchError(f"{path} does not speak gravplug ABI major "
                               f"{_abi.ABI_MAJOR}", None, "gravplug")
    return PluginHandle(api, os.path.abspath(path), lib)


def open_plugin(spec):
    """A PluginHandle for a short name ("cpu-tree") or a path (cached).

    Both go through libgravplug.so's loader. Only when libgravplug.so
    cannot be found at all is a path opened directly (dlopen RTLD_LOCAL +
    gravplug_entry), so a bare plugin file stays usable; short names need
    the library's search."""
    if isinstance(spec, PluginHandle):
        return spec
    spec = os.fspath(spec)
    with _lock:
        h = _cache.get(spec)
        if h is None:
            from . import _loader
            from .errors import LibraryNotFoundError
            try:
                h = _loader.open_plugin(spec, PluginHandle)
            except LibraryNotFoundError:
                if not _looks_like_path(spec):
                    raise
                h = _open_path(spec)
            _cache[spec] = h
        return h
