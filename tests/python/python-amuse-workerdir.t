#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The AMUSE code's shared worker folder (the fork server's launcher and
socket, AMUSE's worker scripts) is used only when this user alone can
change it: gravplug.amuse.forkserver.private_dir refuses a link, a file,
a folder open to others and, as root, a folder of another user. Loads
forkserver.py by path (standard library only): no AMUSE needed."""
import importlib.util
import os
import tempfile

import pyprelude  # noqa: F401  (python/ on the path)

from gravplug._tap import Tap

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "forkserver", os.path.join(here, "..", "..", "python", "gravplug", "amuse", "forkserver.py"))
fs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fs)

t = Tap()
with tempfile.TemporaryDirectory() as top:
    fresh = os.path.join(top, "fresh")
    got, why = fs.private_dir(fresh)
    t.ok(got == fresh and why is None and (os.stat(fresh).st_mode & 0o777) == 0o700,
         "an absent folder is made 0700 and used")
    got, why = fs.private_dir(fresh)
    t.ok(got == fresh, "the same folder again: used")

    target = os.path.join(top, "target")
    os.mkdir(target, 0o700)
    link = os.path.join(top, "link")
    os.symlink(target, link)
    got, why = fs.private_dir(link)
    t.ok(got is None and "not a directory" in why, f"a symlink in its place: refused ({why})")

    plain = os.path.join(top, "plain")
    open(plain, "w").close()
    got, why = fs.private_dir(plain)
    t.ok(got is None and "not a directory" in why, "a file in its place: refused")

    shared = os.path.join(top, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o777)
    got, why = fs.private_dir(shared)
    t.ok(got is None and "written by other users" in why, f"a folder others can write: refused ({why})")

    if os.getuid() == 0:
        theirs = os.path.join(top, "theirs")
        os.mkdir(theirs, 0o700)
        os.chown(theirs, 65534, 65534)
        got, why = fs.private_dir(theirs)
        t.ok(got is None and "belongs to uid 65534" in why, f"another user's folder: refused ({why})")
    else:
        t.skip(1, "another user's folder needs root to make one (chown)")
t.done_testing()
