# SPDX-License-Identifier: Apache-2.0
# examples/demo: loads every plugin found, prints its description and
# parameters and one force evaluation (`make demo`). Linked against
# libgravplug.so the way a framework would link it.
GP_DEMO := $(BUILD)/bin/gravplug-demo
BINS += $(GP_DEMO)
$(GP_DEMO): $(BUILD)/obj/examples/demo/demo.o $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< -L$(BUILD)/lib -lgravplug -Wl,-rpath,'$$ORIGIN/../lib' $(LDLIBS)

.PHONY: demo
demo: $(GP_DEMO) $(PLUGINS)
	$(GP_DEMO)
