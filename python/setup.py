# SPDX-License-Identifier: Apache-2.0
"""The native half of the gravplug wheel.

Everything about the package is declared in pyproject.toml; this file only
adds one step to setuptools' build: the project's own Makefile builds
libgravplug and the plugins (`make python-native`: the host library, the
CPU plugins, and the CUDA plugins when nvcc is found), and the files are
copied into the package:

    gravplug/lib/libgravplug.so              the host library
    gravplug/lib/gravplug/gravplug-NAME.so   the plugins, where the
                                             library's loader looks first

so `pip install ./python` gives a package that works with nothing else
installed (the system's GSL, HDF5 and OpenMP runtime aside). The sources
are the checkout this folder sits in, so the wheel is built from a checkout
(an sdist of python/ alone has no C sources to build).

Environment:
  GRAVPLUG_PYTHON_ONLY=1  no native build: the pure-Python package, which
                          then finds an installed libgravplug (docs/PYTHON.md)
  GRAVPLUG_MAKE_BUILD=DIR the make build folder (default: one under the
                          setuptools build folder); naming an existing build
                          tree reuses what it already built
  MAKE                    the make program (default: make)
"""
import os
import shlex
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _python_only():
    return os.environ.get("GRAVPLUG_PYTHON_ONLY", "") not in ("", "0")


class NativeDistribution(Distribution):
    """Marks the wheel as platform-specific: it carries machine code."""

    def has_ext_modules(self):
        return not _python_only()


class BuildPyWithNative(build_py):
    """build_py, then `make python-native`, then the files into gravplug/lib."""

    def run(self):
        super().run()
        if _python_only():
            return
        if not (ROOT / "Makefile").is_file() or not (ROOT / "abi" / "gravplug.h").is_file():
            raise SystemExit(
                f"gravplug: the C sources are not beside {HERE} (no {ROOT / 'Makefile'}); build the "
                "wheel from a gravplug checkout, or set GRAVPLUG_PYTHON_ONLY=1 for the pure-Python "
                "package that uses an installed libgravplug")
        build_dir = os.environ.get("GRAVPLUG_MAKE_BUILD") or str(
            Path(self.get_finalized_command("build").build_temp).resolve() / "native")
        make = shlex.split(os.environ.get("MAKE", "make"))
        jobs = os.environ.get("GRAVPLUG_MAKE_JOBS") or str(min(os.cpu_count() or 1, 8))
        cmd = make + ["-C", str(ROOT), f"-j{jobs}", f"BUILD={build_dir}", "python-native"]
        print("gravplug: building the native code:", shlex.join(cmd), flush=True)
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
        print(proc.stdout, end="", flush=True)
        if proc.returncode != 0:
            raise SystemExit(f"gravplug: `{shlex.join(cmd)}` failed (exit {proc.returncode}); "
                             "the compiler's messages are above (pip install -v shows them)")
        files = next((line.split()[1:] for line in reversed(proc.stdout.splitlines())
                      if line.startswith("gravplug-native:")), None)
        if not files:
            raise SystemExit("gravplug: `make python-native` did not name the files it built")
        lib_dir = Path(self.build_lib) / "gravplug" / "lib"
        plugin_dir = lib_dir / "gravplug"
        plugin_dir.mkdir(parents=True, exist_ok=True)
        library, plugins = files[0], files[1:]
        # A wheel holds no symlinks: the library goes in under the name the
        # package loads it by; the plugins do not link against it.
        shutil.copyfile(library, lib_dir / "libgravplug.so")
        for p in plugins:
            shutil.copyfile(p, plugin_dir / Path(p).name)
        for f in [lib_dir / "libgravplug.so"] + [plugin_dir / Path(p).name for p in plugins]:
            f.chmod(0o755)
        print(f"gravplug: bundled {Path(library).name} and {len(plugins)} plugins "
              f"({', '.join(Path(p).name for p in plugins)})", flush=True)


setup(distclass=NativeDistribution, cmdclass={"build_py": BuildPyWithNative})
