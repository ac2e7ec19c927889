# SPDX-License-Identifier: Apache-2.0
# plugin/cuda-direct: exact direct summation on the GPU (Chamomile scheme).
# Host side in direct.c (gcc), kernels in direct_dev.cu (nvcc), ABI 1.2's
# neighbour outputs in direct_nb.cu (nvcc -fmad=false: the host's unfused
# double expressions bit for bit; the force kernels keep their FMAs).
ifneq ($(GP_HAVE_CUDA),)
CUDA_DIRECT_KERNEL_OBJS := $(BUILD)/obj/plugin/cuda-direct/direct_dev.cu.o $(BUILD)/obj/plugin/cuda-direct/direct_nb.cu.o
$(eval $(call GP_CUDA_PLUGIN,CUDA_DIRECT,cuda-direct,$(BUILD)/obj/plugin/cuda-direct/direct.o,$(CUDA_DIRECT_KERNEL_OBJS)))
$(BUILD)/obj/plugin/cuda-direct/direct_nb.cu.o: NVCCFLAGS += -fmad=false
endif
