# plugin/cuda-direct: exact direct summation on the GPU (Chamomile scheme).
# Host side in direct.c (gcc), kernels in direct_dev.cu (nvcc).
ifneq ($(GP_HAVE_CUDA),)
CUDA_DIRECT_SO := $(BUILD)/plugins/gravplug-cuda-direct.so
CUDA_DIRECT_OBJS := $(BUILD)/obj/plugin/cuda-direct/direct.o \
                    $(BUILD)/obj/plugin/cuda-direct/direct_dev.cu.o \
                    $(GP_CUDA_BASE_OBJS) $(GP_BASE_OBJS)
$(BUILD)/obj/plugin/cuda-direct/direct.o: CFLAGS += $(CUDA_CFLAGS)
$(BUILD)/obj/plugin/cuda-direct/direct_dev.cu.o: NVCCFLAGS += $(GP_CUDA_KERNEL_FLAGS)

$(CUDA_DIRECT_SO): $(CUDA_DIRECT_OBJS) plugin/plugin.map
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_LDFLAGS) -fopenmp -o $@ $(CUDA_DIRECT_OBJS) $(CUDA_LDLIBS) $(LDLIBS)

PLUGINS += $(CUDA_DIRECT_SO)
CUDA_PLUGINS_BUILT += $(CUDA_DIRECT_SO)
endif
