# SPDX-License-Identifier: Apache-2.0
# integrators/ — time integration (part of libgravplug.so): the gp_sim API,
# one file per scheme, time-step levels and criteria, checkpoints.
INTEGRATOR_SRCS := $(wildcard integrators/*/*.c)
INTEGRATOR_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(INTEGRATOR_SRCS))
HOSTLIB_OBJS += $(INTEGRATOR_OBJS)
# A file names a header of another sub-folder by it (core/sim_core.h).
$(INTEGRATOR_OBJS): CPPFLAGS += -Iintegrators
HOSTLIB_LDLIBS += -lgsl -lgslcblas

.PHONY: integrators
integrators: $(HOSTLIB)

# bench/block-vs-shared: block-step against shared-step RK2 at the same
# energy error (results in bench/results/block-steps/raw/block-vs-shared.*).
BLOCK_VS_SHARED := $(BUILD)/bench/block-vs-shared
BENCHES += $(BLOCK_VS_SHARED)
$(BUILD)/obj/bench/block-vs-shared.o: CPPFLAGS += -Iintegrators -Ihost_stub/ic
$(BUILD)/obj/bench/exact_energy.o: CPPFLAGS += -Iintegrators -Ihost_stub/ic
$(BLOCK_VS_SHARED): $(BUILD)/obj/bench/block-vs-shared.o $(BUILD)/obj/bench/exact_energy.o $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $(filter %.o,$^) -L$(BUILD)/lib -lgravplug -Wl,-rpath,'$$ORIGIN/../lib' $(LDLIBS)

# The host's prediction must equal a 1.1 plugin's evaluation of the ABI's
# expression bit for bit (gp_predict_coord): no fused multiply-add.
$(INTEGRATOR_OBJS): CFLAGS += -ffp-contract=off

# bench/hold-vs-shared: HOLD against the block and shared-step schemes at
# the same energy error (results in bench/results/hold/raw/hold.md).
HOLD_VS_SHARED := $(BUILD)/bench/hold-vs-shared
BENCHES += $(HOLD_VS_SHARED)
$(BUILD)/obj/bench/hold-vs-shared.o: CPPFLAGS += -Iintegrators -Ihost_stub/ic
$(HOLD_VS_SHARED): $(BUILD)/obj/bench/hold-vs-shared.o $(BUILD)/obj/bench/exact_energy.o $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $(filter %.o,$^) -L$(BUILD)/lib -lgravplug -Wl,-rpath,'$$ORIGIN/../lib' $(LDLIBS)
# bench/hold-cc-graph: pairwise fast sets and their connected components
# on the initial conditions (would CC save over HOLD?),
# bench/results/hold/raw/hold.md.
HOLD_CC_GRAPH := $(BUILD)/bench/hold-cc-graph
BENCHES += $(HOLD_CC_GRAPH)
$(BUILD)/obj/bench/hold-cc-graph.o: CPPFLAGS += -Ihost_stub/ic
$(HOLD_CC_GRAPH): $(BUILD)/obj/bench/hold-cc-graph.o $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(filter %.o,$^) -L$(BUILD)/lib -lgravplug -Wl,-rpath,'$$ORIGIN/../lib' $(LDLIBS)
