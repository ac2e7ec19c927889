# SPDX-License-Identifier: Apache-2.0
# bench/gpu: the GPU plugins' benchmark (cudabench) and bench/gpu/run-all.sh.
CUDABENCH := $(BUILD)/bench/cudabench
BENCHES += $(CUDABENCH)
GPU_BENCHES := $(CUDABENCH)

$(BUILD)/obj/bench/gpu/cudabench.o: CFLAGS += -Ihost_stub/ic -Itests
$(CUDABENCH): $(BUILD)/obj/bench/gpu/cudabench.o $(HOSTLIB)
	@mkdir -p $(dir $@)
	$(CC) -fopenmp -o $@ $< -L$(dir $(HOSTLIB)) -lgravplug -Wl,-rpath,$(abspath $(dir $(HOSTLIB))) $(LDLIBS)

# `make kernel-metrics`: registers, spills, shared memory and SASS
# instructions per interaction of the CUDA kernels for sm_90, from the
# compiler alone (no GPU); needs nvdisasm or cuobjdump (see the script).
.PHONY: kernel-metrics
kernel-metrics:
	bench/gpu/kernel-metrics --markdown
