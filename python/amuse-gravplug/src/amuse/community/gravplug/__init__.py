# SPDX-License-Identifier: Apache-2.0
"""gravplug as an AMUSE community code, under AMUSE's import path:

    from amuse.community.gravplug.interface import Gravplug

as amuse-bhtree gives amuse.community.bhtree. The code is gravplug.amuse
(the gravplug distribution); this package (the amuse-gravplug distribution)
re-exports it, so both import paths give the same classes."""
from .interface import Gravplug, GravplugInterface

__all__ = ["Gravplug", "GravplugInterface"]
