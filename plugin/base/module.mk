# SPDX-License-Identifier: Apache-2.0
# plugin/base: backend-neutral helpers linked into every plugin
# (errors, validation, parameter table, particle storage, stats, timer).
# A plugin's link rule lists $(GP_BASE_OBJS) among its objects.
GP_BASE_SRCS := $(addprefix plugin/base/,errors.c instance.c params.c scan.c subsets.c \
                  particles.c state.c outputs.c stats.c neighbours.c \
                  groups.c exact_ex.c predict_lazy.c)
GP_BASE_OBJS := $(GP_BASE_SRCS:%.c=$(BUILD)/obj/%.o)
# The exact pairwise kernel (direct_kernel.c): cpu-direct's sums and
# cpu-tree's exact sums for a few active particles; linked by those two
# alone. It is written to vectorise: -O3, -fno-math-errno (sqrt as one
# instruction) and -fno-trapping-math (branch-free selects) make it SIMD;
# none of these changes a result. No -ffast-math: results stay as coded.
# -ffp-contract=off (already implied by -std=c11, said here because the
# kernel's pair steps must be pair_step.h's bits, and its bound's margin
# assumes no fused multiply-add).
GP_DIRECT_KERNEL_OBJ := $(BUILD)/obj/plugin/base/direct_kernel.o
$(GP_DIRECT_KERNEL_OBJ): CFLAGS += -O3 -fno-math-errno -fno-trapping-math -ffp-contract=off
# predict must equal the host's evaluation of the ABI expression bit for bit.
$(BUILD)/obj/plugin/base/state.o: CFLAGS += -ffp-contract=off
# ABI 1.3's exact pass: pair steps with the shared expression's bits.
$(BUILD)/obj/plugin/base/exact_ex.o: CFLAGS += -ffp-contract=off
