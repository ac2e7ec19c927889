# SPDX-License-Identifier: Apache-2.0
# plugin/cuda-direct: exact direct summation on the GPU (Chamomile scheme).
# Host side in direct.c (gcc), kernels in direct_dev.cu (nvcc).
ifneq ($(GP_HAVE_CUDA),)
$(eval $(call GP_CUDA_PLUGIN,CUDA_DIRECT,cuda-direct,$(BUILD)/obj/plugin/cuda-direct/direct.o,$(BUILD)/obj/plugin/cuda-direct/direct_dev.cu.o))
endif
