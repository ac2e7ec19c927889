# integrators/ — time integration (part of libgravplug.so): the gp_sim API,
# one file per scheme, time-step levels and criteria, checkpoints.
INTEGRATOR_SRCS := $(wildcard integrators/*.c)
HOSTLIB_OBJS += $(patsubst %.c,$(BUILD)/obj/%.o,$(INTEGRATOR_SRCS))
HOSTLIB_LDLIBS += -lgsl -lgslcblas

.PHONY: integrators
integrators: $(HOSTLIB)
