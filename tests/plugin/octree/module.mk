# SPDX-License-Identifier: Apache-2.0
# tests/plugin/octree: the tree algorithms of plugin/octree (keys, kernels,
# the build, the float cells, the searches, the groups, the list kernels),
# linked with its objects alone; and the tree plugins' walk parameters.

OCTREE_TEST_NAMES := octree-keys octree-kernels tree-build
OCTREE_TESTS := $(OCTREE_TEST_NAMES:%=$(BUILD)/t/%.t)
TESTS += $(OCTREE_TESTS)

# tree-search: the exact neighbour searches against brute force (the
# brute-force pair_step compiled as the search is: no fused multiply-add).
TESTS += $(BUILD)/t/tree-search.t
$(BUILD)/obj/tests/plugin/octree/tree-search.o: CFLAGS += -Itests -ffp-contract=off
$(BUILD)/t/tree-search.t: $(BUILD)/obj/tests/plugin/octree/tree-search.o $(addprefix $(BUILD)/obj/plugin/octree/,tree_state.o tree_search.o pair_search.o) $(GP_OCTREE_WALK_OBJS) $(GP_OCTREE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $^ $(LDLIBS)

# tree-prepare: the float cells the walks read, rounded outward and tight.
TESTS += $(BUILD)/t/tree-prepare.t
$(BUILD)/obj/tests/plugin/octree/tree-prepare.o: CFLAGS += -Itests
$(BUILD)/t/tree-prepare.t: $(BUILD)/obj/tests/plugin/octree/tree-prepare.o $(addprefix $(BUILD)/obj/plugin/octree/,tree_state.o) $(GP_OCTREE_WALK_OBJS) $(GP_OCTREE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $^ $(LDLIBS)

# tree-cell-velocities: the cells' velocities and dS/dt that the tree jerk
# moves cells with, against the sums over each cell's sources.
TESTS += $(BUILD)/t/tree-cell-velocities.t
$(BUILD)/obj/tests/plugin/octree/tree-cell-velocities.o: CFLAGS += -Itests
$(BUILD)/t/tree-cell-velocities.t: $(BUILD)/obj/tests/plugin/octree/tree-cell-velocities.o $(addprefix $(BUILD)/obj/plugin/octree/,tree_state.o tree_jerk.o) $(GP_OCTREE_WALK_OBJS) $(GP_OCTREE_OBJS) $(GP_BASE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $^ $(LDLIBS)

# octree-lists: the AVX2 list kernel against double sums (skips without AVX2).
TESTS += $(BUILD)/t/octree-lists.t
$(BUILD)/obj/tests/plugin/octree/octree-lists.o: CFLAGS += -Itests
$(BUILD)/t/octree-lists.t: $(BUILD)/obj/tests/plugin/octree/octree-lists.o $(BUILD)/obj/plugin/octree/cpu_lists_avx2.o
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $^ $(LDLIBS)

# tree-groups: a build's i-groups from its source tree (no second tree)
# against a tree of group-size leaves, the build on 1-4 threads, and the
# groups of active subsets (cpu_targets.c).
TESTS += $(BUILD)/t/tree-groups.t
$(BUILD)/obj/tests/plugin/octree/tree-groups.o: CFLAGS += -Itests
$(BUILD)/t/tree-groups.t: $(BUILD)/obj/tests/plugin/octree/tree-groups.o $(addprefix $(BUILD)/obj/plugin/octree/,tree_state.o cpu_targets.o) $(GP_OCTREE_WALK_OBJS) $(GP_OCTREE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $^ $(LDLIBS)

$(OCTREE_TEST_NAMES:%=$(BUILD)/obj/tests/plugin/octree/%.o): CFLAGS += -Itests
$(OCTREE_TESTS): $(BUILD)/t/%.t: $(BUILD)/obj/tests/plugin/octree/%.o $(GP_OCTREE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $^ $(LDLIBS)

.PHONY: octree
octree: $(OCTREE_TESTS)

# ---- tests/plugin/octree/tree-params.c: the tree plugins' walk parameters, one source --
TREE_PARAMS_OTHERS := $(if $(GP_HAVE_MPI),mpi-tree) $(if $(GP_HAVE_CUDA),$(abspath $(EMU)/plugins/gravplug-cuda-tree.so))
$(BUILD)/obj/tests/plugin/octree/tree-params.o: CFLAGS += -Itests
$(BUILD)/tests/tree-params: $(BUILD)/obj/tests/plugin/octree/tree-params.o $(GP_LOADER_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ -ldl $(LDLIBS)
TESTS += $(BUILD)/t/tree-params.t
$(BUILD)/t/tree-params.t: $(BUILD)/tests/tree-params $(CPU_TREE_SO) $(if $(GP_HAVE_MPI),$(MPI_TREE_SO)) \
                          $(if $(GP_HAVE_CUDA),$(EMU)/plugins/gravplug-cuda-tree.so) tests/plugin/octree/module.mk
	@printf '#!/bin/sh\n# tree-params: cpu-tree against %s\nexec "%s" %s\n' \
	    '$(TREE_PARAMS_OTHERS)' '$(abspath $<)' '$(TREE_PARAMS_OTHERS)' > $@
	@chmod +x $@
