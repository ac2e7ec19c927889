# SPDX-License-Identifier: Apache-2.0
# host_stub/mpi — gravhost-mpi: gravhost's own objects with par_serial.o
# swapped for par_mpi.o (host_stub/par.h), so `mpirun -np P gravhost-mpi
# run CONFIG` runs one simulation over P ranks with the mpi-tree plugin.
# Built only when mpicc is found; gravhost itself never links MPI, so
# without mpirun nothing changes. (This file is read before
# plugin/mpi-tree/module.mk, so it asks for mpicc itself.)
GH_MPICC := $(shell command -v mpicc 2>/dev/null)
ifneq ($(GH_MPICC),)
GRAVHOST_MPI := $(BUILD)/bin/gravhost-mpi
BINS += $(GRAVHOST_MPI)
GH_MPI_CFLAGS := $(shell $(GH_MPICC) --showme:compile 2>/dev/null)
GH_MPI_LIBS   := $(shell $(GH_MPICC) --showme:link 2>/dev/null)
GH_MPIRUN     := $(shell command -v mpirun 2>/dev/null)
# The decomposition (decomp.o) takes its keys and radix sort from the tree
# build's host driver (plugin/octree/host_tree.o): GH_DECOMP_OBJS.
GH_DECOMP_OBJS := $(BUILD)/obj/host_stub/mpi/decomp.o $(GP_OCTREE_OBJS)
GH_MPI_OBJS := $(filter-out %/par_serial.o,$(GRAVHOST_OBJS)) $(BUILD)/obj/host_stub/mpi/par_mpi.o \
               $(GH_DECOMP_OBJS)
$(BUILD)/obj/host_stub/mpi/par_mpi.o: CPPFLAGS += -Iintegrators -Ihost_stub -Ihost_stub/mpi
$(BUILD)/obj/host_stub/mpi/par_mpi.o: CFLAGS += $(GH_MPI_CFLAGS)
$(BUILD)/obj/host_stub/mpi/par_mpi.o: CPPFLAGS += -Ihost_stub/ic   # gh_par_set_ic
$(GRAVHOST_MPI): $(GH_MPI_OBJS) $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(GH_MPI_OBJS) -L$(BUILD)/lib -lgravplug -Wl,-rpath,'$$ORIGIN/../lib' -lconfig \
	    $(GH_MPI_LIBS) $(LDLIBS)

# tests/mpi-gravhost.sh: P = 4 against P = 1 (energy error, Lagrangian
# radii), a restart at P = 2 bit-identical, refusals; skips without mpirun.
TESTS += $(BUILD)/t/mpi-gravhost.t
$(BUILD)/t/mpi-gravhost.t: tests/mpi-gravhost.sh tests/mpi-lib.sh $(GRAVHOST_MPI) $(BUILD)/tests/oom-inject.so \
                           host_stub/mpi/module.mk
	@mkdir -p $(dir $@)
	@sed -e 's|@MPIRUN@|$(GH_MPIRUN)|' -e 's|@MPILIB@|$(abspath tests/mpi-lib.sh)|' $< > $@
	@chmod +x $@

# tests/mpi-checkpoint-set.sh: P = 2 checkpoint sets replaced whole (rank 1
# alone unable to write: the last complete set kept and restartable), and
# restarts off the checkpoint grid (--t-end, SIGTERM to one rank) bit for bit.
TESTS += $(BUILD)/t/mpi-checkpoint-set.t
$(BUILD)/t/mpi-checkpoint-set.t: tests/mpi-checkpoint-set.sh tests/mpi-lib.sh $(GRAVHOST_MPI) host_stub/mpi/module.mk
	@mkdir -p $(dir $@)
	@sed -e 's|@MPIRUN@|$(GH_MPIRUN)|' -e 's|@MPILIB@|$(abspath tests/mpi-lib.sh)|' $< > $@
	@chmod +x $@

# tests/mpi-fuzz-cmdline.py: 2 ranks, rank 1 started with a mutated command
# line or environment: no hang, both ranks stop, one sentence naming the
# difference. `make test` runs 30 launches (about half a minute); the long
# run is in bench/results/fuzz/raw/fuzz.md:
#   build/t/mpi-fuzz-cmdline.t 10000 [SEED]
TESTS += $(BUILD)/t/mpi-fuzz-cmdline.t
$(BUILD)/t/mpi-fuzz-cmdline.t: tests/mpi-fuzz-cmdline.py $(GRAVHOST_MPI) host_stub/mpi/module.mk
	@mkdir -p $(dir $@)
	@sed -e 's|@MPIRUN@|$(GH_MPIRUN)|' $< > $@
	@chmod +x $@

# tests/mpi-fuzz-failures.c: 2 ranks, one rank's write (a file size limit,
# a name taken) or read (its checkpoint damaged) failing alone: no hang, a
# sentence, and the set left restartable to a bit-identical end. One MPI
# job runs every case through gh_run (gravhost-mpi's objects but its
# main), the driver injecting each failure on one rank. `make test` runs
# 30 cases (seconds); the long run is in bench/results/fuzz/raw/fuzz.md:
#   mpirun --oversubscribe -np 2 build/tests/mpi-fuzz-failures CASES [SEED]
GH_FUZZ_FAILURES := $(BUILD)/tests/mpi-fuzz-failures
$(BUILD)/obj/tests/mpi-fuzz-failures.o: CPPFLAGS += -Itests -Ihost_stub -Iintegrators -Ihost_stub/snapshot
$(BUILD)/obj/tests/mpi-fuzz-failures.o: CFLAGS += $(GH_MPI_CFLAGS) $(NO_TRUNCATION_WARNING)
$(GH_FUZZ_FAILURES): $(BUILD)/obj/tests/mpi-fuzz-failures.o $(filter-out %/gravhost.o,$(GH_MPI_OBJS)) $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) -L$(BUILD)/lib -lgravplug -Wl,-rpath,'$(abspath $(BUILD))/lib' \
	    -lconfig $(GH_MPI_LIBS) $(LDLIBS)
TESTS += $(BUILD)/t/mpi-fuzz-failures.t
$(BUILD)/t/mpi-fuzz-failures.t: $(GH_FUZZ_FAILURES) $(BUILD)/plugins/gravplug-mpi-tree.so tests/mpi-run.sh \
                                host_stub/mpi/module.mk
	@mkdir -p $(dir $@)
	@sed -e 's|@MPIRUN@|$(GH_MPIRUN)|' -e 's|@NP@|2|' -e 's|@PROGRAM@|$(abspath $(GH_FUZZ_FAILURES))|' \
	     -e 's|@ARGS@|30 "$${GP_FUZZ_SEED:-1}"|' tests/mpi-run.sh > $@
	@chmod +x $@
endif

# tests/mpi-blocksim.c: block-kdk and block-rk2 in gp_sim on every rank with
# mpi-tree and the collective hook, migrating with their whole state at
# dt_max boundaries (no extra force call; energy as without migration and
# as cpu-tree alone; own rows re-imported bit for bit), P = 2 and 4.
GH_BLOCKSIM := $(BUILD)/tests/mpi-blocksim
$(BUILD)/obj/tests/mpi-blocksim.o: CFLAGS += -I. -Itests $(GH_MPI_CFLAGS)
$(GH_BLOCKSIM): $(BUILD)/obj/tests/mpi-blocksim.o $(GH_DECOMP_OBJS) $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $(BUILD)/obj/tests/mpi-blocksim.o $(GH_DECOMP_OBJS) -L$(BUILD)/lib \
	    -lgravplug -Wl,-rpath,'$(abspath $(BUILD))/lib' $(GH_MPI_LIBS) -ldl $(LDLIBS)
GH_BLOCKSIM_TESTS := $(foreach p,2 4,$(BUILD)/t/mpi-blocksim-p$(p).t)
TESTS += $(GH_BLOCKSIM_TESTS)
$(BUILD)/t/mpi-blocksim-p%.t: $(GH_BLOCKSIM) $(BUILD)/plugins/gravplug-mpi-tree.so \
                             $(BUILD)/plugins/gravplug-cpu-tree.so tests/mpi-run.sh host_stub/mpi/module.mk
	@mkdir -p $(dir $@)
	@sed -e 's|@MPIRUN@|$(GH_MPIRUN)|' -e 's|@NP@|$*|' -e 's|@PROGRAM@|$(abspath $(GH_BLOCKSIM))|' \
	     -e 's|@ARGS@||' tests/mpi-run.sh > $@
	@chmod +x $@
