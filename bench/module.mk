# SPDX-License-Identifier: Apache-2.0
# bench: benchmark programs (built by `make bench`, not run by `make test`).
GPBENCH := $(BUILD)/bench/gpbench
BENCHES += $(GPBENCH)

$(BUILD)/obj/bench/gpbench.o: CFLAGS += -Ihost_stub/ic
$(GPBENCH): $(BUILD)/obj/bench/gpbench.o $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $< -L$(dir $(HOSTLIB)) -lgravplug -Wl,-rpath,$(abspath $(dir $(HOSTLIB))) $(LDLIBS)

# bench/block-step: seconds per block step through ABI 1.0 and 1.1
# (results in bench/results/abi11-block-step/raw/abi11-block-step.md).
BLOCK_STEP := $(BUILD)/bench/block-step
BENCHES += $(BLOCK_STEP)
$(BUILD)/obj/bench/block-step.o: CFLAGS += -Ihost_stub/ic -Iintegrators -ffp-contract=off
$(BLOCK_STEP): $(BUILD)/obj/bench/block-step.o $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $< -L$(dir $(HOSTLIB)) -lgravplug -Wl,-rpath,$(abspath $(dir $(HOSTLIB))) $(LDLIBS)

# bench/level-bins: the host's per-block-step bookkeeping (deepest level,
# active list) with the particles filed by level against O(n) scans.
LEVEL_BINS := $(BUILD)/bench/level-bins
BENCHES += $(LEVEL_BINS)
$(BUILD)/obj/bench/level-bins.o: CFLAGS += -Iintegrators
$(LEVEL_BINS): $(BUILD)/obj/bench/level-bins.o $(BUILD)/obj/integrators/core/timestep_levels.o
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $^ $(LDLIBS) -lm

# bench/abi12-outputs: compute_forces against compute_forces_ex with acc
# only and with every per-particle 1.2 output
# (bench/results/abi-outputs/raw/abi12-outputs.md).
ABI12_OUTPUTS := $(BUILD)/bench/abi12-outputs
BENCHES += $(ABI12_OUTPUTS)
$(BUILD)/obj/bench/abi12-outputs.o: CFLAGS += -Ihost_stub/ic
$(ABI12_OUTPUTS): $(BUILD)/obj/bench/abi12-outputs.o $(GP_LOADER_OBJ) $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $(filter %.o,$^) -L$(dir $(HOSTLIB)) -lgravplug -Wl,-rpath,$(abspath $(dir $(HOSTLIB))) -ldl $(LDLIBS)

# bench/g6calc-cost: predict + compute_field_ex at ni points, what one
# GRAPE-6 call costs a plugin (bench/results/grape6/).
G6CALC_COST := $(BUILD)/bench/g6calc-cost
BENCHES += $(G6CALC_COST)
$(BUILD)/obj/bench/g6calc-cost.o: CFLAGS += -Ihost_stub/ic
$(G6CALC_COST): $(BUILD)/obj/bench/g6calc-cost.o $(GP_LOADER_OBJ) $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $(filter %.o,$^) -L$(dir $(HOSTLIB)) -lgravplug -Wl,-rpath,$(abspath $(dir $(HOSTLIB))) -ldl $(LDLIBS)

# bench/g6-route-accuracy: one GRAPE-6 call's force errors through
# libgravplug-g6 on the plugin and route the environment chooses
# (bench/results/grape6/).
G6_ROUTE_ACCURACY := $(BUILD)/bench/g6-route-accuracy
BENCHES += $(G6_ROUTE_ACCURACY)
$(BUILD)/obj/bench/g6-route-accuracy.o: CFLAGS += -Ihost_stub/ic -Ihost_stub/g6
$(G6_ROUTE_ACCURACY): $(BUILD)/obj/bench/g6-route-accuracy.o $(G6_STATIC) $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $< $(G6_STATIC) -L$(dir $(HOSTLIB)) -lgravplug -Wl,-rpath,$(abspath $(dir $(HOSTLIB))) -ldl $(LDLIBS)

# bench/pair-search: the pruned pair search against the pass over every
# source, tau_ij evaluated per particle
# (bench/results/abi-outputs/raw/abi12-outputs.md).
PAIR_SEARCH := $(BUILD)/bench/pair-search
BENCHES += $(PAIR_SEARCH)
$(BUILD)/obj/bench/pair-search.o: CFLAGS += -Ihost_stub/ic -ffp-contract=off
$(PAIR_SEARCH): $(BUILD)/obj/bench/pair-search.o $(addprefix $(BUILD)/obj/plugin/octree/,tree_state.o tree_search.o pair_search.o) $(GP_OCTREE_WALK_OBJS) $(GP_OCTREE_OBJS) $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $(filter %.o,$^) -L$(dir $(HOSTLIB)) -lgravplug -Wl,-rpath,$(abspath $(dir $(HOSTLIB))) $(LDLIBS)
