# plugin/core: backend-neutral tree code (headers, GP_HD) plus the host
# driver of the tree build. Tests: build/t/core-*.t and build/t/tree-*.t.
GP_CORE_OBJS := $(BUILD)/obj/plugin/core/host_tree.o

# The per-element code is written to vectorise; -fno-math-errno lets sqrt
# become one instruction. Portable x86-64-v2 baseline, no -march=native.
GP_CORE_CFLAGS := -O3 -fno-math-errno
ifeq ($(shell uname -m),x86_64)
GP_CORE_CFLAGS += -march=x86-64-v2
endif
$(GP_CORE_OBJS): CFLAGS += $(GP_CORE_CFLAGS)

CORE_TEST_NAMES := core-keys core-kernels tree-build
CORE_TESTS := $(CORE_TEST_NAMES:%=$(BUILD)/t/%.t)
TESTS += $(CORE_TESTS)

$(CORE_TEST_NAMES:%=$(BUILD)/obj/tests/%.o): CFLAGS += -Itests
$(CORE_TESTS): $(BUILD)/t/%.t: $(BUILD)/obj/tests/%.o $(GP_CORE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $^ $(LDLIBS)

.PHONY: core
core: $(CORE_TESTS)
