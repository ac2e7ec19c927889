# SPDX-License-Identifier: Apache-2.0
# tests/plugin/base: unit tests of plugin/base (the parameter table, the
# input scans, the owed predict), linked with its objects alone.
BASE_TEST_NAMES := base-params base-scan
TESTS += $(BASE_TEST_NAMES:%=$(BUILD)/t/%.t)
$(BASE_TEST_NAMES:%=$(BUILD)/obj/tests/plugin/base/%.o): CFLAGS += -Itests
$(BASE_TEST_NAMES:%=$(BUILD)/t/%.t): $(BUILD)/t/%.t: $(BUILD)/obj/tests/plugin/base/%.o $(GP_BASE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $^ $(LDLIBS)
# base-lazy: predict_lazy.c, realloc wrapped by the linker so that the
# list's allocation can fail on cue.
TESTS += $(BUILD)/t/base-lazy.t
$(BUILD)/obj/tests/plugin/base/base-lazy.o: CFLAGS += -Itests
$(BUILD)/t/base-lazy.t: $(BUILD)/obj/tests/plugin/base/base-lazy.o $(GP_BASE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -Wl,--wrap=realloc -o $@ $^ $(LDLIBS)
