# SPDX-License-Identifier: Apache-2.0
# examples/c-swap: swaps solvers mid-run through the loader (see swap.c).
# Linked against libgravplug.so the way a user's program would be.
GP_SWAP := $(BUILD)/bin/gravplug-swap
BINS += $(GP_SWAP)
$(BUILD)/obj/examples/c-swap/swap.o: CPPFLAGS += -Ihost_stub/ic
$(GP_SWAP): $(BUILD)/obj/examples/c-swap/swap.o $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< -L$(BUILD)/lib -lgravplug -Wl,-rpath,'$$ORIGIN/../lib' $(LDLIBS)

.PHONY: swap-example
swap-example: $(GP_SWAP) $(PLUGINS)
	$(GP_SWAP)
