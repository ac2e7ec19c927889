# SPDX-License-Identifier: Apache-2.0
# tests/integrators: the gp_sim API and every scheme (tests/integrators/
# integrators-*.c), and an integrator added as one file and one registry
# line (toy-scheme.sh).

# The integrators-*.c tests link the integrator objects (INTEGRATOR_OBJS,
# integrators/module.mk) and the loader directly, and load cpu-direct at
# run time through the loader.
INTEGRATOR_TESTS := $(patsubst tests/integrators/%.c,$(BUILD)/t/%.t,$(wildcard tests/integrators/integrators-*.c))
TESTS += $(INTEGRATOR_TESTS)
$(INTEGRATOR_TESTS): $(BUILD)/t/%.t: tests/integrators/%.c $(INTEGRATOR_OBJS) $(GP_LOADER_OBJ) $(GP_FILE_CHECKS_OBJ) \
                     tests/integrators/integrators-common.h tests/tap.h $(BUILD)/plugins/gravplug-cpu-direct.so
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests -Iintegrators -o $@ $< $(INTEGRATOR_OBJS) \
	    $(GP_LOADER_OBJ) $(GP_FILE_CHECKS_OBJ) -lgsl -lgslcblas -ldl $(LDLIBS)

integrators: $(INTEGRATOR_TESTS)

# The 1.0 path on cpu-direct dressed as an ABI 1.0 plugin (SIM_ABI10,
# tests/fixtures/module.mk).
$(INTEGRATOR_TESTS): $(SIM_ABI10)
$(INTEGRATOR_TESTS): CPPFLAGS += -DGP_SIM_ABI10='"$(abspath $(SIM_ABI10))"'
$(BUILD)/t/integrators-path.t: $(BUILD)/plugins/gravplug-cpu-tree.so $(BUILD)/tests/fixtures/gravplug-abi11.so
$(BUILD)/t/integrators-path.t: CPPFLAGS += -DGP_ABI11_FIXTURE='"$(abspath $(BUILD))/tests/fixtures/gravplug-abi11.so"'
$(BUILD)/t/integrators-path.t: CFLAGS += -ffp-contract=off
$(BUILD)/t/integrators-threads.t: $(BUILD)/plugins/gravplug-cpu-tree.so
$(BUILD)/t/integrators-masses.t: $(BUILD)/plugins/gravplug-cpu-tree.so
# integrators-hold also runs the reversal test on cpu-tree.
$(BUILD)/t/integrators-hold.t: $(BUILD)/plugins/gravplug-cpu-tree.so
# integrators-hermite wraps cpu-direct's table (dlopen) to count what
# crosses the ABI, and checks the refusal on cpu-tree.
$(BUILD)/t/integrators-hermite.t: $(BUILD)/plugins/gravplug-cpu-tree.so
$(BUILD)/t/integrators-hermite.t: CPPFLAGS += -DGP_CPU_DIRECT_SO='"$(abspath $(BUILD))/plugins/gravplug-cpu-direct.so"'


# tests/integrators/toy-scheme.sh: an integrator added as one file and one registry
# line, run by gravhost and gravhost-mpi. The file is
# tests/fixtures/scheme_toy.c; the line is GP_EXTRA_SCHEMES, given to
# registry.c when it is compiled for a library of the test's own,
# build/toy/lib (every other object is the real library's).
TOY_LIB_DIR := $(BUILD)/toy/lib
TOY_OBJS := $(BUILD)/toy/obj/registry.o $(BUILD)/toy/obj/scheme_toy.o
$(BUILD)/toy/obj/registry.o: integrators/schemes/registry.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -ffp-contract=off -Iintegrators '-DGP_EXTRA_SCHEMES(X)=X(toy_euler)' -c $< -o $@
$(BUILD)/toy/obj/scheme_toy.o: tests/fixtures/scheme_toy.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -ffp-contract=off -Iintegrators -c $< -o $@
$(TOY_LIB_DIR)/$(HOSTLIB_REAL): $(filter-out %/integrators/schemes/registry.o,$(HOSTLIB_OBJS)) $(TOY_OBJS) abi/libgravplug.map
	@mkdir -p $(dir $@)
	$(CC) -shared -fopenmp -Wl,-soname,$(HOSTLIB_SONAME) -Wl,--version-script=abi/libgravplug.map \
	    $(LDFLAGS) -o $@ $(filter %.o,$^) $(HOSTLIB_LDLIBS)
	ln -sf $(HOSTLIB_REAL) $(dir $@)$(HOSTLIB_SONAME)
TESTS += $(BUILD)/t/toy-scheme.t
$(BUILD)/t/toy-scheme.t: tests/integrators/toy-scheme.sh tests/gravhost/gravhost-lib.sh $(TOY_LIB_DIR)/$(HOSTLIB_REAL) $(GRAVHOST) \
                         $(GRAVHOST_MPI) tests/integrators/module.mk
	@mkdir -p $(dir $@)
	@sed -e 's|@TESTLIB@|$(abspath tests/gravhost/gravhost-lib.sh)|' -e 's|@TOYLIB@|$(abspath $(TOY_LIB_DIR))|' \
	     -e 's|@MPIRUN@|$(GH_MPIRUN)|' $< > $@
	@chmod +x $@
