# SPDX-License-Identifier: Apache-2.0
# host_stub/ — gravhost, the reference host program (run, info, list,
# integrators, compare). Its subdirectories ic/, snapshot/ and plot/ have
# their own module.mk. `make run` is the main job: the default simulation.
GRAVHOST_SRCS := $(wildcard host_stub/*.c)
GRAVHOST_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(GRAVHOST_SRCS)) $(GP_FILE_CHECKS_OBJ)
GRAVHOST := $(BUILD)/bin/gravhost
BINS += $(GRAVHOST)
# its manual page (tests/gravhost/gravhost-help.sh holds it to each command's --help)
INSTALL_MAN1 += docs/gravhost.1

$(GRAVHOST_OBJS): CPPFLAGS += -Iintegrators -Ihost_stub/ic -Ihost_stub/snapshot
# Paths and messages are built with snprintf into fixed buffers on purpose
# (truncation is safe there); silence GCC's guesses about it.
$(GRAVHOST_OBJS): CFLAGS += $(NO_TRUNCATION_WARNING)
$(GRAVHOST): $(GRAVHOST_OBJS) $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(GRAVHOST_OBJS) -L$(BUILD)/lib -lgravplug -Wl,-rpath,'$$ORIGIN/../lib' -lconfig $(LDLIBS)

.PHONY: gravhost run
gravhost: $(GRAVHOST)

# The main job: the default simulation on the best plugin this machine has
# (plugin = "auto": cuda-tree with a GPU, else cpu-tree), then its plots.
# Output: out/default/ (diagnostics.tsv, snap_*.h5, checkpoint.gpck, *.png;
# the projections zoom on the central 1.2 units, where bulge and disk are).
RUN_CONFIG ?= host_stub/default.cfg
RUN_OUT    ?= out/default
run: $(GRAVHOST) $(PLUGINS)
	$(GRAVHOST) run $(RUN_CONFIG) --output $(RUN_OUT) --progress
	@if [ -f host_stub/plot/gravplot.py ]; then \
	    python3 host_stub/plot/gravplot.py $(RUN_OUT) --extent 1.2 --axes xy,xz && \
	    echo "plots written to $(RUN_OUT)/ (xy.png face-on, xz.png edge-on: the central 1.2 units)"; \
	else echo "host_stub/plot/gravplot.py not found: no plots"; fi
