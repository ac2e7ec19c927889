/* SPDX-License-Identifier: Apache-2.0 */
/*
 * direct_nb.h — cuda-direct's ABI 1.2 neighbour outputs on the device
 * (direct_nb.cu): nearest neighbour, pairwise step and neighbour lists,
 * exact, in double, over the sources in index order. Returns a
 * cudaError_t as an int (0 = success); runs on `stream`; device pointers.
 */
#ifndef GP_DIRECT_NB_H
#define GP_DIRECT_NB_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* For active particle k < ni (particle index[k], k if NULL), over the
 * sources src[q] (q if NULL), q < nj, other than itself, with r = x_j -
 * x_i from pos (3 doubles a particle) and v = v_j - v_i from vel (NULL:
 * no pairwise step is asked for); or, with ipos not NULL, for the point k
 * at ipos[3k] (compute_field_ex's), other than the particle iself[k]
 * (iself NULL or UINT32_MAX: none), and then with no pairwise step (vel
 * must be NULL):
 *   nn[k], nd2[k]: the smallest |r|^2, ties to the lower index
 *                  (UINT32_MAX and HUGE_VAL: no other source);
 *   step[k]:       min tau_ij (base/pair_step.h, G (m_i + m_j));
 *   count[k]:      how many are listed: |r|^2 < radius[k]^2 (radius may
 *                  be NULL) or tau_ij < nb_step (nb_step > 0).
 * Each of nn, nd2, step and count may be NULL. With list != NULL the
 * call is the fill pass instead: only the listed indices are written, to
 * list[offset[k] ..], ascending. */
int gp_direct_nb(const double *pos, const double *vel, const double *mass, const uint32_t *src,
                 uint32_t nj, const uint32_t *index, const double *ipos, const uint32_t *iself,
                 uint32_t ni, double G, double eps2,
                 const double *radius, double nb_step, uint32_t *nn, double *nd2, double *step,
                 uint32_t *count, const uint64_t *offset, uint32_t *list, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* GP_DIRECT_NB_H */
