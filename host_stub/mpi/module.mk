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
# The decomposition (decomp.o) takes its keys and radix sort from the ABI's
# key rule (abi/gravplug_keys.c, GP_KEYS_OBJ), the order the tree plugins
# build in: GH_DECOMP_OBJS.
GH_DECOMP_OBJS := $(BUILD)/obj/host_stub/mpi/decomp.o $(GP_KEYS_OBJ)
GH_MPI_OBJS := $(filter-out %/par_serial.o,$(GRAVHOST_OBJS)) $(BUILD)/obj/host_stub/mpi/par_mpi.o \
               $(GH_DECOMP_OBJS)
$(BUILD)/obj/host_stub/mpi/par_mpi.o: CPPFLAGS += -Iintegrators -Ihost_stub -Ihost_stub/mpi
$(BUILD)/obj/host_stub/mpi/par_mpi.o: CFLAGS += $(GH_MPI_CFLAGS)
$(BUILD)/obj/host_stub/mpi/par_mpi.o: CPPFLAGS += -Ihost_stub/ic   # gh_par_set_ic
$(GRAVHOST_MPI): $(GH_MPI_OBJS) $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(GH_MPI_OBJS) -L$(BUILD)/lib -lgravplug -Wl,-rpath,'$$ORIGIN/../lib' -lconfig \
	    $(GH_MPI_LIBS) $(LDLIBS)

# bench/ic-parallel.c: the same ICs made whole on every rank or in slices
# (bench/results/ic/raw/ic-parallel.md).
IC_PAR_BENCH := $(BUILD)/bench/ic-parallel
BENCHES += $(IC_PAR_BENCH)
$(BUILD)/obj/bench/ic-parallel.o: CPPFLAGS += -Ihost_stub/ic
$(BUILD)/obj/bench/ic-parallel.o: CFLAGS += $(GH_MPI_CFLAGS)
$(IC_PAR_BENCH): $(BUILD)/obj/bench/ic-parallel.o $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -L$(BUILD)/lib -lgravplug -Wl,-rpath,'$(abspath $(BUILD))/lib' $(GH_MPI_LIBS) $(LDLIBS)
endif
