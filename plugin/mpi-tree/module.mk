# SPDX-License-Identifier: Apache-2.0
# plugin/mpi-tree: cpu-tree across MPI ranks with a local essential tree
# exchange. Built when mpicc is found (OpenMPI: Debian's libopenmpi-dev);
# without it the plugin and its tests (tests/mpi/) are left out. It links
# the CPU tree and walk of plugin/octree, so every rank builds and walks
# exactly as cpu-tree does.
MPICC ?= $(shell command -v mpicc 2>/dev/null)
ifneq ($(MPICC),)
GP_HAVE_MPI := 1
MPI_CFLAGS := $(shell $(MPICC) --showme:compile 2>/dev/null)
MPI_LIBS   := $(shell $(MPICC) --showme:link 2>/dev/null)
MPIRUN     ?= $(shell command -v mpirun 2>/dev/null)

MPI_TREE_SO   := $(BUILD)/plugins/gravplug-mpi-tree.so
MPI_TREE_OBJS := $(addprefix $(BUILD)/obj/plugin/mpi-tree/,mpi_tree.o targets.o domains.o \
                   force_pass.o let.o boxes.o comm.o engine_cuda.o engine_job.o outputs_gather.o \
                   exact_gather.o)
MPI_TREE_LINK := $(MPI_TREE_OBJS) $(GP_LOADER_OBJ) $(GP_OCTREE_CPU_OBJS) \
                 $(GP_OCTREE_OBJS) $(GP_BASE_OBJS)
PLUGINS += $(MPI_TREE_SO)
$(MPI_TREE_OBJS): CFLAGS += -O3 -fno-math-errno $(MPI_CFLAGS)

$(MPI_TREE_SO): $(MPI_TREE_LINK) plugin/plugin.map
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_LDFLAGS) -fopenmp -o $@ $(MPI_TREE_LINK) $(MPI_LIBS) $(LDLIBS)

.PHONY: mpi-tree
mpi-tree: $(MPI_TREE_SO)

# bench/mpi-tree-scaling.c: one force evaluation at P ranks (time, LET bytes);
# bench/results/mpi-tree/raw/mpi-tree.md has the runs.
MPI_BENCH := $(BUILD)/bench/mpi-tree-scaling
BENCHES += $(MPI_BENCH)
$(BUILD)/obj/bench/mpi-tree-scaling.o: CFLAGS += -I. $(MPI_CFLAGS)
# It builds its own keys beside the decomposition's (GP_OCTREE_OBJS: host_tree.o's
# root cube and the keys).
MPI_BENCH_OBJS := $(BUILD)/obj/bench/mpi-tree-scaling.o $(BUILD)/obj/host_stub/mpi/decomp.o $(GP_OCTREE_OBJS)
$(MPI_BENCH): $(MPI_BENCH_OBJS) $(BUILD)/lib/libgravplug.so
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $(MPI_BENCH_OBJS) -L$(BUILD)/lib -lgravplug \
	    -Wl,-rpath,'$(abspath $(BUILD))/lib' $(MPI_LIBS) -ldl $(LDLIBS)
# host_stub/mpi/decomp.c: the Peano-Hilbert decomposition that gives each
# rank of gravhost-mpi its slice of the curve (host_stub/mpi/module.mk
# links it, with the keys and sort of $(GP_KEYS_OBJ)); tested in tests/mpi/.
MPI_DECOMP_OBJ := $(BUILD)/obj/host_stub/mpi/decomp.o
$(MPI_DECOMP_OBJ): CFLAGS += $(MPI_CFLAGS)
endif
