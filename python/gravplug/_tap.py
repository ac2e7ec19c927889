# SPDX-License-Identifier: Apache-2.0
"""A tiny TAP producer for the Python tests (tests/python/python-*.t), in the
spirit of tests/tap.h: ok, is_num (relative tolerance), raises, skip,
skip_all, diag, done_testing, and stop_unless for a file's first steps.
Not part of the public API."""
import contextlib
import math
import os
import sys
import traceback


def reexec_under_amuse(script):
    """For the AMUSE tests: returns if AMUSE (with mpi4py) imports here;
    otherwise re-runs `script` under the venv's Python that
    .ci/install-amuse builds ($GRAVPLUG_AMUSE_VENV, default
    ~/.local/share/gravplug/amuse-venv; GRAVPLUG_AMUSE_PYTHON overrides
    it), or skips the whole file with the reason."""
    try:
        import numpy  # noqa: F401
        import amuse  # noqa: F401
        from amuse.rfi import python_code  # noqa: F401  (needs mpi4py)
        return
    except ImportError as exc:
        reason = exc
    venv = os.environ.get("GRAVPLUG_AMUSE_VENV",
                          os.path.expanduser("~/.local/share/gravplug/amuse-venv"))
    default = os.path.join(venv, "bin", "python")
    alt = os.environ.get("GRAVPLUG_AMUSE_PYTHON") or (default if os.path.exists(default) else None)
    if alt and os.path.abspath(alt) != os.path.abspath(sys.executable) \
            and not os.environ.get("GRAVPLUG_AMUSE_REEXEC"):
        os.environ["GRAVPLUG_AMUSE_REEXEC"] = "1"
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        os.environ["PYTHONPATH"] = os.pathsep.join(
            [here] + [p for p in [os.environ.get("PYTHONPATH")] if p])
        # the venv's mpich (mpiexec) before any system MPI: AMUSE's C workers need it
        os.environ["PATH"] = os.pathsep.join([os.path.dirname(alt), os.environ.get("PATH", "")])
        os.execv(alt, [alt, str(script)])
    Tap.skip_all(f"AMUSE not usable here ({reason}); set GRAVPLUG_AMUSE_PYTHON "
                 f"to a Python with amuse-framework and mpi4py, or run .ci/install-amuse")


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def diag(self, msg):
        for line in str(msg).splitlines() or [""]:
            print(f"# {line}")
        sys.stdout.flush()

    def ok(self, cond, name, *details):
        self.n += 1
        cond = bool(cond)
        if not cond:
            self.failed += 1
        print(f"{'' if cond else 'not '}ok {self.n} - {name}")
        if not cond:
            for d in details:
                self.diag(d)
        sys.stdout.flush()
        return cond

    def is_num(self, got, want, rel, name):
        got, want = float(got), float(want)
        err = abs(got - want) / abs(want) if want != 0 else abs(got)
        return self.ok(math.isfinite(got) and err <= rel, name,
                       f"got {got!r}, wanted {want!r} (rel. tol. {rel:g}, error {err:.3g})")

    def raises(self, exc_types, fn, name, check=None):
        """ok if fn() raises one of exc_types (and check(e) holds); returns e."""
        try:
            fn()
        except exc_types as e:
            good = check(e) if check else True
            self.ok(good, name, f"raised {type(e).__name__}: {e}")
            return e
        except Exception as e:  # noqa: BLE001 — reported as a failure
            self.ok(False, name, f"raised {type(e).__name__} instead: {e}",
                    traceback.format_exc())
            return e
        self.ok(False, name, f"no exception; wanted {exc_types}")
        return None

    def skip(self, count, why):
        for _ in range(count):
            self.n += 1
            print(f"ok {self.n} # skip {why}")

    @staticmethod
    def skip_all(why):
        print(f"1..0 # SKIP {why}")
        sys.stdout.flush()
        sys.exit(0)

    def bail(self, why):
        print(f"Bail out! {why}")
        sys.exit(255)

    @contextlib.contextmanager
    def stop_unless(self, name):
        """A block the rest of the file needs (its imports, finding the
        library): if it raises, one failed test `name` with the reason, and
        the file ends there."""
        try:
            yield
        except Exception as e:  # noqa: BLE001 — reported as a failure
            self.ok(False, name, f"{type(e).__name__}: {e}")
            self.done_testing()

    def done_testing(self):
        print(f"1..{self.n}")
        sys.stdout.flush()
        sys.exit(1 if self.failed else 0)
