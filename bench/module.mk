# bench: benchmark programs (built by `make bench`, not run by `make test`).
GPBENCH := $(BUILD)/bench/gpbench
BENCHES += $(GPBENCH)

$(BUILD)/obj/bench/gpbench.o: CFLAGS += -Ihost_stub/ic
$(GPBENCH): $(BUILD)/obj/bench/gpbench.o $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $< -L$(dir $(HOSTLIB)) -lgravplug -Wl,-rpath,$(abspath $(dir $(HOSTLIB))) $(LDLIBS)
