# plugin/mpi-tree: cpu-tree across MPI ranks with a local essential tree
# exchange. Built when mpicc is found (OpenMPI: Debian's libopenmpi-dev);
# without it the plugin and its tests are left out. It links cpu-tree's own
# tree_state.o and walk.o, so every rank builds and walks exactly as
# cpu-tree does.
MPICC ?= $(shell command -v mpicc 2>/dev/null)
ifneq ($(MPICC),)
GP_HAVE_MPI := 1
MPI_CFLAGS := $(shell $(MPICC) --showme:compile 2>/dev/null)
MPI_LIBS   := $(shell $(MPICC) --showme:link 2>/dev/null)
MPIRUN     ?= $(shell command -v mpirun 2>/dev/null)

MPI_TREE_SO   := $(BUILD)/plugins/gravplug-mpi-tree.so
MPI_TREE_OBJS := $(addprefix $(BUILD)/obj/plugin/mpi-tree/,mpi_tree.o let.o comm.o)
MPI_TREE_LINK := $(MPI_TREE_OBJS) $(addprefix $(BUILD)/obj/plugin/cpu-tree/,tree_state.o walk.o) \
                 $(GP_CORE_OBJS) $(GP_COMMON_OBJS)
PLUGINS += $(MPI_TREE_SO)
$(MPI_TREE_OBJS): CFLAGS += -O3 -fno-math-errno $(MPI_CFLAGS)

$(MPI_TREE_SO): $(MPI_TREE_LINK) plugin/plugin.map
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_LDFLAGS) -fopenmp -o $@ $(MPI_TREE_LINK) $(MPI_LIBS) $(LDLIBS)

.PHONY: mpi-tree
mpi-tree: $(MPI_TREE_SO)
endif
