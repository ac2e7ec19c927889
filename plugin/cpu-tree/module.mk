# plugin/cpu-tree: the OpenMP oct-tree plugin on plugin/core.
CPU_TREE_SO   := $(BUILD)/plugins/gravplug-cpu-tree.so
CPU_TREE_OBJS := $(addprefix $(BUILD)/obj/plugin/cpu-tree/,cpu_tree.o tree_state.o walk.o)
PLUGINS     += $(CPU_TREE_SO)
CPU_PLUGINS += $(CPU_TREE_SO)

# Kernels: -O3 and -fno-math-errno so sqrt vectorises; portable baseline
# x86-64-v2, and walk.c adds x86-64-v3/v4 clones picked at load time
# (target_clones). No -ffast-math: sums stay in the coded order.
CPU_TREE_CFLAGS := -O3 -fno-math-errno -fno-trapping-math
# walk.c: fused multiply-adds where the clone has them (x86-64-v3/v4). The
# rounding is then fixed per clone, so results stay bit-identical run to run
# and across thread counts on one machine (not across CPU generations).
$(BUILD)/obj/plugin/cpu-tree/walk.o: CFLAGS += -ffp-contract=fast
ifeq ($(shell uname -m),x86_64)
CPU_TREE_CFLAGS += -march=x86-64-v2
endif
$(CPU_TREE_OBJS): CFLAGS += $(CPU_TREE_CFLAGS)

$(CPU_TREE_SO): $(CPU_TREE_OBJS) $(GP_CORE_OBJS) $(GP_COMMON_OBJS) plugin/plugin.map
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_LDFLAGS) -fopenmp -o $@ $(CPU_TREE_OBJS) $(GP_CORE_OBJS) $(GP_COMMON_OBJS) $(LDLIBS)

.PHONY: cpu-tree
cpu-tree: $(CPU_TREE_SO)

# tests/tree-accuracy.c: cpu-tree against cpu-direct through the loader.
$(BUILD)/obj/tests/tree-accuracy.o: CFLAGS += -Itests
$(BUILD)/t/tree-accuracy.t: $(BUILD)/obj/tests/tree-accuracy.o $(GP_LOADER_OBJ) $(CPU_TREE_SO) $(BUILD)/plugins/gravplug-cpu-direct.so
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $(BUILD)/obj/tests/tree-accuracy.o $(GP_LOADER_OBJ) -ldl $(LDLIBS)
TESTS += $(BUILD)/t/tree-accuracy.t
