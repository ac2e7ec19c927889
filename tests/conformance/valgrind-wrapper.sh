#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The conformance suite under valgrind memcheck, in quick mode (generated
# from tests/conformance/valgrind-wrapper.sh by tests/conformance/module.mk). Any memcheck error, or
# any definitely/indirectly lost block, makes valgrind exit non-zero.
if [ -n "${GP_SANITIZE:-}" ]; then
    echo "1..0 # SKIP built with AddressSanitizer (make sanitize), which valgrind cannot run"
    exit 0
fi
if ! command -v valgrind >/dev/null 2>&1; then
    echo "1..0 # SKIP valgrind is not installed (sudo .ci/install-deps)"
    exit 0
fi
OMP_NUM_THREADS=1 GP_CONFORMANCE_QUICK=1 exec valgrind -q --error-exitcode=99 \
    --leak-check=full --show-leak-kinds=definite,indirect \
    --errors-for-leak-kinds=definite,indirect \
    --suppressions="@SUPP@" "@CONFORMANCE@" "@PLUGIN@"
