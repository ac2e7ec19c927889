# SPDX-License-Identifier: Apache-2.0
"""Exceptions: one GravplugError subclass per gp_status.

Every exception raised from a failed C call carries the plugin's own
sentence (``.sentence``), the status as a ``Status`` enum (``.status``),
its C name (``.status_name``, e.g. ``"GP_ERR_BAD_STATE"``) and its code
(``.code``). Where a Python built-in fits, the subclass also derives from it,
so ``except ValueError`` catches a bad value whether Python or the plugin
noticed it first.
"""
from ._abi import Status


class GravplugError(Exception):
    """A gravplug call failed; ``str(e)`` is the plugin's sentence plus status."""
    status = Status.INTERNAL

    def __new__(cls, *args, **kwargs):
        # Our arguments are not the built-in's: OSError's would read them as
        # (errno, strerror, filename). And the constructor must be the one
        # the instance's layout comes from: OSError's for the OSError family,
        # the plain exception's for the rest (MemoryError's own refuses a
        # class that also derives from another exception: "not safe").
        return (OSError if issubclass(cls, OSError) else Exception).__new__(cls)

    def __init__(self, sentence, status=None, where=None):
        if status is not None:
            self.status = Status(status)
        self.sentence = sentence or "(the plugin gave no sentence)"
        self.where = where
        # The sentence already names the plugin and the call; `where` (the
        # call that failed) is kept as an attribute, not repeated.
        self._message = f"{self.sentence} [{self.status_name} ({self.code})]"
        super().__init__(self._message)

    def __str__(self):
        # OSError-derived subclasses would otherwise format their own way.
        return self._message

    @property
    def code(self):
        return int(self.status)

    @property
    def status_name(self):
        return self.status.c_name


class InvalidArgumentError(GravplugError, ValueError):
    status = Status.INVALID_ARGUMENT


class BadStateError(GravplugError, RuntimeError):
    status = Status.BAD_STATE


class OutOfMemoryError(GravplugError, MemoryError):
    status = Status.OUT_OF_MEMORY


class DeviceError(GravplugError, RuntimeError):
    status = Status.DEVICE


class UnsupportedError(GravplugError, NotImplementedError):
    status = Status.UNSUPPORTED


class UnknownParameterError(GravplugError, LookupError):
    status = Status.UNKNOWN_PARAMETER


class AbiMismatchError(GravplugError, RuntimeError):
    status = Status.ABI_MISMATCH


class InternalError(GravplugError, RuntimeError):
    status = Status.INTERNAL


class PluginNotFoundError(GravplugError, FileNotFoundError):
    """No plugin of that name or path; ``.status`` is what the loader said."""
    status = Status.INVALID_ARGUMENT


class LibraryNotFoundError(GravplugError, OSError):
    """libgravplug.so (the host library) could not be found or loaded."""
    status = Status.INVALID_ARGUMENT


_BY_STATUS = {cls.status: cls for cls in (
    InvalidArgumentError, BadStateError, OutOfMemoryError, DeviceError,
    UnsupportedError, UnknownParameterError, AbiMismatchError, InternalError)}


def error_for(status, sentence, where=None):
    """The exception object for a failed call that returned ``status``."""
    try:
        st = Status(status)
    except ValueError:
        return InternalError(f"{sentence} (unknown status code {status})",
                             Status.INTERNAL, where)
    cls = _BY_STATUS.get(st, GravplugError)
    return cls(sentence, st, where)
