# SPDX-License-Identifier: Apache-2.0
"""pyprelude — how every tests/python/python-*.t starts: the gravplug package from
python/ beside tests/ (nothing needs installing), and a skip of the whole
file, with the reason, where numpy is missing. Imported for its effect;
REPO is the checkout's root."""
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
try:
    import numpy  # noqa: F401
except ImportError:
    print("1..0 # SKIP numpy is not installed (pip install numpy)")
    sys.exit(0)
