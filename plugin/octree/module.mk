# SPDX-License-Identifier: Apache-2.0
# plugin/octree: the tree algorithms every tree plugin shares. The headers
# are backend-neutral (GP_HD: compiled for the CPU and for the device);
# host_tree.c is the host driver of the build (with the keys and their sort
# from abi/gravplug_keys.c, GP_KEYS_OBJ); tree_state.c and cpu_walk*.c
# are the CPU tree and group walk that cpu-tree and mpi-tree both run,
# cpu_targets.c and cpu_driver.c what both drive them with.
# Tests: tests/plugin/octree/.
GP_OCTREE_HOST_OBJ := $(BUILD)/obj/plugin/octree/host_tree.o
GP_OCTREE_OBJS := $(GP_OCTREE_HOST_OBJ) $(GP_KEYS_OBJ)

# The per-element code is written to vectorise; -fno-math-errno lets sqrt
# become one instruction. Portable x86-64-v2 baseline, no -march=native.
GP_OCTREE_CFLAGS := -O3 -fno-math-errno
ifeq ($(shell uname -m),x86_64)
GP_OCTREE_CFLAGS += -march=x86-64-v2
endif
$(GP_OCTREE_HOST_OBJ): CFLAGS += $(GP_OCTREE_CFLAGS)

# The CPU tree and walk, the i-groups they walk (cpu_targets.c) and the
# driver code around them (cpu_driver.c: shared parameters, rebuild policy,
# call bookkeeping): linked by cpu-tree and mpi-tree (with
# GP_OCTREE_OBJS), so each rank of mpi-tree works as cpu-tree does.
# Kernels: -O3 and -fno-math-errno so sqrt vectorises; portable baseline
# x86-64-v2, and cpu_walk_portable.c adds x86-64-v3/v4 clones
# picked at load time (target_clones); cpu_walk_avx2.c, cpu_walk_avx512.c
# and cpu_lists_avx2.c carry their own target attributes and run only
# where the CPU has those instructions. No -ffast-math: sums stay in the
# coded order.
# The walk: the driver, one file per instruction set (cpu_traverse.h the
# traversal they share), and the AVX2 and AVX-512 list kernels.
GP_OCTREE_WALK_OBJS := $(addprefix $(BUILD)/obj/plugin/octree/,cpu_walk_group.o cpu_walk_portable.o \
                         cpu_walk_avx2.o cpu_walk_avx512.o cpu_lists_avx2.o cpu_lists_avx512.o)
GP_OCTREE_CPU_OBJS := $(addprefix $(BUILD)/obj/plugin/octree/,tree_state.o \
                        cpu_targets.o cpu_driver.o tree_search.o outputs_ex.o tree_jerk.o tree_drift.o \
                        pair_search.o cpu_spaces.o) $(GP_OCTREE_WALK_OBJS)
GP_OCTREE_CPU_CFLAGS := -O3 -fno-math-errno -fno-trapping-math
ifeq ($(shell uname -m),x86_64)
GP_OCTREE_CPU_CFLAGS += -march=x86-64-v2
endif
$(GP_OCTREE_CPU_OBJS): CFLAGS += $(GP_OCTREE_CPU_CFLAGS)
# The walk's files and the jerk's kernels (tree_jerk.c): fused
# multiply-adds where the clone or the target has them (x86-64-v3/v4,
# AVX2, AVX-512). The rounding is then fixed per clone,
# so results stay bit-identical run to run and across thread counts on one
# machine (not across CPU generations).
$(addprefix $(BUILD)/obj/plugin/octree/,cpu_walk_group.o cpu_walk_portable.o cpu_walk_avx2.o cpu_walk_avx512.o \
                                             cpu_lists_avx512.o tree_jerk.o): CFLAGS += -ffp-contract=fast
# outputs_ex.c: pair_step is the shared expression bit for bit (no fused
# multiply-add).
$(BUILD)/obj/plugin/octree/outputs_ex.o: CFLAGS += -ffp-contract=off
# pair_search.c evaluates pair_step, the shared expression bit for bit.
$(BUILD)/obj/plugin/octree/pair_search.o: CFLAGS += -ffp-contract=off
