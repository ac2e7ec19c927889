# SPDX-License-Identifier: Apache-2.0
# plugin/cuda-tree: the GPU oct-tree solver (GOTHIC-style). Host side in
# tree.c (gcc), kernels in tree_dev.cu (nvcc, CUB), per-element algorithms
# from plugin/octree compiled for the device.
ifneq ($(GP_HAVE_CUDA),)
$(eval $(call GP_CUDA_PLUGIN,CUDA_TREE,cuda-tree,$(BUILD)/obj/plugin/cuda-tree/tree.o,$(BUILD)/obj/plugin/cuda-tree/tree_dev.cu.o))
# ABI 1.2's exact neighbour searches: cpu-tree's code on a host tree
# (octree's CPU tree with outputs_ex.o), shared rather than copied.
CUDA_TREE_HOST_SEARCH_OBJS := $(GP_OCTREE_CPU_OBJS) $(GP_OCTREE_OBJS)
CUDA_TREE_OBJS += $(CUDA_TREE_HOST_SEARCH_OBJS)
$(CUDA_TREE_SO): $(CUDA_TREE_HOST_SEARCH_OBJS)
endif

# `make cuda`: the CUDA plugins, the GPU tests and benchmarks only (the
# tests are added in tests/gpu/module.mk).
.PHONY: cuda
cuda: $(CUDA_PLUGINS_BUILT) $(GPU_BENCHES)
