# SPDX-License-Identifier: Apache-2.0
# plugin/cuda-base: what both CUDA plugins share (device selection, CUDA
# errors as sentences, memory sizing, device buffers). Defines the CUDA
# variables the other cuda-* module.mk files use; without nvcc it prints one
# notice and the CUDA plugins are left out of the build.
ifneq ($(NVCC),)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
CUDA_CFLAGS := -I$(CUDA_HOME)/include
# The CUDA runtime is linked statically, so a plugin loads (and then fails
# init cleanly) on machines without libcudart in the library path; its
# symbols stay hidden behind plugin/plugin.map.
CUDA_LDLIBS := -L$(CUDA_HOME)/lib64 -lcudart_static -lstdc++ -ldl -lpthread -lrt -lm
GP_CUDA_BASE_OBJS := $(BUILD)/obj/plugin/cuda-base/gp_cuda.o $(BUILD)/obj/plugin/cuda-base/dev_state.o
$(GP_CUDA_BASE_OBJS): CFLAGS += $(CUDA_CFLAGS)
GP_HAVE_CUDA := 1

# One CUDA plugin, $(call GP_CUDA_PLUGIN,VAR,NAME,HOST_OBJ,KERNEL_OBJ):
# build/plugins/gravplug-NAME.so (its path in VAR_SO) from its host code
# (gcc, with the CUDA headers) and its kernels (nvcc), linked with
# cuda-base, base and the static CUDA runtime.
define GP_CUDA_PLUGIN
$(1)_SO := $$(BUILD)/plugins/gravplug-$(2).so
$(1)_OBJS := $(3) $(4) $$(GP_CUDA_BASE_OBJS) $$(GP_BASE_OBJS)
$(3): CFLAGS += $$(CUDA_CFLAGS)
$(4): NVCCFLAGS += $$(GP_CUDA_KERNEL_FLAGS)
$$($(1)_SO): $$($(1)_OBJS) plugin/plugin.map
	@mkdir -p $$(dir $$@)
	$$(CC) $$(PLUGIN_LDFLAGS) -fopenmp -o $$@ $$($(1)_OBJS) $$(CUDA_LDLIBS) $$(LDLIBS)
PLUGINS += $$($(1)_SO)
CUDA_PLUGINS_BUILT += $$($(1)_SO)
endef

else
$(info gravplug: nvcc not found (set NVCC=/path/to/nvcc); the CUDA plugins cuda-direct and cuda-tree are left out)
GP_HAVE_CUDA :=
endif

# The CUDA kernels flush float denormals to zero: rsqrtf becomes a single
# MUFU.RSQ (the inner loops' one special-function instruction); values
# below 1e-38 are not physics here, and the results stay deterministic.
GP_CUDA_KERNEL_FLAGS := -ftz=true
