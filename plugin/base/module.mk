# SPDX-License-Identifier: Apache-2.0
# plugin/base: backend-neutral helpers linked into every plugin
# (errors, validation, parameter table, particle storage, stats, timer).
# A plugin's link rule lists $(GP_BASE_OBJS) among its objects.
GP_BASE_SRCS := $(addprefix plugin/base/,errors.c instance.c params.c scan.c subsets.c \
                  particles.c state.c outputs.c stats.c neighbours.c \
                  groups.c exact_ex.c)
GP_BASE_OBJS := $(GP_BASE_SRCS:%.c=$(BUILD)/obj/%.o)
# predict must equal the host's evaluation of the ABI expression bit for bit.
$(BUILD)/obj/plugin/base/state.o: CFLAGS += -ffp-contract=off
# ABI 1.3's exact pass: pair steps with the shared expression's bits.
$(BUILD)/obj/plugin/base/exact_ex.o: CFLAGS += -ffp-contract=off
