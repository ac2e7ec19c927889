# SPDX-License-Identifier: Apache-2.0
# tests/lib: the host libraries. libgravplug.so: the loader (abi-loader,
# on the fixtures), its exported names, the initial conditions and the
# snapshots; libgravplug-g6 (host_stub/g6) against GRAPE-6's formulas and
# clients.

# abi-loader links the loader object directly (not libgravplug.so, so it
# does not depend on the rest of the host library), with dlopen-swap.c.
TESTS += $(BUILD)/t/abi-loader.t
$(BUILD)/obj/tests/lib/abi-loader.o: CFLAGS += -Itests
$(BUILD)/obj/tests/lib/abi-loader.o: CPPFLAGS += -DGP_TEST_FIXTURES='"$(abspath $(BUILD))/tests/fixtures"'
$(BUILD)/t/abi-loader.t: $(BUILD)/obj/tests/lib/abi-loader.o $(BUILD)/obj/tests/lib/dlopen-swap.o $(GP_LOADER_OBJ) \
                         $(BUILD)/plugins/gravplug-cpu-direct.so $(GP_FIXTURES)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $(BUILD)/obj/tests/lib/abi-loader.o $(BUILD)/obj/tests/lib/dlopen-swap.o $(GP_LOADER_OBJ) -ldl -lpthread $(LDLIBS)

# The initial conditions and the snapshots, linked with their objects
# (ICSNAP_OBJS, host_stub/snapshot/module.mk).
ICSNAP_CTESTS := $(patsubst tests/lib/%.c,$(BUILD)/t/%.t,$(wildcard tests/lib/ic-*.c tests/lib/snapshot-*.c))
ICSNAP_PYTESTS := $(patsubst tests/lib/%.py,$(BUILD)/t/%.t,$(wildcard tests/lib/snapshot-*.py))
TESTS += $(ICSNAP_CTESTS) $(ICSNAP_PYTESTS)
$(ICSNAP_CTESTS): $(BUILD)/t/%.t: tests/lib/%.c $(ICSNAP_OBJS) tests/tap.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests -Ihost_stub/ic -Ihost_stub/snapshot -o $@ $< \
	    $(ICSNAP_OBJS) $(ICSNAP_LIBS) $(LDLIBS)
# Python TAP scripts: copied with their shebang, @GP_SOURCE@ replaced by
# the source tree; they find the build through GP_BUILD (default: the
# script's ../).
$(ICSNAP_PYTESTS): $(BUILD)/t/%.t: tests/lib/%.py
	@mkdir -p $(dir $@)
	sed 's|@GP_SOURCE@|$(abspath .)|' $< > $@ && chmod +x $@
ic snapshot: $(ICSNAP_CTESTS) $(ICSNAP_PYTESTS)

# Script tests: the host library's exported names, libgravplug-g6's
# exports and the GRAPE-6 clients built against it.
LIB_SH_TESTS := abi-hostlib-exports g6-clients g6-exports
TESTS += $(LIB_SH_TESTS:%=$(BUILD)/t/%.t)
$(BUILD)/t/abi-hostlib-exports.t: $(HOSTLIB)
$(BUILD)/t/g6-clients.t: $(G6_STATIC) $(BUILD)/plugins/gravplug-cpu-direct.so .ci/build-g6-workers tests/lib/g6_clients.py
$(BUILD)/t/g6-exports.t: $(G6_STATIC) $(G6_SHARED) host_stub/g6/g6.syms
$(LIB_SH_TESTS:%=$(BUILD)/t/%.t): $(BUILD)/t/%.t: tests/lib/%.sh tests/tap-lib.sh tests/lib/module.mk
	$(gp_sh_test)

# ---- libgravplug-g6 (host_stub/g6) against GRAPE-6's formulas -------------
# One program, linked with the static archive alone as a client would (and
# the loader object, to name the route in TAP); one wrapper per plugin,
# cpu-direct, cpu-tree and mpi-tree once more forced onto the held-slot
# route (the tree plugins' compute_field_ex is exact: the held route is
# their tree).
# mpi-tree runs as one process (a singleton, no mpirun): the library
# refuses it at P > 1 (tests/mpi/mpi-g6-ranks.c); its field route is its
# exact gather (plugin/mpi-tree/README.md, ABI 1.3), its held route the
# tree, held to cpu-tree's tolerance.
G6_API_TEST := $(BUILD)/tests/g6-api
$(BUILD)/obj/tests/lib/g6-api.o: CFLAGS += -Itests -Ihost_stub/g6
$(G6_API_TEST): $(BUILD)/obj/tests/lib/g6-api.o $(G6_STATIC) $(GP_LOADER_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(BUILD)/obj/tests/lib/g6-api.o $(GP_LOADER_OBJ) $(G6_STATIC) -ldl $(LDLIBS)
G6_API_WRAPPERS := $(BUILD)/t/g6-api-cpu-direct.t $(BUILD)/t/g6-api-cpu-tree.t $(BUILD)/t/g6-api-held-cpu-direct.t \
                   $(BUILD)/t/g6-api-held-cpu-tree.t \
                   $(if $(EMU),$(BUILD)/t/g6-api-emu-cuda-direct.t) \
                   $(if $(MPICC),$(BUILD)/t/g6-api-mpi-tree.t $(BUILD)/t/g6-api-held-mpi-tree.t)
TESTS += $(G6_API_WRAPPERS)
G6_API_ENV_cpu-direct := GRAVPLUG_G6_PLUGIN=$(abspath $(BUILD)/plugins/gravplug-cpu-direct.so)
G6_API_ENV_held-cpu-direct := $(G6_API_ENV_cpu-direct) GRAVPLUG_G6_ROUTE=held
# the tree: forces (the jerk worst) within its opening-angle error, theta
# set through GRAVPLUG_G6_PARAMS; nn and lists stay exact
G6_API_ENV_cpu-tree := GRAVPLUG_G6_PLUGIN=$(abspath $(BUILD)/plugins/gravplug-cpu-tree.so) GRAVPLUG_G6_PARAMS=theta=0.3 GP_G6_TEST_REL=5e-2
G6_API_ENV_held-cpu-tree := $(G6_API_ENV_cpu-tree) GRAVPLUG_G6_ROUTE=held
G6_API_ENV_mpi-tree := GRAVPLUG_G6_PLUGIN=$(abspath $(MPI_TREE_SO)) GRAVPLUG_G6_PARAMS=theta=0.3 GP_G6_TEST_REL=5e-2 \
                      OMP_NUM_THREADS=1
G6_API_ENV_held-mpi-tree := $(G6_API_ENV_mpi-tree) GRAVPLUG_G6_ROUTE=held
G6_API_ENV_emu-cuda-direct := GRAVPLUG_G6_PLUGIN=$(abspath $(EMU)/plugins/gravplug-cuda-direct.so) GP_G6_TEST_REL=1e-4
$(BUILD)/t/g6-api-cpu-direct.t $(BUILD)/t/g6-api-held-cpu-direct.t: $(BUILD)/plugins/gravplug-cpu-direct.so
$(BUILD)/t/g6-api-cpu-tree.t $(BUILD)/t/g6-api-held-cpu-tree.t: $(BUILD)/plugins/gravplug-cpu-tree.so
$(BUILD)/t/g6-api-emu-cuda-direct.t: $(EMU)/plugins/gravplug-cuda-direct.so
$(BUILD)/t/g6-api-mpi-tree.t $(BUILD)/t/g6-api-held-mpi-tree.t: $(MPI_TREE_SO)
$(G6_API_WRAPPERS): $(BUILD)/t/g6-api-%.t: $(G6_API_TEST) tests/lib/module.mk
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\n# libgravplug-g6 on %s (generated by tests/lib/module.mk)\nexec env %s "%s"\n' \
	    '$*' '$(G6_API_ENV_$*)' '$(abspath $(G6_API_TEST))' > $@
	@chmod +x $@

# tests/lib/abi-origin-runpath.sh: the loader on a plugin whose RUNPATH is
# $ORIGIN (tests/fixtures/module.mk's origin fixtures).
TESTS += $(BUILD)/t/abi-origin-runpath.t
$(BUILD)/t/abi-origin-runpath.t: tests/lib/abi-origin-runpath.sh tests/tap-lib.sh tests/lib/module.mk $(GRAVHOST) \
                                 $(GP_ORIGIN_FIXTURES)
	@mkdir -p $(dir $@)
	@sed -e 's|@ROOT@|$(abspath .)|g' -e 's|@BUILD@|$(abspath $(BUILD))|g' $< > $@
	@chmod +x $@
