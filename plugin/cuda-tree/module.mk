# plugin/cuda-tree: the GPU oct-tree solver (GOTHIC-style). Host side in
# tree.c (gcc), kernels in tree_dev.cu (nvcc, CUB), per-element algorithms
# from plugin/core compiled for the device.
ifneq ($(GP_HAVE_CUDA),)
CUDA_TREE_SO := $(BUILD)/plugins/gravplug-cuda-tree.so
CUDA_TREE_OBJS := $(BUILD)/obj/plugin/cuda-tree/tree.o \
                  $(BUILD)/obj/plugin/cuda-tree/tree_dev.cu.o \
                  $(GP_CUDA_COMMON_OBJS) $(GP_COMMON_OBJS)
$(BUILD)/obj/plugin/cuda-tree/tree.o: CFLAGS += $(CUDA_CFLAGS)

$(CUDA_TREE_SO): $(CUDA_TREE_OBJS) plugin/plugin.map
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_LDFLAGS) -fopenmp -o $@ $(CUDA_TREE_OBJS) $(CUDA_LDLIBS) $(LDLIBS)

PLUGINS += $(CUDA_TREE_SO)
CUDA_PLUGINS_BUILT += $(CUDA_TREE_SO)
endif

# ---- GPU tests (tests/gpu-*.c) --------------------------------------------
# They dlopen the plugins themselves; without a device gpu-accuracy prints
# `1..0 # SKIP`, and gpu-nodevice checks the clean GP_ERR_DEVICE failure.
ifneq ($(GP_HAVE_CUDA),)
GPU_TEST_NAMES := gpu-nodevice gpu-accuracy
GPU_TESTS := $(GPU_TEST_NAMES:%=$(BUILD)/t/%.t)
$(GPU_TEST_NAMES:%=$(BUILD)/obj/tests/%.o): CFLAGS += -Itests
$(GPU_TESTS): $(BUILD)/t/%.t: $(BUILD)/obj/tests/%.o $(CUDA_PLUGINS_BUILT) $(BUILD)/plugins/gravplug-cpu-direct.so
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $(BUILD)/obj/tests/$*.o -ldl $(LDLIBS)
TESTS += $(GPU_TESTS)
endif

# ---- the kernels' own source on the CPU (no nvcc, no GPU needed) ---------
# tests/gpu-walk-emu.cc compiles walk.cuh and direct_kernel.cuh with g++
# through tests/cuda-emu.h (a warp emulator) and checks them against a
# direct sum; it runs in every build, CUDA or not.
CXX ?= g++
GPU_EMU_TEST := $(BUILD)/t/gpu-walk-emu.t
$(GPU_EMU_TEST): tests/gpu-walk-emu.cc tests/cuda-emu.h tests/tap.h plugin/cuda-tree/walk.cuh \
                 plugin/cuda-tree/tree_dev.h plugin/cuda-direct/direct_kernel.cuh \
                 plugin/cuda-direct/direct_dev.h $(GP_CORE_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Wno-unknown-pragmas -Wno-unused-parameter -D_GNU_SOURCE \
	    -Iabi -Iplugin -Itests -o $@ tests/gpu-walk-emu.cc $(GP_CORE_OBJS) -fopenmp -lm
TESTS += $(GPU_EMU_TEST)

# `make cuda`: the CUDA plugins, the GPU tests and benchmarks only.
.PHONY: cuda
cuda: $(CUDA_PLUGINS_BUILT) $(GPU_TESTS) $(GPU_EMU_TEST)
