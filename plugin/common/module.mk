# plugin/common: backend-neutral helpers linked into every plugin
# (errors, validation, parameter table, particle storage, stats, timer).
# A plugin's link rule lists $(GP_COMMON_OBJS) among its objects.
GP_COMMON_SRCS := plugin/common/plugin_base.c plugin/common/params.c plugin/common/particles.c plugin/common/state.c
GP_COMMON_SRCS += plugin/common/outputs.c
GP_COMMON_OBJS := $(GP_COMMON_SRCS:%.c=$(BUILD)/obj/%.o)
# predict must equal the host's evaluation of the ABI expression bit for bit.
$(BUILD)/obj/plugin/common/state.o: CFLAGS += -ffp-contract=off
