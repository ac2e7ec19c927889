# SPDX-License-Identifier: Apache-2.0
# plugin/cpu-direct: the exact O(N^2) reference solver (OpenMP, double).
CPU_DIRECT_SO   := $(BUILD)/plugins/gravplug-cpu-direct.so
CPU_DIRECT_OBJS := $(addprefix $(BUILD)/obj/plugin/cpu-direct/,cpu_direct.o direct_kernel.o direct_lists.o)
PLUGINS     += $(CPU_DIRECT_SO)
CPU_PLUGINS += $(CPU_DIRECT_SO)

# The kernel is written to vectorise: -O3, -fno-math-errno (sqrt as one
# instruction) and -fno-trapping-math (branch-free selects) make it SIMD;
# none of these changes a result. No -ffast-math: results stay as coded.
# -ffp-contract=off (already implied by -std=c11, said here because the
# kernel's pair steps must be pair_step.h's bits, and its bound's margin
# assumes no fused multiply-add).
$(BUILD)/obj/plugin/cpu-direct/direct_kernel.o: CFLAGS += -O3 -fno-math-errno -fno-trapping-math -ffp-contract=off
# pair_step is the shared expression bit for bit (no fused multiply-add).
$(BUILD)/obj/plugin/cpu-direct/direct_lists.o: CFLAGS += -ffp-contract=off

$(CPU_DIRECT_SO): $(CPU_DIRECT_OBJS) $(GP_BASE_OBJS) plugin/plugin.map
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_LDFLAGS) -fopenmp -o $@ $(CPU_DIRECT_OBJS) $(GP_BASE_OBJS) $(LDLIBS)

.PHONY: cpu-direct
cpu-direct: $(CPU_DIRECT_SO)
