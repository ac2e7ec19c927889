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
# The installed plugin directory is the last place a short name is searched.
$(GP_LOADER_OBJ): CPPFLAGS += -DGP_INSTALL_PLUGIN_DIR='"$(PREFIX)/lib/gravplug"'
