# SPDX-License-Identifier: Apache-2.0
"""Opening a plugin: by short name through libgravplug.so's loader, or by
path. Returns a PluginHandle holding the gp_api table; the .so stays
loaded for the life of the process (plugins are small, and a table that
outlives its library would be a crash waiting to happen)."""
import ctypes
import itertools
import os
import stat
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


_loads = itertools.count(1)


def _fd_name(fd):
    """A name for descriptor fd that dlopen has never seen (it answers a
    known name with the object it has, and plugins stay loaded after their
    descriptor number is reused): the load's serial in binary as "/." and
    "/../fd" steps, under /proc/self/./fd, which libgravplug's own names
    (under /proc/self/fd) never spell."""
    k, steps = next(_loads), []
    while k:
        steps.append("/../fd" if k & 1 else "/.")
        k >>= 1
    return "/proc/self/./fd" + "".join(steps) + f"/{fd}"


def _untrusted(real, st):
    """Why docs/TRUST.md refuses the file st (at real path real), or None."""
    if not stat.S_ISREG(st.st_mode):
        return f"{real} is not a regular file"
    if st.st_mode & 0o002:
        return f"{real} is writable by every user"
    if st.st_uid not in (0, os.geteuid()):
        return f"{real} belongs to user id {st.st_uid}, neither you nor root"
    d, own = os.path.dirname(real), True
    while True:
        mode = os.stat(d).st_mode
        if mode & 0o002 and (own or not mode & stat.S_ISVTX):
            return (f"its directory {d} is writable by every user" if own else
                    f"the directory {d} above it is writable by every user without the sticky bit")
        if d == os.path.dirname(d):
            return None
        d, own = os.path.dirname(d), False


def _open_path(path):
    """As libgravplug's loader does (docs/TRUST.md): open the file once,
    check that descriptor and every directory above it, dlopen the same
    descriptor (RTLD_NOW | RTLD_LOCAL), then gravplug_entry(1)."""
    if not os.path.isfile(path):
        raise PluginNotFoundError(f"no plugin file at {path}", None, "gravplug")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as exc:
        raise PluginNotFoundError(f"cannot open plugin {path}: {exc.strerror}", None, "gravplug") from None
    try:
        try:
            real = os.readlink(f"/proc/self/fd/{fd}")
        except OSError as exc:
            raise PluginNotFoundError(f"refusing to load plugin {path}: /proc/self/fd/{fd} cannot be read "
                                      f"({exc.strerror}); mount /proc", None, "gravplug") from None
        why = _untrusted(real, os.fstat(fd))
        if why:
            raise PluginNotFoundError(
                f"refusing to load plugin {path}: {why}; keep plugins in a directory only you (or root) "
                "can write, e.g. chmod o-w", None, "gravplug")
        try:
            lib = ctypes.CDLL(_fd_name(fd), mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as exc:
            raise PluginNotFoundError(f"cannot load {path}: {exc}", None, "gravplug") from None
    finally:
        os.close(fd)
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
