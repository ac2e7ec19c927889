/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exact_few.h — exact forces on a handful of targets, by direct summation
 * over every source (no tree).
 *
 * Why: a block step with a few active particles pays the tree's O(n)
 * passes (copy into key order, moments, cell preparation) for a walk of a
 * few thousand interactions. Summing all n sources for each of those few
 * targets costs less than those passes
 * (bench/results/block-steps/raw/block-pays.md, "Exact forces for a handful of
 * active particles"). The forces are then exact (Plummer-softened, the
 * ABI's law), not the tree's approximation.
 *
 * The sum is the exact pairwise kernel cpu-direct runs
 * (plugin/base/direct_kernel.h), on the sources gathered into its
 * structure-of-arrays form.
 */
#ifndef GP_CPU_TREE_EXACT_FEW_H
#define GP_CPU_TREE_EXACT_FEW_H

#include <stddef.h>
#include <stdint.h>

#include "base/base_instance.h"
#include "base/base_outputs.h"

/* The gathered sources, kept between calls so that a block step does not
 * allocate (and fault in) them each time. Zero-initialise; free with
 * exact_few_free. */
typedef struct exact_few_ws {
    double *buf;
    size_t cap;
} exact_few_ws;

/* acc (3 per target), pot and jerk (3 per target; each NULL: none) of the
 * active particles of p, in the order of its active list, from every
 * source: the source subset when one is set, else every massive particle.
 * A target skips itself. The jerk is gravplug.h's exact sum, with the
 * velocities get_velocities answers (zero for a particle without a
 * state). G multiplies the sums; eps2 = eps^2. Each target's sum runs over
 * the sources in index order (the kernel's fixed lanes), so the bits do
 * not depend on the thread count. *pairs gets the pairs summed (targets
 * x massive sources, as a tree counts its interactions). Returns 0; 1
 * when a result is not finite (the caller then uses the tree, which works
 * in units of its leaves); -1 when out of memory. */
int exact_few_forces(exact_few_ws *ws, const gp_particles *p, double G, double eps2,
                     int nthreads, double *acc, double *pot, double *jerk, uint64_t *pairs);

/* The same sums at explicit points (compute_field_ex's: at->pos, at->vel
 * where jerk asks, at->exclude), each skipping the particle it excludes,
 * into acc, pot, jerk (3 per point; pot and jerk may be NULL) and, where
 * not NULL, nn_index / nn_dist2: the nearest source (UINT32_MAX and
 * HUGE_VAL for none; ties to the lower index), over the same sources.
 * Returns as exact_few_forces. */
int exact_few_points(exact_few_ws *ws, const gp_particles *p, const gp_field_points *at, double G,
                     double eps2, int nthreads, double *acc, double *pot, double *jerk,
                     uint32_t *nn_index, double *nn_dist2, uint64_t *pairs);

void exact_few_free(exact_few_ws *ws);

#endif /* GP_CPU_TREE_EXACT_FEW_H */
