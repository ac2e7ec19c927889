# SPDX-License-Identifier: Apache-2.0
# tests/gravhost: gravhost, the reference host program (its commands,
# configs, runs, outputs, restarts, limits and failures), and its plotter
# host_stub/plot/gravplot.py.

# tests/gravhost/gravhost-*.sh and *.py are TAP scripts (copied with their
# shebang); they find gravhost through GP_BUILD (default: ../ of the script).
GRAVHOST_TESTS := $(patsubst tests/gravhost/%,$(BUILD)/t/%,$(basename $(filter-out tests/gravhost/gravhost-lib.sh,$(wildcard tests/gravhost/gravhost-*.sh tests/gravhost/gravhost-*.py))))
GRAVHOST_TESTS := $(addsuffix .t,$(GRAVHOST_TESTS))
TESTS += $(GRAVHOST_TESTS)
$(BUILD)/t/gravhost-%.t: tests/gravhost/gravhost-%.sh tests/gravhost/gravhost-lib.sh $(GRAVHOST)
	@mkdir -p $(dir $@)
	sed -e 's|@TESTLIB@|$(abspath tests/gravhost/gravhost-lib.sh)|' $< > $@ && chmod +x $@
$(BUILD)/t/gravhost-%.t: tests/gravhost/gravhost-%.py $(GRAVHOST)
	@mkdir -p $(dir $@)
	cp $< $@ && chmod +x $@
# gravhost-cli.t runs info and run on the loader's NULL-member fixture.
$(BUILD)/t/gravhost-cli.t: $(GP_FIXTURES)
# gravhost-oom.t preloads the allocation-failure injector, and
# gravhost-solver-path.t runs cpu-direct dressed as ABI 1.0
# (tests/fixtures/module.mk).
$(BUILD)/t/gravhost-oom.t: $(GP_OOM_INJECT)
$(BUILD)/t/gravhost-solver-path.t: $(SIM_ABI10)

gravhost: $(GRAVHOST_TESTS)

# tests/gravhost/plot-gravplot.py: copied with its shebang, @GP_SOURCE@
# replaced by the source tree; it finds the build through GP_BUILD
# (default: the script's ../).
TESTS += $(BUILD)/t/plot-gravplot.t
$(BUILD)/t/plot-gravplot.t: tests/gravhost/plot-gravplot.py host_stub/plot/gravplot.py
	@mkdir -p $(dir $@)
	sed 's|@GP_SOURCE@|$(abspath .)|' $< > $@ && chmod +x $@

# tests/gravhost/config-include-swap.c: an @include's file swapped (for other
# settings, or a FIFO) right after gravhost's checked open changes nothing
# (host_stub/config.c reads each include once, through that descriptor).
# Its open() is config.c's: config.o and the file checks linked in.
TESTS += $(BUILD)/t/config-include-swap.t
$(BUILD)/obj/tests/gravhost/config-include-swap.o: CPPFLAGS += -Itests -Ihost_stub
$(BUILD)/t/config-include-swap.t: $(BUILD)/obj/tests/gravhost/config-include-swap.o $(BUILD)/obj/host_stub/config.o \
                                  $(BUILD)/obj/host_stub/numfmt.o $(GP_FILE_CHECKS_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ -lconfig -ldl -lm $(LDLIBS)
