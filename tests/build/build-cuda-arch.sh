#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The CUDA plugins are built for the GPUs people have: by default machine
# code for sm_70, 75, 80, 86, 89 and 90 (those this nvcc can build) and
# compute_90 PTX for newer GPUs; CUDA_ARCHS narrows the list. The built
# plugins are read back (their .nv_fatbin section) to see what they carry.
# (generated from tests/build/build-cuda-arch.sh by tests/build/module.mk)
unset MFLAGS MAKELEVEL
root="@ROOT@"
build="@BUILD@"
# the outer make's overrides (CUDA_ARCH=...) stay; its jobserver does not
MAKEFLAGS=$(printf '%s' "${MAKEFLAGS:-}" | sed -E 's/--jobserver-(auth|fds)=[^ ]*//g; s/(^| )-j[0-9]*( |$)/ /g')
export MAKEFLAGS
mk() { @MAKE@ -s --no-print-directory -C "$root" BUILD="$build" "$@"; }
flags=$(mk cuda-arch 2>/dev/null | tail -1)
plugins=$(ls "$build"/plugins/gravplug-cuda-*.so 2>/dev/null)
if [ -z "$flags" ] || [ -z "$plugins" ]; then
    echo "1..0 # SKIP no nvcc here: the CUDA plugins are not built"; exit 0
fi
for tool in python3 objdump; do
    command -v $tool >/dev/null 2>&1 || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done
nvcc=$(mk --eval 'gp-print-nvcc: ; @echo $(NVCC)' gp-print-nvcc 2>/dev/null | tail -1)
listed=$("${nvcc:-nvcc}" --list-gpu-arch 2>/dev/null | sed -n 's/^compute_//p' | tr '\n' ' ')
echo 1..4
fail=0
# archs FLAGS: "sm_A ... ptx_B ..." for nvcc -gencode flags
archs() { printf '%s\n' "$1" | grep -o 'code=[a-z]*_[0-9]*' | sed 's/code=compute_/ptx_/; s/code=//' | sort -u | tr '\n' ' '; }
want=
for a in 70 75 80 86 89 90; do
    case " $listed " in *" $a "*) want="$want sm_$a" ;; esac
done
[ -n "$listed" ] || want=" sm_70 sm_75 sm_80 sm_86 sm_89 sm_90"
want=$(printf '%s\n' $want ptx_90 | sort -u | tr '\n' ' ')
default=$(archs "$(env -u MAKEFLAGS @MAKE@ -s --no-print-directory -C "$root" BUILD="$build" cuda-arch 2>/dev/null | tail -1)")
if [ "$default" = "$want" ]; then
    echo "ok 1 - the default architectures: $default"
else
    echo "not ok 1 - the default architectures are \"$default\", want \"$want\" (nvcc lists $listed)"; fail=1
fi
# What each built plugin carries: fatbin entries of kind 1 (PTX) and 2
# (ELF machine code), each with its architecture.
built=$(python3 - $plugins <<'PY'
import struct, subprocess, sys
def section(path, name):
    for line in subprocess.run(["objdump", "-h", path], capture_output=True, text=True).stdout.splitlines():
        f = line.split()
        if len(f) >= 6 and f[1] == name:
            with open(path, "rb") as fh:
                fh.seek(int(f[5], 16))
                return fh.read(int(f[2], 16))
    return b""
for path in sys.argv[1:]:
    data, pos, found = section(path, ".nv_fatbin"), 0, set()
    while pos + 16 <= len(data):
        magic, _, hsize, size = struct.unpack_from("<IHHQ", data, pos)
        if magic != 0xBA55ED50:
            pos += 8
            continue
        p, end = pos + hsize, pos + hsize + size
        while p + 32 <= end:
            kind, _, ehsize, esize = struct.unpack_from("<HHIQ", data, p)
            arch = struct.unpack_from("<I", data, p + 28)[0]
            found.add(("ptx_" if kind == 1 else "sm_") + str(arch))
            p += ehsize + esize
        pos = end
    print(path.rsplit("/", 1)[-1], " ".join(sorted(found)) + " ")
PY
)
expect=$(archs "$flags")
bad=$(printf '%s\n' "$built" | while read -r name got; do [ "$got " = "$expect" ] || echo "$name carries \"$got\""; done)
if [ -z "$bad" ] && [ -n "$built" ]; then
    echo "ok 2 - the built CUDA plugins carry exactly $expect"
else
    echo "not ok 2 - the built CUDA plugins carry what the build asked for ($expect)"
    printf '%s\n' "$bad" | sed 's/^/#   /'; fail=1
fi
narrow=$(archs "$(mk cuda-arch CUDA_ARCHS=86 2>/dev/null | tail -1)")
if [ "$narrow" = "ptx_86 sm_86 " ]; then
    echo "ok 3 - CUDA_ARCHS=86 narrows the build to sm_86 and its PTX"
else
    echo "not ok 3 - CUDA_ARCHS=86 gives \"$narrow\", want \"ptx_86 sm_86 \""; fail=1
fi
case " $listed " in
    *" 70 "*|"  ") echo "ok 4 # SKIP this nvcc builds sm_70" ;;
    *)  out=$(mk cuda-arch CUDA_ARCHS="70 90" 2>&1)
        if printf '%s\n' "$out" | grep -q 'cannot build sm_70' && [ "$(archs "$(printf '%s\n' "$out" | tail -1)")" = "ptx_90 sm_90 " ]; then
            echo "ok 4 - an architecture this nvcc cannot build is left out, with a notice"
        else
            echo "not ok 4 - CUDA_ARCHS=\"70 90\" with an nvcc without sm_70"; printf '%s\n' "$out" | sed 's/^/#   /'; fail=1
        fi ;;
esac
exit $fail
