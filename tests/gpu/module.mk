# SPDX-License-Identifier: Apache-2.0
# tests/gpu: the CUDA plugins (cuda-direct, cuda-tree) and the CPU
# emulation of CUDA that runs their kernels and host code here without a
# GPU; read before tests/conformance/module.mk, whose rules name $(EMU).

# ---- GPU tests (tests/gpu/gpu-*.c) -----------------------------------------
# They dlopen the plugins themselves; without a device gpu-accuracy prints
# `1..0 # SKIP`, and gpu-nodevice checks the clean GP_ERR_DEVICE failure.
ifneq ($(GP_HAVE_CUDA),)
GPU_TEST_NAMES := gpu-nodevice gpu-accuracy gpu-edges gpu-abi11 gpu-groups gpu-drift
GPU_TESTS := $(GPU_TEST_NAMES:%=$(BUILD)/t/%.t)
$(GPU_TEST_NAMES:%=$(BUILD)/obj/tests/gpu/%.o): CFLAGS += -Itests
$(GPU_TESTS): $(BUILD)/t/%.t: $(BUILD)/obj/tests/gpu/%.o $(CUDA_PLUGINS_BUILT) $(BUILD)/plugins/gravplug-cpu-direct.so
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $(BUILD)/obj/tests/gpu/$*.o -ldl $(LDLIBS)
TESTS += $(GPU_TESTS)
endif

# ---- the kernels' own source on the CPU (no nvcc, no GPU needed) ---------
# tests/gpu/gpu-walk-emu.cc compiles walk.cuh and direct_kernel.cuh with g++
# through tests/gpu/gpu-emu.h (a warp emulator) and checks them against a
# direct sum; it runs in every build, CUDA or not.
CXX ?= g++
GPU_EMU_TEST := $(BUILD)/t/gpu-walk-emu.t
$(GPU_EMU_TEST): tests/gpu/gpu-walk-emu.cc tests/gpu/gpu-emu.h tests/tap.h tests/testlib.h plugin/cuda-tree/walk.cuh plugin/cuda-tree/walk_args.h \
                 plugin/cuda-tree/tree_dev.h plugin/cuda-direct/direct_kernel.cuh \
                 plugin/cuda-base/vec4.h $(GP_OCTREE_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Wno-unknown-pragmas -Wno-unused-parameter -D_GNU_SOURCE \
	    -Iabi -Iplugin -Itests -Itests/gpu -o $@ tests/gpu/gpu-walk-emu.cc $(GP_OCTREE_OBJS) -fopenmp $(LDLIBS) -lm
TESTS += $(GPU_EMU_TEST)
# tests/gpu/gpu-emu-self.cc: the emulator's own primitives and failure reports
$(BUILD)/t/gpu-emu-self.t: tests/gpu/gpu-emu-self.cc tests/gpu/gpu-emu.h tests/tap.h
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Wno-unknown-pragmas -Wno-unused-parameter -D_GNU_SOURCE \
	    -Itests -o $@ $< -fopenmp $(LDLIBS) -lm
TESTS += $(BUILD)/t/gpu-emu-self.t

# ---- both plugins built against a CPU emulation of CUDA (tests only) ------
# build/emu/plugins/gravplug-cuda-{direct,tree}.so: the plugins' own host
# objects (tree.o, direct.o, gp_cuda.o, common) linked with their kernel
# sources compiled by g++ through tests/gpu/gpu-emu.h, CUB replaced by
# tests/gpu/gpu-emu-cub.h and the CUDA runtime by tests/gpu/gpu-emu-runtime.cc.
# The conformance suite and gpu-accuracy then run the whole pipeline here,
# without a GPU. Never installed, never in PLUGINS.
ifneq ($(GP_HAVE_CUDA),)
EMU := $(BUILD)/emu
EMU_CXXFLAGS := -std=c++17 -O2 -g -ffp-contract=off -fPIC -fvisibility=hidden -Wall -Wno-unknown-pragmas -Wno-unused-parameter \
                -D_GNU_SOURCE -DGP_CUDA_EMULATE -DGP_CUDA_EMU_RUNTIME -Iabi -Iplugin -Itests/gpu $(CUDA_CFLAGS)
EMU_HDRS := tests/gpu/gpu-emu.h tests/gpu/gpu-emu-cub.h tests/gpu/gpu-emu-counts.h plugin/cuda-base/state_dev.cuh plugin/cuda-base/state_dev.h \
            plugin/cuda-base/launch.cuh plugin/cuda-base/vec4.h
$(EMU)/obj/%.o: plugin/%.cu $(EMU_HDRS)
	@mkdir -p $(dir $@)
	$(CXX) $(EMU_CXXFLAGS) -x c++ -c $< -o $@
$(EMU)/obj/gpu-emu-runtime.o: tests/gpu/gpu-emu-runtime.cc tests/gpu/gpu-emu-counts.h
	@mkdir -p $(dir $@)
	$(CXX) $(EMU_CXXFLAGS) -c $< -o $@
$(EMU)/obj/cuda-tree/tree_dev.o: plugin/cuda-tree/walk.cuh plugin/cuda-tree/walk_args.h plugin/cuda-tree/tree_dev.h plugin/cuda-base/vec4.h \
                                 plugin/octree/drift_kin.h
$(EMU)/obj/cuda-direct/direct_dev.o: plugin/cuda-direct/direct_kernel.cuh plugin/cuda-direct/direct_dev.h plugin/cuda-base/vec4.h
$(EMU)/obj/cuda-direct/direct_nb.o: plugin/cuda-direct/direct_nb.h plugin/base/pair_step.h


# the emulator's counters (gpu-emu-counts.h): a library of their own, which
# the emulated plugins load by its soname through their rpath, so that a
# plugin still defines gravplug_entry alone and a test reaches the counters
# with dlsym on the plugin's handle
EMU_COUNTS_DIR := $(abspath $(EMU)/lib)
EMU_COUNTS_LIB := $(EMU)/lib/libgpemu-counts.so
$(EMU_COUNTS_LIB): tests/gpu/gpu-emu-counts.cc tests/gpu/gpu-emu-counts.h
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -g -fPIC -shared -Wall -Wl,-soname,libgpemu-counts.so -o $@ $<
EMU_LINK_COUNTS := -L$(EMU_COUNTS_DIR) -Wl,-rpath,$(EMU_COUNTS_DIR) -lgpemu-counts

EMU_COMMON := $(EMU)/obj/gpu-emu-runtime.o $(GP_CUDA_BASE_OBJS) $(GP_BASE_OBJS)
$(EMU)/plugins/gravplug-cuda-tree.so: $(BUILD)/obj/plugin/cuda-tree/tree.o $(EMU)/obj/cuda-tree/tree_dev.o \
                                      $(CUDA_TREE_HOST_SEARCH_OBJS) $(EMU_COMMON) | $(EMU_COUNTS_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(PLUGIN_LDFLAGS) -fopenmp -o $@ $^ $(EMU_LINK_COUNTS) -lm
$(EMU)/plugins/gravplug-cuda-direct.so: $(BUILD)/obj/plugin/cuda-direct/direct.o $(EMU)/obj/cuda-direct/direct_dev.o \
                                        $(EMU)/obj/cuda-direct/direct_nb.o $(EMU_COMMON) | $(EMU_COUNTS_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(PLUGIN_LDFLAGS) -fopenmp -o $@ $^ $(EMU_LINK_COUNTS) -lm
$(EMU)/plugins/gravplug-cpu-direct.so: $(BUILD)/plugins/gravplug-cpu-direct.so
	@mkdir -p $(dir $@)
	ln -sf $(abspath $<) $@
EMU_PLUGINS := $(EMU)/plugins/gravplug-cuda-tree.so $(EMU)/plugins/gravplug-cuda-direct.so $(EMU)/plugins/gravplug-cpu-direct.so

GPU_EMU_WRAPPERS := $(BUILD)/t/gpu-emu-conformance-cuda-direct.t $(BUILD)/t/gpu-emu-conformance-cuda-tree.t \
                    $(BUILD)/t/gpu-emu-valgrind-cuda-direct.t $(BUILD)/t/gpu-emu-valgrind-cuda-tree.t \
                    $(BUILD)/t/gpu-emu-accuracy.t $(BUILD)/t/gpu-emu-nodevice.t $(BUILD)/t/gpu-emu-edges.t \
                    $(BUILD)/t/gpu-emu-abi11.t $(BUILD)/t/gpu-emu-groups.t $(BUILD)/t/gpu-emu-drift.t
# the conformance program, linked by tests/conformance/module.mk (read later)
GP_CONFORMANCE_BIN := $(BUILD)/tests/conformance
$(BUILD)/t/gpu-emu-conformance-%.t: $(EMU_PLUGINS) $(GP_CONFORMANCE_BIN) tests/gpu/module.mk
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\n# conformance of %s built on the CPU emulation of CUDA\nGP_CONFORMANCE_QUICK=1 exec "%s" "%s"\n' \
	    '$*' '$(abspath $(GP_CONFORMANCE_BIN))' '$(abspath $(EMU)/plugins/gravplug-$*.so)' > $@
	@chmod +x $@
# the plugins' host code (buffers, copies, error paths) under memcheck,
# through the same wrapper as the CPU plugins' valgrind runs
$(BUILD)/t/gpu-emu-valgrind-%.t: $(EMU_PLUGINS) $(GP_CONFORMANCE_BIN) tests/conformance/valgrind.supp tests/conformance/valgrind-wrapper.sh tests/gpu/module.mk
	@mkdir -p $(dir $@)
	@sed -e 's|@CONFORMANCE@|$(abspath $(GP_CONFORMANCE_BIN))|' \
	     -e 's|@PLUGIN@|$(abspath $(EMU)/plugins/gravplug-$*.so)|' \
	     -e 's|@SUPP@|$(abspath tests/conformance/valgrind.supp)|' tests/conformance/valgrind-wrapper.sh > $@
	@chmod +x $@
# gpu-NAME.t again against the emulated plugins (GP_BUILD), with the
# environment each one needs: smaller sizes, or no device at all
GPU_EMU_ENV_accuracy := GP_GPU_TEST_N=1024
GPU_EMU_ENV_edges :=
GPU_EMU_ENV_abi11 := GP_GPU_TEST_N=512
GPU_EMU_ENV_nodevice := GP_CUDA_EMU_DEVICES=0
GPU_EMU_ENV_groups :=
GPU_EMU_ENV_drift :=
$(BUILD)/t/gpu-emu-accuracy.t $(BUILD)/t/gpu-emu-edges.t $(BUILD)/t/gpu-emu-abi11.t $(BUILD)/t/gpu-emu-nodevice.t \
$(BUILD)/t/gpu-emu-groups.t $(BUILD)/t/gpu-emu-drift.t: \
$(BUILD)/t/gpu-emu-%.t: $(EMU_PLUGINS) $(BUILD)/t/gpu-%.t tests/gpu/module.mk
	@printf '#!/bin/sh\n# gpu-%s against the CPU emulation of CUDA\n%s GP_BUILD="%s" exec "%s"\n' \
	    '$*' '$(GPU_EMU_ENV_$*)' '$(abspath $(EMU))' '$(abspath $(BUILD)/t/gpu-$*.t)' > $@
	@chmod +x $@
# the drifted tree's kernels and host code under memcheck (the emulated
# kernels run on the CPU, so their reads and writes are checked too)
$(BUILD)/t/gpu-emu-valgrind-drift.t: $(EMU_PLUGINS) $(BUILD)/t/gpu-drift.t tests/conformance/valgrind.supp tests/gpu/module.mk
	@printf '#!/bin/sh\n# gpu-drift on the emulated cuda-tree under valgrind memcheck\n%s\n%s\nGP_GPU_TEST_N=512 GP_BUILD="%s" exec valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --suppressions="%s" "%s"\n' \
	    'if [ -n "$${GP_SANITIZE:-}" ]; then echo "1..0 # SKIP built with AddressSanitizer (make sanitize), which valgrind cannot run"; exit 0; fi' \
	    'command -v valgrind >/dev/null 2>&1 || { echo "1..0 # SKIP valgrind is not installed (sudo .ci/install-deps)"; exit 0; }' \
	    '$(abspath $(EMU))' '$(abspath tests/conformance/valgrind.supp)' '$(abspath $(BUILD)/t/gpu-drift.t)' > $@
	@chmod +x $@
GPU_EMU_WRAPPERS += $(BUILD)/t/gpu-emu-valgrind-drift.t
# a block step's fixed costs (launches, copies, waits) on emulated cuda-tree,
# pinned; the figures are in bench/results/gpu/README.md
$(BUILD)/t/gpu-emu-block-costs.t: tests/gpu/gpu-emu-block-costs.c tests/gpu/gpu-emu-counts.h tests/gpu/gpu-plugin.h \
                                  tests/tap.h tests/testlib.h $(EMU_PLUGINS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests -Itests/gpu -DGP_EMU_BUILD='"$(abspath $(EMU))"' -o $@ $< -ldl -lm $(LDLIBS)
GPU_EMU_WRAPPERS += $(BUILD)/t/gpu-emu-block-costs.t
# what a GRAPE-6 call moves on emulated cuda-direct: bytes that follow the
# points, not the particles
$(BUILD)/t/gpu-emu-field-costs.t: tests/gpu/gpu-emu-field-costs.c tests/gpu/gpu-emu-counts.h tests/gpu/gpu-plugin.h \
                                  tests/tap.h tests/testlib.h $(EMU_PLUGINS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests -Itests/gpu -DGP_EMU_BUILD='"$(abspath $(EMU))"' -o $@ $< -ldl -lm $(LDLIBS)
GPU_EMU_WRAPPERS += $(BUILD)/t/gpu-emu-field-costs.t
TESTS += $(GPU_EMU_WRAPPERS)
endif


# The GPU benchmark (bench/gpu/cudabench) on the emulated plugins.
TESTS += $(BUILD)/t/cudabench-emu.t
$(BUILD)/t/cudabench-emu.t: tests/gpu/cudabench-emu.sh tests/tap-lib.sh tests/gpu/module.mk $(GPU_BENCHES) $(EMU_PLUGINS)
	$(gp_sh_test)

# `make cuda` (plugin/cuda-tree/module.mk) builds the GPU tests too.
cuda: $(GPU_TESTS) $(GPU_EMU_TEST) $(GPU_EMU_WRAPPERS)

# bench/gpu/run-all.sh's gothic stage, dry, at toy sizes (emulated cuda-tree
# where nvcc is, cpu-tree otherwise)
TESTS += $(BUILD)/t/gothic-dry.t
$(BUILD)/t/gothic-dry.t: tests/gpu/gothic-dry.sh tests/gpu/module.mk bench/gpu/run-all.sh bench/gpu/gothic.py \
                         $(HOLD_VS_SHARED) $(CUDABENCH) $(EMU_PLUGINS) $(BUILD)/plugins/gravplug-cpu-tree.so
	$(gp_sh_test)
