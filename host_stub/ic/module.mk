# host_stub/ic — initial conditions, linked into libgravplug.so.
IC_SRCS := $(wildcard host_stub/ic/*.c)
IC_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(IC_SRCS))
HOSTLIB_OBJS += $(IC_OBJS)
HOSTLIB_LDLIBS += -lgsl -lgslcblas

# Tests link the IC objects directly, so they do not depend on the rest
# of the host library being buildable at that moment.
IC_TESTS := $(patsubst tests/%.c,$(BUILD)/t/%.t,$(wildcard tests/ic-*.c))
TESTS += $(IC_TESTS)
$(IC_TESTS): $(BUILD)/t/%.t: tests/%.c $(IC_OBJS) $(SNAPSHOT_OBJS) tests/tap.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests -Ihost_stub/ic -Ihost_stub/snapshot -o $@ $< \
	    $(IC_OBJS) $(SNAPSHOT_OBJS) -lgsl -lgslcblas $(SNAPSHOT_LDLIBS) $(LDLIBS)

.PHONY: ic
ic: $(IC_OBJS) $(IC_TESTS)
