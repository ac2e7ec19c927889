# SPDX-License-Identifier: Apache-2.0
"""The interface module of an AMUSE community code: the legacy interface
class (GravplugInterface) and the high-level class (Gravplug), as
amuse.community.bhtree.interface holds BHTreeInterface and BHTree.

Both are gravplug.amuse's own classes, re-exported, not copies: one
implementation, which lives in the gravplug distribution (the worker
process imports it from there too). docs/PYTHON.md describes the code."""
from gravplug.amuse import Gravplug, GravplugInterface

__all__ = ["Gravplug", "GravplugInterface"]
