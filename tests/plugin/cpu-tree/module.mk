# SPDX-License-Identifier: Apache-2.0
# tests/plugin/cpu-tree: cpu-tree through the loader, against cpu-direct:
# its accuracy, its jerk, its ABI 1.1 calls, and the same on its lower
# kernel levels.

# tests/plugin/cpu-tree/tree-accuracy.c: cpu-tree against cpu-direct through the loader.
$(BUILD)/obj/tests/plugin/cpu-tree/tree-accuracy.o: CFLAGS += -Itests
$(BUILD)/t/tree-accuracy.t: $(BUILD)/obj/tests/plugin/cpu-tree/tree-accuracy.o $(GP_LOADER_OBJ) $(CPU_TREE_SO) $(BUILD)/plugins/gravplug-cpu-direct.so
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $(BUILD)/obj/tests/plugin/cpu-tree/tree-accuracy.o $(GP_LOADER_OBJ) -ldl $(LDLIBS)
TESTS += $(BUILD)/t/tree-accuracy.t

# tests/plugin/cpu-tree/tree-jerk.c: cpu-tree's jerk is the derivative of its own acc.
$(BUILD)/obj/tests/plugin/cpu-tree/tree-jerk.o: CFLAGS += -Itests
$(BUILD)/t/tree-jerk.t: $(BUILD)/obj/tests/plugin/cpu-tree/tree-jerk.o $(GP_LOADER_OBJ) $(CPU_TREE_SO) $(BUILD)/plugins/gravplug-cpu-direct.so
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $(BUILD)/obj/tests/plugin/cpu-tree/tree-jerk.o $(GP_LOADER_OBJ) -ldl $(LDLIBS)
TESTS += $(BUILD)/t/tree-jerk.t

# cpu-tree's ABI 1.1 calls (predict against the host's expression, so no FMA)
$(BUILD)/obj/tests/plugin/cpu-tree/tree-abi11.o: CFLAGS += -Itests -ffp-contract=off
$(BUILD)/t/tree-abi11.t: $(BUILD)/obj/tests/plugin/cpu-tree/tree-abi11.o $(GP_LOADER_OBJ) $(BUILD)/plugins/gravplug-cpu-direct.so $(BUILD)/plugins/gravplug-cpu-tree.so
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $(BUILD)/obj/tests/plugin/cpu-tree/tree-abi11.o $(GP_LOADER_OBJ) -ldl $(LDLIBS)
TESTS += $(BUILD)/t/tree-abi11.t
# extreme-scales (tests/conformance) and tree-accuracy again on cpu-tree's
# lower kernel levels (plugin/octree/cpu_lists.h):
# the portable loops everywhere, the AVX2 kernels where the CPU has AVX2
# (on an AVX-512 machine the default runs the AVX-512 ones); the same
# bounds on every level
CPU_TREE_SIMD_LOWER := portable avx2
$(CPU_TREE_SIMD_LOWER:%=$(BUILD)/t/extreme-scales-%.t): $(BUILD)/t/extreme-scales-%.t: $(BUILD)/t/extreme-scales.t tests/plugin/cpu-tree/module.mk
	@printf '#!/bin/sh\n# extreme-scales on cpu-tree with its %s kernels at most\nGRAVPLUG_CPU_TREE_SIMD=%s exec "%s" "%s"\n' \
	    '$*' '$*' '$(abspath $(BUILD)/t/extreme-scales.t)' '$(abspath $(BUILD)/plugins/gravplug-cpu-tree.so)' > $@
	@chmod +x $@
$(CPU_TREE_SIMD_LOWER:%=$(BUILD)/t/tree-accuracy-%.t): $(BUILD)/t/tree-accuracy-%.t: $(BUILD)/t/tree-accuracy.t tests/plugin/cpu-tree/module.mk
	@printf '#!/bin/sh\n# tree-accuracy on cpu-tree with its %s kernels at most\nGRAVPLUG_CPU_TREE_SIMD=%s exec "%s"\n' \
	    '$*' '$*' '$(abspath $<)' > $@
	@chmod +x $@
TESTS += $(CPU_TREE_SIMD_LOWER:%=$(BUILD)/t/extreme-scales-%.t) $(CPU_TREE_SIMD_LOWER:%=$(BUILD)/t/tree-accuracy-%.t)
# cpu-tree's drifted tree (drift = on) on the ABI 1.1 path
$(BUILD)/obj/tests/plugin/cpu-tree/tree-drift.o: CFLAGS += -Itests
$(BUILD)/t/tree-drift.t: $(BUILD)/obj/tests/plugin/cpu-tree/tree-drift.o $(GP_LOADER_OBJ) $(BUILD)/plugins/gravplug-cpu-direct.so $(BUILD)/plugins/gravplug-cpu-tree.so
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $(BUILD)/obj/tests/plugin/cpu-tree/tree-drift.o $(GP_LOADER_OBJ) -ldl $(LDLIBS)
TESTS += $(BUILD)/t/tree-drift.t
