# SPDX-License-Identifier: Apache-2.0
# plugin/cpu-tree: the OpenMP oct-tree plugin on plugin/octree.
CPU_TREE_SO   := $(BUILD)/plugins/gravplug-cpu-tree.so
# exact_few.c sums a handful of active particles' forces with plugin/base's
# exact pairwise kernel (GP_DIRECT_KERNEL_OBJ, its own flags: no fused
# multiply-add), the one cpu-direct runs.
CPU_TREE_OBJS := $(addprefix $(BUILD)/obj/plugin/cpu-tree/,cpu_tree.o exact_few.o) \
                 $(GP_DIRECT_KERNEL_OBJ)
PLUGINS     += $(CPU_TREE_SO)
CPU_PLUGINS += $(CPU_TREE_SO)
$(addprefix $(BUILD)/obj/plugin/cpu-tree/,cpu_tree.o exact_few.o): CFLAGS += $(GP_OCTREE_CPU_CFLAGS)

$(CPU_TREE_SO): $(CPU_TREE_OBJS) $(GP_OCTREE_CPU_OBJS) $(GP_OCTREE_OBJS) $(GP_BASE_OBJS) plugin/plugin.map
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_LDFLAGS) -fopenmp -o $@ $(CPU_TREE_OBJS) $(GP_OCTREE_CPU_OBJS) $(GP_OCTREE_OBJS) $(GP_BASE_OBJS) $(LDLIBS)

.PHONY: cpu-tree
cpu-tree: $(CPU_TREE_SO)
