# SPDX-License-Identifier: Apache-2.0
"""Finding and loading libgravplug.so, the host library.

The Python code is ctypes over libgravplug.so (the plugin loader, the
integrators, the initial conditions). `pip install ./python` builds the
library and the plugins and puts them inside the package (gravplug/lib/,
python/setup.py); the library is looked for, first hit wins:

  1. $GRAVPLUG_LIB           the library file itself, or a folder holding it
  2. $GRAVPLUG_BUILD/lib     a build tree named explicitly
  3. the copy inside the package (gravplug/lib/libgravplug.so), which an
     installed wheel carries with its plugins beside it
  4. the build tree this package sits in (<repo>/python/gravplug ->
     <repo>/build/lib), for use from a checkout without installing
  5. the install prefix this package sits in (<prefix>/lib/pythonX.Y/
     site-packages/gravplug -> <prefix>/lib)
  6. `pkg-config --variable=libdir gravplug`, if a gravplug.pc is installed
  7. /usr/local/lib, /usr/lib, then the dynamic linker's own search
     (LD_LIBRARY_PATH, ld.so.cache)

`library_candidates()` lists them in that order; `gravplug.where()` reports
what was chosen. Plugins are then found by libgravplug.so's own loader
(GRAVPLUG_PATH, the gravplug/ folder next to the library, the build tree
it was built in, the install prefix).
"""
import ctypes
import ctypes.util
import os
import shutil
import subprocess
import threading
from pathlib import Path

from .errors import LibraryNotFoundError

LIBNAME = "libgravplug.so"
_PKG_DIR = Path(__file__).resolve().parent

_lock = threading.Lock()
_lib = None
_lib_path = None


def _pkg_config_libdir():
    exe = shutil.which("pkg-config")
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--variable=libdir", "gravplug"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    return Path(out.stdout.strip())


def _as_library(p):
    p = Path(p)
    return p / LIBNAME if p.is_dir() else p


def library_candidates():
    """(label, path) pairs in search order; paths may not exist."""
    cands = []
    env = os.environ.get("GRAVPLUG_LIB")
    if env:
        cands.append(("GRAVPLUG_LIB", _as_library(env)))
    env = os.environ.get("GRAVPLUG_BUILD")
    if env:
        cands.append(("GRAVPLUG_BUILD", Path(env) / "lib" / LIBNAME))
    # the wheel's own native code matches its Python code: it comes first
    cands.append(("package copy", _PKG_DIR / "lib" / LIBNAME))
    repo = _PKG_DIR.parent.parent          # <repo>/python/gravplug
    if (repo / "abi" / "gravplug.h").is_file():
        cands.append(("build tree", repo / "build" / "lib" / LIBNAME))
    if len(_PKG_DIR.parents) > 3:
        cands.append(("install prefix", _PKG_DIR.parents[2] / LIBNAME))
    pc = _pkg_config_libdir()
    if pc:
        cands.append(("pkg-config", pc / LIBNAME))
    cands.append(("/usr/local/lib", Path("/usr/local/lib") / LIBNAME))
    cands.append(("/usr/lib", Path("/usr/lib") / LIBNAME))
    return cands


def build_dir_of(lib_path):
    """The build folder a library was found in (<build>/lib/libgravplug.so),
    or None if it does not look like a build tree."""
    p = Path(lib_path).resolve()
    if p.parent.name == "lib" and (p.parent.parent / "plugins").is_dir():
        return p.parent.parent
    return None


def load_library():
    """The loaded libgravplug.so (cached); raises LibraryNotFoundError."""
    global _lib, _lib_path
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        explicit = os.environ.get("GRAVPLUG_LIB")
        for label, path in library_candidates():
            if not path.is_file():
                tried.append(f"{path} ({label}: absent)")
                if label == "GRAVPLUG_LIB":
                    raise LibraryNotFoundError(
                        f"GRAVPLUG_LIB={explicit} does not name {LIBNAME} or a "
                        f"folder holding it; fix or unset GRAVPLUG_LIB",
                        None, "gravplug")
                continue
            try:
                _lib = ctypes.CDLL(str(path))
            except OSError as exc:
                tried.append(f"{path} ({label}: {exc})")
                continue
            _lib_path = str(path)
            return _lib
        found = ctypes.util.find_library("gravplug")
        if found:
            try:
                _lib = ctypes.CDLL(found)
                _lib_path = found
                return _lib
            except OSError as exc:
                tried.append(f"{found} (dynamic linker: {exc})")
        raise LibraryNotFoundError(
            f"cannot find {LIBNAME}; build it with `make` in the gravplug "
            f"checkout, or point GRAVPLUG_LIB at it (or GRAVPLUG_BUILD at the "
            f"build folder). Tried: " + "; ".join(tried), None, "gravplug")


def library_path():
    """Path of the loaded libgravplug.so (loads it if needed)."""
    load_library()
    return _lib_path
