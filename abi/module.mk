# SPDX-License-Identifier: Apache-2.0
# abi: the plugin loader, part of the host library build/lib/libgravplug.so.
# (with plugin_choice.c: the plugins in the order a host that names none
# tries them, by their capabilities)
GP_LOADER_SRCS := abi/gravplug_loader.c abi/plugin_choice.c
GP_LOADER_OBJ := $(GP_LOADER_SRCS:%.c=$(BUILD)/obj/%.o)
HOSTLIB_OBJS += $(GP_LOADER_OBJ)
# Regular files only, for everything that reads or writes data: the library
# has a hidden copy, gravhost links its own (host_stub/module.mk).
GP_FILE_CHECKS_OBJ := $(BUILD)/obj/abi/file_checks.o
HOSTLIB_OBJS += $(GP_FILE_CHECKS_OBJ)
# The key rule's host loops (gravplug_keys.h: bounds, root cube, keys, radix
# sort), the order the tree plugins build in and gravhost-mpi cuts into
# slices: linked by both (GP_OCTREE_OBJS, GH_DECOMP_OBJS), not part of the
# library. Integer code written to vectorise (AVX2 and AVX-512 clones picked
# at load time); portable x86-64-v2 baseline, no -march=native.
GP_KEYS_OBJ := $(BUILD)/obj/abi/gravplug_keys.o
GP_KEYS_CFLAGS := -O3
ifeq ($(shell uname -m),x86_64)
GP_KEYS_CFLAGS += -march=x86-64-v2
endif
$(GP_KEYS_OBJ): CFLAGS += $(GP_KEYS_CFLAGS)
# The installed plugin directory is the last place a short name is searched.
$(GP_LOADER_OBJ): CPPFLAGS += -DGP_INSTALL_PLUGIN_DIR='"$(PREFIX)/lib/gravplug"'
