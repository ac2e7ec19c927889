# SPDX-License-Identifier: Apache-2.0
# tests/plugin/cpu-direct: the reference solver's physics through the
# loader, and its kernel's pair-step bound.

# physics-direct links the loader object directly (not libgravplug.so, so
# it does not depend on the rest of the host library).
TESTS += $(BUILD)/t/physics-direct.t
$(BUILD)/obj/tests/plugin/cpu-direct/physics-direct.o: CFLAGS += -Itests
$(BUILD)/t/physics-direct.t: $(BUILD)/obj/tests/plugin/cpu-direct/physics-direct.o $(GP_LOADER_OBJ) $(BUILD)/plugins/gravplug-cpu-direct.so
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $(BUILD)/obj/tests/plugin/cpu-direct/physics-direct.o $(GP_LOADER_OBJ) -ldl -lpthread $(LDLIBS)

# direct-step-prune: the pair_step bound and the fused kernel against brute force.
TESTS += $(BUILD)/t/direct-step-prune.t
$(BUILD)/obj/tests/plugin/cpu-direct/direct-step-prune.o: CFLAGS += -Itests -ffp-contract=off
$(BUILD)/t/direct-step-prune.t: $(BUILD)/obj/tests/plugin/cpu-direct/direct-step-prune.o $(GP_DIRECT_KERNEL_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $^ $(LDLIBS)
