# SPDX-License-Identifier: Apache-2.0
# host_stub/particles — gp_ic, the particle set that host_stub/ic makes and
# host_stub/snapshot reads into, linked into libgravplug.so. Below both:
# it includes only abi/. Its folder is on every compile's include path,
# as abi/ is, because ic.h and snapshot.h (included from many folders)
# include particle_set.h.
PARTICLES_SRCS := host_stub/particles/particle_set.c
PARTICLES_OBJS := $(PARTICLES_SRCS:%.c=$(BUILD)/obj/%.o)
HOSTLIB_OBJS += $(PARTICLES_OBJS)
CFLAGS += -Ihost_stub/particles
