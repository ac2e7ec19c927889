# SPDX-License-Identifier: Apache-2.0
# host_stub/snapshot — HDF5 snapshots (Gadget/SWIFT layout), linked into
# libgravplug.so; and gravic, the initial conditions from the shell.
HDF5_CPPFLAGS := -I/usr/include/hdf5/serial
HDF5_LDLIBS   := -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5
SNAPSHOT_SRCS := $(wildcard host_stub/snapshot/*.c)
SNAPSHOT_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(SNAPSHOT_SRCS))
HOSTLIB_OBJS += $(SNAPSHOT_OBJS)
HOSTLIB_LDLIBS += $(HDF5_LDLIBS)
$(SNAPSHOT_OBJS): CPPFLAGS += $(HDF5_CPPFLAGS) -Ihost_stub/ic -Ihost_stub/snapshot

# The objects gravic links, and the IC and snapshot tests
# (tests/lib/module.mk) too, so they do not depend on the rest of the host
# library being buildable at that moment.
ICSNAP_OBJS := $(IC_OBJS) $(SNAPSHOT_OBJS) $(PARTICLES_OBJS) $(GP_FILE_CHECKS_OBJ)
ICSNAP_LIBS := -fopenmp -lgsl -lgslcblas $(HDF5_LDLIBS) -lm

.PHONY: ic snapshot
ic snapshot: $(ICSNAP_OBJS)

# gravic: initial conditions to a snapshot or text file from the shell.
GRAVIC := $(BUILD)/bin/gravic
BINS += $(GRAVIC)
$(GRAVIC): $(BUILD)/obj/host_stub/ic/tool/gravic.o $(ICSNAP_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(ICSNAP_LIBS) $(LDLIBS)
$(BUILD)/obj/host_stub/ic/tool/gravic.o: CPPFLAGS += -Ihost_stub/ic -Ihost_stub/snapshot
ic snapshot: $(GRAVIC)
