# SPDX-License-Identifier: Apache-2.0
"""Binding of libgravplug.so's plugin loader (abi/gravplug_loader.h):
gp_plugin_open / gp_plugin_api / gp_plugin_path / gp_plugin_list /
gp_plugin_search_path / gp_status_name. The search for a short name is the
loader's, not re-implemented here: GRAVPLUG_PATH, LIBDIR/gravplug, the
build tree libgravplug.so was built in, $(PREFIX)/lib/gravplug."""
import ctypes
from ctypes import CFUNCTYPE, POINTER, c_char_p, c_int, c_size_t, c_void_p

from . import _abi
from ._lib import load_library
from .errors import PluginNotFoundError, error_for

_bound = None

VisitFn = CFUNCTYPE(c_int, c_char_p, c_char_p, c_void_p)


def _bind():
    global _bound
    if _bound is not None:
        return _bound
    lib = load_library()
    lib.gp_plugin_open.argtypes = [c_char_p, POINTER(c_void_p), c_char_p, c_size_t]
    lib.gp_plugin_open.restype = c_int
    lib.gp_plugin_api.argtypes = [c_void_p]
    lib.gp_plugin_api.restype = POINTER(_abi.GpApi)
    lib.gp_plugin_path.argtypes = [c_void_p]
    lib.gp_plugin_path.restype = c_char_p
    lib.gp_plugin_close.argtypes = [c_void_p]
    lib.gp_plugin_close.restype = None
    lib.gp_plugin_list.argtypes = [VisitFn, c_void_p]
    lib.gp_plugin_list.restype = c_size_t
    lib.gp_plugin_search_path.argtypes = [c_char_p, c_size_t]
    lib.gp_plugin_search_path.restype = c_size_t
    lib.gp_status_name.argtypes = [c_int]
    lib.gp_status_name.restype = c_char_p
    _bound = lib
    return lib


def open_plugin(spec, make_handle):
    """Opens by short name or path; the handle is never closed (see
    _plugin.py), so the gp_api table stays valid for the process."""
    lib = _bind()
    handle = c_void_p()
    err = ctypes.create_string_buffer(1024)
    st = lib.gp_plugin_open(spec.encode(), ctypes.byref(handle), err, len(err))
    if st != 0:
        sentence = err.value.decode("utf-8", "replace")
        if st == _abi.Status.INVALID_ARGUMENT:
            raise PluginNotFoundError(sentence, st, "gravplug")
        raise error_for(st, sentence, "gravplug")
    path = lib.gp_plugin_path(handle).decode()
    return make_handle(lib.gp_plugin_api(handle), path, (lib, handle))


def list_plugins():
    """[(short_name, path)] of every gravplug-*.so on the search path, in
    search order (files are not opened)."""
    lib = _bind()
    found = []

    def visit(path, short, user):
        found.append((short.decode(), path.decode()))
        return 0
    cb = VisitFn(visit)
    lib.gp_plugin_list(cb, None)
    return found


def search_path():
    """The directories searched for short names, in order."""
    lib = _bind()
    need = lib.gp_plugin_search_path(None, 0)
    buf = ctypes.create_string_buffer(need + 1)
    lib.gp_plugin_search_path(buf, len(buf))
    return [d for d in buf.value.decode().split(":") if d]


def status_name(code):
    return _bind().gp_status_name(int(code)).decode()
