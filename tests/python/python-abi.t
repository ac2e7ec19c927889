#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The ctypes mirror of the C headers (python/gravplug/_abi.py, ic.py) has
the C layout: every struct's size and every member's offset, the status
codes and capability bits, checked against a C program compiled here from
abi/gravplug.h and host_stub/ic/ic.h (gp_ic: host_stub/particles/particle_set.h)."""
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from pyprelude import REPO  # noqa: E402  (python/ on the path; skips without numpy)

import ctypes  # noqa: E402

from gravplug import _abi  # noqa: E402
from gravplug import ic as gic  # noqa: E402
from gravplug._tap import Tap  # noqa: E402

# CC may carry a launcher or flags ("ccache gcc")
cc = shlex.split(os.environ.get("CC") or "") or [shutil.which("cc") or shutil.which("gcc")]
if not cc[0]:
    Tap.skip_all("no C compiler to compile the layout probe")

STRUCTS = {  # C type name: its ctypes mirror
    "gp_api": _abi.GpApi, "gp_init_args": _abi.GpInitArgs,
    "gp_param_info": _abi.GpParamInfo, "gp_stats": _abi.GpStats,
    "gp_param": _abi.GpParam, "gp_outputs": _abi.GpOutputs, "gp_ic": gic._GpIc, "gp_ic_opts": gic._GpIcOpts,
    "gp_ic_opt_info": gic._GpIcOptInfo,
}
lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "gravplug.h"',
         '#include "ic.h"', 'int main(void) {']
for cname, cls in STRUCTS.items():
    lines.append(f'printf("size {cname} %zu\\n", sizeof({cname}));')
    for field, _ in cls._fields_:
        lines.append(f'printf("off {cname}.{field} %zu\\n", offsetof({cname}, {field}));')
for st in _abi.Status:
    lines.append(f'printf("enum {st.c_name} %d\\n", (int){st.c_name});')
for cap in _abi.Capability:
    lines.append(f'printf("cap GP_CAP_{cap.name} %llu\\n", (unsigned long long)GP_CAP_{cap.name});')
lines += ['printf("major %d\\n", GRAVPLUG_ABI_MAJOR);', 'printf("minor %d\\n", GRAVPLUG_ABI_MINOR);',
          'printf("size1.0 %zu\\n", offsetof(gp_api, set_state));', 'return 0; }']

t = Tap()
with tempfile.TemporaryDirectory() as tmp:
    src, exe = os.path.join(tmp, "probe.c"), os.path.join(tmp, "probe")
    Path(src).write_text("\n".join(lines) + "\n")
    r = subprocess.run(cc + ["-std=c11", f"-I{REPO / 'abi'}", f"-I{REPO / 'host_stub' / 'ic'}",
                        f"-I{REPO / 'host_stub' / 'particles'}", src, "-o", exe],
                       capture_output=True, text=True)
    if not t.ok(r.returncode == 0, "the layout probe compiles", r.stderr[-2000:]):
        t.done_testing()
    got = dict(line.rsplit(" ", 1) for line in
               subprocess.run([exe], capture_output=True, text=True, check=True).stdout.splitlines())

for cname, cls in STRUCTS.items():
    bad = [f"{f}: C {got[f'off {cname}.{f}']}, ctypes {getattr(cls, f).offset}"
           for f, _ in cls._fields_ if int(got[f"off {cname}.{f}"]) != getattr(cls, f).offset]
    t.ok(not bad and int(got[f"size {cname}"]) == ctypes.sizeof(cls),
         f"{cname}: size {ctypes.sizeof(cls)} and {len(cls._fields_)} member offsets match C",
         f"C size {got[f'size {cname}']}", *bad)
t.ok(all(int(got[f"enum {st.c_name}"]) == int(st) for st in _abi.Status),
     "gp_status values match")
t.ok(all(int(got[f"cap GP_CAP_{c.name}"]) == int(c) for c in _abi.Capability),
     "GP_CAP_* bits match")
t.ok(int(got["major"]) == _abi.ABI_MAJOR, "GRAVPLUG_ABI_MAJOR matches")
t.ok(int(got["minor"]) == _abi.ABI_MINOR, "GRAVPLUG_ABI_MINOR matches")
t.ok(int(got["size1.0"]) == _abi.API_SIZE_1_0,
     "API_SIZE_1_0 is the 1.0 table (up to set_state), the smallest table accepted")
t.done_testing()
