# SPDX-License-Identifier: Apache-2.0
# host_stub/ic — initial conditions, linked into libgravplug.so.
# (gravic's objects, ICSNAP_OBJS, are listed in host_stub/snapshot/module.mk,
# which is read after this file and knows both object lists; the IC tests
# are tests/lib/.)
IC_SRCS := $(wildcard host_stub/ic/*.c)
IC_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(IC_SRCS))
HOSTLIB_OBJS += $(IC_OBJS)
HOSTLIB_LDLIBS += -lgsl -lgslcblas
$(IC_OBJS): CPPFLAGS += -Ihost_stub/ic -Ihost_stub/snapshot
