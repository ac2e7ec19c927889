#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/gpu/pack-for-device.sh — prepare build/ HERE (a machine with nvcc,
# GSL, libconfig and HDF5, no GPU needed) so that a GPU machine that has
# only the CUDA driver can run bench/gpu/run-all.sh without compiling:
# builds everything, then copies every shared library the programs need,
# other than glibc's and the driver's, into build/devlibs.
#
# Then, with this workplace's device tool, which carries at most 64 MiB
# (build/ is ~120 MB with the sanitizer and emulator builds and the
# objects, none of which a device run needs), carry the tarball this
# script writes, build/devpack.tar.gz (~32 MB):
#   run(carry=["build/devpack.tar.gz"], command="mkdir -p /work &&
#       ln -sfn $PWD /work/main && cd /work/main && tar xzf build/devpack.tar.gz -C build &&
#       NO_BUILD=1 LD_LIBRARY_PATH=$PWD/build/devlibs bench/gpu/run-all.sh tests direct
#       tree-small; cp bench/results/gpu/raw/gpu-* $OUT/")
# The symlink is needed because the test wrappers and the loader's
# build-tree search path are absolute paths of the build machine. Copy
# the results into $OUT after each stage when a call may run out of time.
set -eu
cd "$(dirname "$0")/../.."
make -j"$(nproc)" all cuda
mkdir -p build/devlibs
for f in build/lib/*.so build/plugins/*.so build/bench/* build/tests/* build/t/* build/bin/*; do
    [ -f "$f" ] && [ -x "$f" ] || case "$f" in *.so) ;; *) continue ;; esac
    ldd "$f" 2>/dev/null | awk '/=> \// {print $3}'
done | sort -u | grep -v -E '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libcuda|libgcc_s|libstdc\+\+)\.so' |
    while read -r lib; do cp -L "$lib" build/devlibs/; done
# Open MPI's libraries apart, in devlibs/mpi: a GPU machine with mpirun has
# its own, which must match its mpirun (run-all.sh's mpi stage prefers them)
mkdir -p build/devlibs/mpi
for f in build/devlibs/libmpi.so.* build/devlibs/libopen-*.so.* build/devlibs/libhwloc.so.* build/devlibs/libevent*.so.*; do
    [ -f "$f" ] && mv "$f" build/devlibs/mpi/
done
# what a device run reads, in one file small enough to carry
(cd build && tar -cf - bench bin devlibs lib plugins t tests | gzip -6 > devpack.tar.gz)
for d in build build/devlibs build/devpack.tar.gz; do du -sh "$d"; done
