/* SPDX-License-Identifier: Apache-2.0 */
/*
 * direct_dev.h — the extern "C" boundary between cuda-direct's host code
 * (direct.c, gcc) and its kernels (direct_dev.cu, nvcc). Every function
 * returns a cudaError_t as an int (0 = success) and runs on `stream`.
 *
 * Device records: j- and i-particles are {x, y, z, m} as float4 (single,
 * mixed) or gp_d4 (double); results are gp_d4 {ax, ay, az, sum m/r}
 * without G and without the potential's minus sign.
 */
#ifndef GP_DIRECT_DEV_H
#define GP_DIRECT_DEV_H

#include <stdint.h>

#include "cuda-base/vec4.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cudaFuncGetAttributes on the main kernel: fails when this build has no
 * code for the current GPU. */
int gp_direct_probe(void);

/* Number of j-segments for ni i-particles and nj j-particles (a function of
 * ni and nj only, so results do not depend on the device). */
uint32_t gp_direct_segments(uint32_t ni, uint32_t nj);

/* j-records of the nj sources src[j] (j if NULL) from double positions
 * and masses on the device, relative to center (host double[3]) and in
 * units of the powers of two 1/inv_len and 1/inv_mass: {(x - c) inv_len,
 * ..., m inv_mass}, rounded to float unless dbl; srank (may be NULL) gets
 * srank[src[j]] = j. */
int gp_direct_records(const double *pos, const double *mass, const uint32_t *src, uint32_t nj,
                      const double *center, double inv_len, double inv_mass, int dbl, void *jp, uint32_t *srank,
                      void *stream);

/* i-records of particles index[k] (k if NULL), k < ni, from the double
 * positions, and their self index srank[particle] (0xffffffff: not a
 * source, nothing skipped). */
int gp_direct_irecords(const double *pos, const uint32_t *index, uint32_t ni, const double *center,
                       double inv_len, const uint32_t *srank, int dbl, void *ip, uint32_t *self, void *stream);

/* ip[k] = jp[index[k]] for k < ni; dbl selects gp_d4 records. */
int gp_direct_gather(const void *jp, const uint32_t *index, uint32_t ni, void *ip,
                     int dbl, void *stream);

/* out[i] = field of jp[0..nj) at ip[i], i < ni. self[i] is the j index to
 * skip for i; self == NULL with identity != 0 means self[i] = i (all
 * active), with identity == 0 that nothing is skipped (field points). mode 0 single, 1 mixed, 2 double. seg holds
 * nseg * ni gp_d4 when nseg > 1 (unused otherwise). */
int gp_direct_launch(int mode, const void *jp, uint32_t nj, const void *ip,
                     const uint32_t *self, int identity, uint32_t ni, double eps2,
                     uint32_t nseg, void *seg, void *out, void *stream);

/* ABI 1.2: velocity records {vx, vy, vz, 0} * inv_len of particles
 * map[k] (k if NULL), k < count, from every particle's double velocity
 * vel (3 per particle), rounded to float unless dbl; beside the position
 * records (j: map = the source list, i: the active list). */
int gp_direct_vrecords(const double *vel, const uint32_t *map, uint32_t count, double inv_len, int dbl,
                       void *rec, void *stream);

/* gp_direct_launch with the jerk in the same pass: jv / iv are the
 * velocity records of jp / ip, jerk (ni gp_d4 {jx, jy, jz, 0}, in the
 * units of acc when the velocities are scaled by inv_len) beside out, and
 * jseg beside seg when nseg > 1. acc and pot get gp_direct_launch's
 * bits. */
int gp_direct_launch_jerk(int mode, const void *jp, const void *jv, uint32_t nj, const void *ip,
                          const void *iv, const uint32_t *self, int identity, uint32_t ni, double eps2,
                          uint32_t nseg, void *seg, void *jseg, void *out, void *jerk, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* GP_DIRECT_DEV_H */
