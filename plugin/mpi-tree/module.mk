# SPDX-License-Identifier: Apache-2.0
# plugin/mpi-tree: cpu-tree across MPI ranks with a local essential tree
# exchange. Built when mpicc is found (OpenMPI: Debian's libopenmpi-dev);
# without it the plugin and its tests are left out. It links the CPU tree
# and walk of plugin/octree, so every rank builds and walks exactly as
# cpu-tree does.
MPICC ?= $(shell command -v mpicc 2>/dev/null)
ifneq ($(MPICC),)
GP_HAVE_MPI := 1
MPI_CFLAGS := $(shell $(MPICC) --showme:compile 2>/dev/null)
MPI_LIBS   := $(shell $(MPICC) --showme:link 2>/dev/null)
MPIRUN     ?= $(shell command -v mpirun 2>/dev/null)

# A test under mpirun: tests/mpi-run.sh with its blanks filled.
# $(call mpi_run_test,NP,PROGRAM,ARGS) as the whole recipe of build/t/NAME.t.
define mpi_run_test
	@mkdir -p $(dir $@)
	@sed -e 's|@MPIRUN@|$(MPIRUN)|' -e 's|@NP@|$(1)|' -e 's|@PROGRAM@|$(abspath $(2))|' \
	     -e 's|@ARGS@|$(3)|' tests/mpi-run.sh > $@
	@chmod +x $@
endef

MPI_TREE_SO   := $(BUILD)/plugins/gravplug-mpi-tree.so
MPI_TREE_OBJS := $(addprefix $(BUILD)/obj/plugin/mpi-tree/,mpi_tree.o targets.o domains.o \
                   force_pass.o let.o boxes.o comm.o engine_cuda.o engine_job.o outputs_gather.o)
MPI_TREE_LINK := $(MPI_TREE_OBJS) $(GP_OCTREE_CPU_OBJS) \
                 $(GP_OCTREE_OBJS) $(GP_BASE_OBJS)
PLUGINS += $(MPI_TREE_SO)
$(MPI_TREE_OBJS): CFLAGS += -O3 -fno-math-errno $(MPI_CFLAGS)

$(MPI_TREE_SO): $(MPI_TREE_LINK) plugin/plugin.map
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_LDFLAGS) -fopenmp -o $@ $(MPI_TREE_LINK) $(MPI_LIBS) $(LDLIBS)

.PHONY: mpi-tree
mpi-tree: $(MPI_TREE_SO)

# ---- tests: tests/mpi-accuracy.c at P = 1..4 under mpirun (oversubscribed,
# one OpenMP thread per rank); each wrapper skips when mpirun is missing.
MPI_ACC := $(BUILD)/tests/mpi-accuracy
$(BUILD)/obj/tests/mpi-accuracy.o: CFLAGS += -I. -Itests $(MPI_CFLAGS)
$(MPI_ACC): $(BUILD)/obj/tests/mpi-accuracy.o $(GP_OCTREE_OBJS) $(BUILD)/lib/libgravplug.so
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $< $(GP_OCTREE_OBJS) -L$(BUILD)/lib -lgravplug -Wl,-rpath,'$(abspath $(BUILD))/lib' $(MPI_LIBS) -ldl $(LDLIBS)

MPI_TESTS := $(foreach p,1 2 3 4,$(BUILD)/t/mpi-accuracy-p$(p).t)
TESTS += $(MPI_TESTS)
$(BUILD)/t/mpi-accuracy-p%.t: $(MPI_ACC) $(MPI_TREE_SO) $(BUILD)/plugins/gravplug-cpu-tree.so \
                              $(BUILD)/plugins/gravplug-cpu-direct.so tests/mpi-run.sh plugin/mpi-tree/module.mk
	$(call mpi_run_test,$*,$(MPI_ACC),)
# tests/mpi-boxes.c: the domain boxes' wire format (outward rounding,
# increments, nearness); boxes.c needs no MPI, so no mpirun either.
TESTS += $(BUILD)/t/mpi-boxes.t
$(BUILD)/obj/tests/mpi-boxes.o: CFLAGS += -Itests
$(BUILD)/t/mpi-boxes.t: $(BUILD)/obj/tests/mpi-boxes.o $(BUILD)/obj/plugin/mpi-tree/boxes.o
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDLIBS) -lm
# Conformance at P = 2: tests/conformance.c compiled unchanged into an MPI
# wrapper (tests/mpi-conformance.c) that spreads every call over the ranks.
# (P = 1 is the generated conformance-mpi-tree.t: no mpirun, a singleton.)
MPI_CONF := $(BUILD)/tests/mpi-conformance
$(BUILD)/obj/tests/mpi-conformance.o: CFLAGS += -Itests $(MPI_CFLAGS)
$(MPI_CONF): $(BUILD)/obj/tests/mpi-conformance.o $(BUILD)/obj/tests/conformance_checks.o $(BUILD)/obj/tests/conformance_abi11.o \
          $(BUILD)/obj/tests/conformance_abi12.o $(GP_LOADER_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $^ $(MPI_LIBS) -ldl -lpthread $(LDLIBS)
TESTS += $(BUILD)/t/conformance-mpi-tree-p2.t
$(BUILD)/t/conformance-mpi-tree-p2.t: $(MPI_CONF) $(MPI_TREE_SO) tests/mpi-run.sh plugin/mpi-tree/module.mk
	$(call mpi_run_test,2,$(MPI_CONF),$(abspath $(MPI_TREE_SO)))
# tests/mpi-collectives.c (P = 2): parameters that differ between the ranks
# (at init, by set_param) refused on every rank before any collective they
# start; two threads making and using an instance each at once.
MPI_COLL := $(BUILD)/tests/mpi-collectives
$(BUILD)/obj/tests/mpi-collectives.o: CFLAGS += -Itests $(MPI_CFLAGS)
$(MPI_COLL): $(BUILD)/obj/tests/mpi-collectives.o $(GP_LOADER_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $^ $(MPI_LIBS) -ldl -lpthread $(LDLIBS) -lm
TESTS += $(BUILD)/t/mpi-collectives-p2.t
$(BUILD)/t/mpi-collectives-p2.t: $(MPI_COLL) $(MPI_TREE_SO) tests/mpi-run.sh plugin/mpi-tree/module.mk
	$(call mpi_run_test,2,$(MPI_COLL),$(abspath $(MPI_TREE_SO)))
# its fuzz mode: 300 cases of one rank's parameter (name, value, at init or
# by set_param) other than the rest; the long run is in bench/results/fuzz.md:
# mpirun -np 2 build/tests/mpi-collectives build/plugins/gravplug-mpi-tree.so fuzz 10000 SEED
TESTS += $(BUILD)/t/mpi-fuzz-params-p2.t
$(BUILD)/t/mpi-fuzz-params-p2.t: $(MPI_COLL) $(MPI_TREE_SO) tests/mpi-run.sh plugin/mpi-tree/module.mk
	$(call mpi_run_test,2,$(MPI_COLL),$(abspath $(MPI_TREE_SO)) fuzz 300 1)
# extreme-scales on mpi-tree, a singleton (P = 1: each rank of a larger run
# would hold its own copy of the test's particles): results that overflow
# double are refused on every rank, not answered with inf.
TESTS += $(BUILD)/t/extreme-scales-mpi-tree.t
$(BUILD)/t/extreme-scales-mpi-tree.t: $(BUILD)/t/extreme-scales.t $(MPI_TREE_SO) plugin/mpi-tree/module.mk
	@printf '#!/bin/sh\n# extreme-scales on mpi-tree, one process (a singleton MPI run)\nOMP_NUM_THREADS=1 exec "%s" "%s"\n' \
	    '$(abspath $(BUILD)/t/extreme-scales.t)' '$(abspath $(MPI_TREE_SO))' > $@
	@chmod +x $@
# bench/mpi-tree-scaling.c: one force evaluation at P ranks (time, LET bytes);
# bench/results/mpi-tree.md has the runs.
MPI_BENCH := $(BUILD)/bench/mpi-tree-scaling
BENCHES += $(MPI_BENCH)
$(BUILD)/obj/bench/mpi-tree-scaling.o: CFLAGS += -I. $(MPI_CFLAGS)
$(MPI_BENCH): $(BUILD)/obj/bench/mpi-tree-scaling.o $(GH_DECOMP_OBJS) $(BUILD)/lib/libgravplug.so
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $(BUILD)/obj/bench/mpi-tree-scaling.o $(GH_DECOMP_OBJS) -L$(BUILD)/lib -lgravplug \
	    -Wl,-rpath,'$(abspath $(BUILD))/lib' $(MPI_LIBS) -ldl $(LDLIBS)
# host_stub/mpi/decomp.c: the Peano-Hilbert decomposition that gives each
# rank of gravhost-mpi its slice of the curve (host_stub/mpi/module.mk
# links it, with the keys and sort of $(GP_OCTREE_OBJS)); tests at P = 1, 3, 4.
MPI_DECOMP_OBJ := $(BUILD)/obj/host_stub/mpi/decomp.o
$(MPI_DECOMP_OBJ): CFLAGS += $(MPI_CFLAGS)
$(BUILD)/obj/tests/mpi-decomp.o: CFLAGS += -I. -Itests $(MPI_CFLAGS)
$(BUILD)/tests/mpi-decomp: $(BUILD)/obj/tests/mpi-decomp.o $(MPI_DECOMP_OBJ) $(GP_OCTREE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $^ $(MPI_LIBS) $(LDLIBS)
MPI_DECOMP_TESTS := $(foreach p,1 3 4,$(BUILD)/t/mpi-decomp-p$(p).t)
TESTS += $(MPI_DECOMP_TESTS)
$(BUILD)/t/mpi-decomp-p%.t: $(BUILD)/tests/mpi-decomp tests/mpi-run.sh plugin/mpi-tree/module.mk
	$(call mpi_run_test,$*,$(BUILD)/tests/mpi-decomp,)
# tests/mpi-leapfrog.c: mpi-tree + gp_mpi_decompose (migration every 10
# steps) in a leapfrog, against cpu-tree alone: energy, Lagrangian radii.
$(BUILD)/obj/tests/mpi-leapfrog.o: CFLAGS += -I. -Itests $(MPI_CFLAGS)
$(BUILD)/tests/mpi-leapfrog: $(BUILD)/obj/tests/mpi-leapfrog.o $(MPI_DECOMP_OBJ) $(GP_OCTREE_OBJS) $(GP_LOADER_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $^ $(MPI_LIBS) -ldl $(LDLIBS)
MPI_LEAP_TESTS := $(foreach p,2 4,$(BUILD)/t/mpi-leapfrog-p$(p).t)
TESTS += $(MPI_LEAP_TESTS)
$(BUILD)/t/mpi-leapfrog-p%.t: $(BUILD)/tests/mpi-leapfrog $(MPI_TREE_SO) $(BUILD)/plugins/gravplug-cpu-tree.so \
                             tests/mpi-run.sh plugin/mpi-tree/module.mk
	$(call mpi_run_test,$*,$(BUILD)/tests/mpi-leapfrog,)
# tests/mpi-gpsim.c: gp_sim (leapfrog) on every rank with mpi-tree, particles
# migrating between legs, against cpu-tree in one process (P = 2, 4).
$(BUILD)/obj/tests/mpi-gpsim.o: CFLAGS += -I. -Itests $(MPI_CFLAGS)
$(BUILD)/tests/mpi-gpsim: $(BUILD)/obj/tests/mpi-gpsim.o $(MPI_DECOMP_OBJ) $(GP_OCTREE_OBJS) $(BUILD)/lib/libgravplug.so
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $(BUILD)/obj/tests/mpi-gpsim.o $(MPI_DECOMP_OBJ) $(GP_OCTREE_OBJS) -L$(BUILD)/lib -lgravplug \
	    -Wl,-rpath,'$(abspath $(BUILD))/lib' $(MPI_LIBS) -ldl $(LDLIBS)
MPI_GPSIM_TESTS := $(foreach p,2 4,$(BUILD)/t/mpi-gpsim-p$(p).t)
TESTS += $(MPI_GPSIM_TESTS)
$(BUILD)/t/mpi-gpsim-p%.t: $(BUILD)/tests/mpi-gpsim $(MPI_TREE_SO) $(BUILD)/plugins/gravplug-cpu-tree.so \
                          tests/mpi-run.sh plugin/mpi-tree/module.mk
	$(call mpi_run_test,$*,$(BUILD)/tests/mpi-gpsim,)
# tests/mpi-engine-cuda.c: engine = cuda-tree at P = 1, 2 with cuda-tree
# built on the CPU emulation of CUDA ($(EMU), plugin/cuda-tree/module.mk),
# and the real (device-less here) build's refusal. Needs the CUDA toolkit.
ifneq ($(GP_HAVE_CUDA),)
MPI_ENGINE_CUDA := $(BUILD)/tests/mpi-engine-cuda
$(BUILD)/obj/tests/mpi-engine-cuda.o: CFLAGS += -Itests $(MPI_CFLAGS)
$(MPI_ENGINE_CUDA): $(BUILD)/obj/tests/mpi-engine-cuda.o $(GP_LOADER_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $^ $(MPI_LIBS) -ldl -lpthread $(LDLIBS) -lm
MPI_ENGINE_CUDA_TESTS := $(foreach p,1 2,$(BUILD)/t/mpi-engine-cuda-p$(p).t)
TESTS += $(MPI_ENGINE_CUDA_TESTS)
$(BUILD)/t/mpi-engine-cuda-p%.t: $(MPI_ENGINE_CUDA) $(MPI_TREE_SO) $(EMU)/plugins/gravplug-cuda-tree.so \
                                $(CUDA_TREE_SO) $(BUILD)/plugins/gravplug-cpu-tree.so \
                                $(BUILD)/plugins/gravplug-cpu-direct.so tests/mpi-run.sh plugin/mpi-tree/module.mk
	$(call mpi_run_test,$*,$(MPI_ENGINE_CUDA),$(abspath $(EMU)/plugins/gravplug-cuda-tree.so) $(abspath $(CUDA_TREE_SO)))
endif
else
# Without mpicc: one test that says why mpi-tree is missing.
TESTS += $(BUILD)/t/mpi-tree-skip.t
$(BUILD)/t/mpi-tree-skip.t: plugin/mpi-tree/module.mk
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\necho "1..0 # SKIP mpicc not found: mpi-tree is not built (install libopenmpi-dev)"\n' > $@
	@chmod +x $@
endif
