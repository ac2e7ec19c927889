# SPDX-License-Identifier: Apache-2.0
# integrators/ — time integration (part of libgravplug.so): the gp_sim API,
# one file per scheme, time-step levels and criteria, checkpoints.
INTEGRATOR_SRCS := $(wildcard integrators/*.c)
HOSTLIB_OBJS += $(patsubst %.c,$(BUILD)/obj/%.o,$(INTEGRATOR_SRCS))
HOSTLIB_LDLIBS += -lgsl -lgslcblas
# The gp_sim API, which libgravplug.so exports (gp_sim_*, gp_integrator_*).
INSTALL_HEADERS += integrators/gp_integrator.h

.PHONY: integrators
integrators: $(HOSTLIB)

# Tests (tests/integrators-*.c) link the integrator objects and the loader
# directly, and load cpu-direct at run time through the loader.
INTEGRATOR_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(INTEGRATOR_SRCS))
INTEGRATOR_TESTS := $(patsubst tests/%.c,$(BUILD)/t/%.t,$(wildcard tests/integrators-*.c))
TESTS += $(INTEGRATOR_TESTS)
$(INTEGRATOR_TESTS): $(BUILD)/t/%.t: tests/%.c $(INTEGRATOR_OBJS) $(GP_LOADER_OBJ) $(GP_FILE_CHECKS_OBJ) \
                     tests/integrators-common.h tests/tap.h $(BUILD)/plugins/gravplug-cpu-direct.so
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests -Iintegrators -o $@ $< $(INTEGRATOR_OBJS) \
	    $(GP_LOADER_OBJ) $(GP_FILE_CHECKS_OBJ) -lgsl -lgslcblas -ldl $(LDLIBS)

integrators: $(INTEGRATOR_TESTS)

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

# tests/sim-abi10.c: cpu-direct dressed as an ABI 1.0 plugin, for the
# integrator tests of the 1.0 path (not the loader's tests/fixtures/abi10.c).
SIM_ABI10 := $(BUILD)/tests/fixtures/gravplug-sim-abi10.so
$(SIM_ABI10): tests/sim-abi10.c abi/gravplug.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -DGP_CPU_DIRECT_SO='"$(abspath $(BUILD))/plugins/gravplug-cpu-direct.so"' \
	    -o $@ $< -ldl
$(INTEGRATOR_TESTS): $(SIM_ABI10)
$(INTEGRATOR_TESTS): CPPFLAGS += -DGP_SIM_ABI10='"$(abspath $(SIM_ABI10))"'
$(BUILD)/t/integrators-path.t: $(BUILD)/plugins/gravplug-cpu-tree.so $(BUILD)/tests/fixtures/gravplug-abi11.so
$(BUILD)/t/integrators-path.t: CPPFLAGS += -DGP_ABI11_FIXTURE='"$(abspath $(BUILD))/tests/fixtures/gravplug-abi11.so"'
$(BUILD)/t/integrators-path.t: CFLAGS += -ffp-contract=off
$(BUILD)/t/python-solver11.t: $(SIM_ABI10)
$(BUILD)/t/python-solver12.t: $(BUILD)/tests/fixtures/gravplug-abi11.so
$(BUILD)/t/python-solver13.t: $(BUILD)/tests/fixtures/gravplug-abi12.so
$(BUILD)/t/gravhost-solver-path.t: $(SIM_ABI10)
$(BUILD)/t/integrators-threads.t: $(BUILD)/plugins/gravplug-cpu-tree.so
$(BUILD)/t/integrators-masses.t: $(BUILD)/plugins/gravplug-cpu-tree.so
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
# integrators-hold also runs the reversal test on cpu-tree.
$(BUILD)/t/integrators-hold.t: $(BUILD)/plugins/gravplug-cpu-tree.so
# integrators-hermite wraps cpu-direct's table (dlopen) to count what
# crosses the ABI, and checks the refusal on cpu-tree.
$(BUILD)/t/integrators-hermite.t: $(BUILD)/plugins/gravplug-cpu-tree.so
$(BUILD)/t/integrators-hermite.t: CPPFLAGS += -DGP_CPU_DIRECT_SO='"$(abspath $(BUILD))/plugins/gravplug-cpu-direct.so"'

# tests/toy-scheme.sh: an integrator added as one file and one registry
# line, run by gravhost and gravhost-mpi. The file is
# tests/fixtures/scheme_toy.c; the line is GP_EXTRA_SCHEMES, given to
# registry.c when it is compiled for a library of the test's own,
# build/toy/lib (every other object is the real library's).
TOY_LIB_DIR := $(BUILD)/toy/lib
TOY_OBJS := $(BUILD)/toy/obj/registry.o $(BUILD)/toy/obj/scheme_toy.o
$(BUILD)/toy/obj/registry.o: integrators/registry.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -ffp-contract=off -Iintegrators '-DGP_EXTRA_SCHEMES(X)=X(toy_euler)' -c $< -o $@
$(BUILD)/toy/obj/scheme_toy.o: tests/fixtures/scheme_toy.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -ffp-contract=off -Iintegrators -c $< -o $@
$(TOY_LIB_DIR)/$(HOSTLIB_REAL): $(filter-out %/integrators/registry.o,$(HOSTLIB_OBJS)) $(TOY_OBJS) abi/libgravplug.map
	@mkdir -p $(dir $@)
	$(CC) -shared -fopenmp -Wl,-soname,$(HOSTLIB_SONAME) -Wl,--version-script=abi/libgravplug.map \
	    $(LDFLAGS) -o $@ $(filter %.o,$^) $(HOSTLIB_LDLIBS)
	ln -sf $(HOSTLIB_REAL) $(dir $@)$(HOSTLIB_SONAME)
TESTS += $(BUILD)/t/toy-scheme.t
$(BUILD)/t/toy-scheme.t: tests/toy-scheme.sh tests/gravhost-lib.sh $(TOY_LIB_DIR)/$(HOSTLIB_REAL) $(GRAVHOST) \
                         $(GRAVHOST_MPI) integrators/module.mk
	@mkdir -p $(dir $@)
	@sed -e 's|@TESTLIB@|$(abspath tests/gravhost-lib.sh)|' -e 's|@TOYLIB@|$(abspath $(TOY_LIB_DIR))|' \
	     -e 's|@MPIRUN@|$(GH_MPIRUN)|' $< > $@
	@chmod +x $@
