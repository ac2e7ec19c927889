# SPDX-License-Identifier: Apache-2.0
# plugin/cpu-direct: the exact O(N^2) reference solver (OpenMP, double).
CPU_DIRECT_SO   := $(BUILD)/plugins/gravplug-cpu-direct.so
CPU_DIRECT_OBJS := $(addprefix $(BUILD)/obj/plugin/cpu-direct/,cpu_direct.o direct_lists.o) \
                   $(GP_DIRECT_KERNEL_OBJ)
PLUGINS     += $(CPU_DIRECT_SO)
CPU_PLUGINS += $(CPU_DIRECT_SO)

# The force kernel is plugin/base's exact pairwise kernel
# (GP_DIRECT_KERNEL_OBJ, with its own flags there).
# pair_step is the shared expression bit for bit (no fused multiply-add).
$(BUILD)/obj/plugin/cpu-direct/direct_lists.o: CFLAGS += -ffp-contract=off

$(CPU_DIRECT_SO): $(CPU_DIRECT_OBJS) $(GP_BASE_OBJS) plugin/plugin.map
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_LDFLAGS) -fopenmp -o $@ $(CPU_DIRECT_OBJS) $(GP_BASE_OBJS) $(LDLIBS)

.PHONY: cpu-direct
cpu-direct: $(CPU_DIRECT_SO)
