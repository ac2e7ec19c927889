/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tree_dev.h — the extern "C" boundary between cuda-tree's host code
 * (tree.c, gcc) and its kernels (tree_dev.cu, nvcc). Every launcher runs on
 * `stream` and returns a cudaError_t as an int (0 = success). Pointers are
 * device pointers unless a name says host.
 *
 * Layouts
 *   positions in     double xyz interleaved, n triples (as the ABI gives them)
 *   sorted arrays    key (Peano-Hilbert) order: x, y, z, m as double SoA
 *                    (for the moments) and {x, y, z, m} float records (for
 *                    the walk), all relative to `center` (device double[3]:
 *                    the particle in the middle of the key order, a point of
 *                    the bulk, so float coordinates stay accurate when a few
 *                    particles sit far away)
 *   perm[s]          original index of sorted particle s; rank = inverse
 *   cells            gp_cell (octree/tree.h), breadth-first, levels contiguous
 *   moments          gp_moments (octree/moments.h), double, per cell
 *   walk records     gp_wcell + gp_wtopo (walk_args.h), float, per cell,
 *                    as a structure of arrays
 *   i-records        ipos (float {x,y,z,0}), islot (output position),
 *                    iself (sorted index to skip, or GP_TREE_NONE), iorig
 *                    (original index, for a_old) in walk order, grouped 32 by
 *                    32 consecutive (GOTHIC's i-groups)
 *   results          gp_d4 {ax, ay, az, sum m/r} without G and sign
 */
#ifndef GP_TREE_DEV_H
#define GP_TREE_DEV_H

#include <stddef.h>
#include <stdint.h>
#include "octree/drift_kin.h"
#include "octree/moments.h"
#include "cuda-base/state_dev.h"
#include "cuda-tree/walk_args.h"

#ifdef __cplusplus
extern "C" {
#endif

int gp_tree_probe(void);

/* Bounding box of the n particles src[i] (i when src is NULL) of the
 * interleaved positions: box_host[0..2] = min, [3..5] = max. scratch holds
 * at least 6 * 1024 doubles. Synchronises. */
int gp_tree_bbox(const double *pos, const uint32_t *src, uint32_t n, double *scratch, double *box_host,
                 void *stream);

/* keys[i] = Peano-Hilbert key of particle o = sel ? sel[i] : i in the root
 * cube (lo, inv_cell); out[i] = o, or i with out_rank (out may be NULL).
 * A source subset's tree is built from its particles alone this way
 * (out: the particle), and active particles are sorted by key (out: their
 * slot in the active list). */
int gp_tree_keys(const double *pos, const uint32_t *sel, uint32_t n, double lo0, double lo1, double lo2,
                 double inv_cell, uint64_t *keys, uint32_t *out, int out_rank, void *stream);

/* out_host[k] = max-norm distance from center of tree particle perm[k * n /
 * count], k < count (out: count device doubles). Synchronises. */
int gp_tree_sample(const double *pos, const uint32_t *perm, uint32_t n, uint32_t count, const double *center,
                   double *out, double *out_host, void *stream);

/* The acceleration MAC's |a_old| where the last call gave none (aold 0,
 * as after set_particles): the particle's held state (set_state's a_i)
 * when flag[o] says it has one, its |a| times afac = len_scale^2 /
 * (|G| mass_scale), the walk's units. acc or flag NULL: none. */
typedef struct gp_aold_state {
    const double *acc;      /* 3n, by particle                             */
    const uint8_t *flag;    /* n: nonzero where the particle has a state   */
    double afac;
} gp_aold_state;

/* a[k] *= 2^e for k < n (exact unless it leaves float's range). */
int gp_tree_scale_exp(float *a, uint32_t n, int e, void *stream);

/* i-records for compute_forces with a source subset: the k-th record is
 * active entry j = order[k] (particle o = active ? active[j] : j), read
 * from the unsorted positions; iself = rank[o] (GP_TREE_NONE for a
 * particle outside the tree), islot = j, iorig = o. */
int gp_tree_irecords_any(const double *pos, const uint32_t *active, const uint32_t *order, uint32_t m,
                         const double *center, double inv_len, const uint32_t *rank, const float *aold,
                         const gp_aold_state *as, gp_f4 *ipos, uint32_t *islot, uint32_t *iself, uint32_t *iorig, float *iaold,
                         void *stream);

/* CUB DeviceRadixSort::SortPairs; tmp == NULL asks for *tmp_bytes. */
int gp_tree_sort64(void *tmp, size_t *tmp_bytes, const uint64_t *kin, uint64_t *kout,
                   const uint32_t *vin, uint32_t *vout, uint32_t n, void *stream);
int gp_tree_sort32(void *tmp, size_t *tmp_bytes, const uint32_t *kin, uint32_t *kout,
                   const uint32_t *vin, uint32_t *vout, uint32_t n, int end_bit, void *stream);
/* CUB DeviceScan::ExclusiveSum over uint32; tmp == NULL asks for *tmp_bytes. */
int gp_tree_scan(void *tmp, size_t *tmp_bytes, const uint32_t *in, uint32_t *out, uint32_t n,
                 void *stream);

/* center[0..2] = pos[perm[n / 2]] (the middle of the key order). */
int gp_tree_set_center(const double *pos, const uint32_t *perm, uint32_t n, double *center,
                       void *stream);

/* Sorted copies relative to center, times inv_len (masses times
 * inv_mass; both powers of two, 1 for ordinary data): x, y, z, m (double
 * SoA) and f4; when rank is not NULL also rank[perm[s]] = s. */
int gp_tree_gather(const double *pos, const double *mass, const uint32_t *perm, uint32_t n,
                   const double *center, double inv_len, double inv_mass, double *x, double *y, double *z,
                   double *m, gp_f4 *f4, uint32_t *rank, void *stream);

/* One level of the build, cells [b, e): counts[k] = children of cell b+k;
 * then (after a scan into offsets) the split writes them at e + offsets[k].
 * total_host gets offsets[last] + counts[last]. */
int gp_tree_count(const uint64_t *keys, const gp_cell *cells, uint32_t b, uint32_t e,
                  uint32_t *counts, void *stream);
int gp_tree_total(const uint32_t *counts, const uint32_t *offsets, uint32_t count,
                  uint32_t *scratch, uint32_t *total_host, void *stream);
int gp_tree_split(const uint64_t *keys, gp_cell *cells, uint32_t b, uint32_t e,
                  const uint32_t *offsets, void *stream);

/* Moments of the cells [b, e) of one level (deeper levels done first). */
int gp_tree_moments(const double *x, const double *y, const double *z, const double *m,
                    const gp_cell *cells, uint32_t b, uint32_t e, gp_moments *mom, void *stream);

/* Walk records of all ncells cells for the given MAC (octree/mac.h kinds):
 * ncells x GP_WREC_BYTES at rec, walk_args.h's structure of arrays. */
int gp_tree_records(const gp_moments *mom, const gp_cell *cells, uint32_t ncells, int mac, double theta,
                    void *rec, void *stream);

/* i-records for compute_forces: k < ni takes sorted particle
 * s = ilist ? ilist[k] : k, with output slot slot ? slot[k] : perm[s]. */
int gp_tree_irecords_forces(const gp_f4 *f4, const uint32_t *perm, const float *aold,
                            const gp_aold_state *as, const uint32_t *ilist, const uint32_t *slot, uint32_t ni,
                            gp_f4 *ipos, uint32_t *islot, uint32_t *iself, uint32_t *iorig,
                            float *iaold, void *stream);

/* The drifted tree (octree/drift_kin.h), anchored at t0 on a tree built
 * or refitted from every particle's prediction to t0. cub holds 3 n
 * float4 (c1 of sorted particle s at cub[s], c2 at cub[n + s], c3 at
 * cub[2 n + s], in the walk's units; w unused).
 *
 * The anchor's cubics, from the held state. */
int gp_tree_drift_sources(const uint32_t *perm, uint32_t n, gp_state_dev_ptrs S, double t0, double inv_len,
                          gp_f4 *cub, void *stream);
/* After set_state of particles index[0 .. n_sub): their positions at t0
 * (x, y, z, f4) and cubics from the new state, their cells up to the root
 * marked with epoch (> every earlier epoch). */
int gp_tree_drift_update(const uint32_t *index, uint32_t n_sub, const uint32_t *rank, gp_state_dev_ptrs S, double t0,
                         const double *center, double inv_len, uint32_t n, double *x, double *y, double *z,
                         gp_f4 *f4, gp_f4 *cub, const gp_cell *cells, const uint32_t *leaf_of, uint32_t *mark,
                         uint32_t epoch, void *stream);
/* The motion of the cells [b, e) of one level (deeper levels done first),
 * leaf_of of their sources; with mark, only cells marked after epoch
 * clean, and their moments made again first. */
int gp_tree_drift_cells(const double *x, const double *y, const double *z, const double *m, const gp_cell *cells,
                        uint32_t b, uint32_t e, const gp_f4 *cub, uint32_t n, gp_moments *mom, gp_drift_kin *kin,
                        uint32_t *leaf_of, const uint32_t *mark, uint32_t clean, void *stream);
/* Walk records (as gp_tree_records) of the anchor's cells tau ahead. */
int gp_tree_drift_records(const gp_moments *mom, const gp_drift_kin *kin, const gp_cell *cells, uint32_t ncells,
                          double tau, int mac, double theta, void *rec, void *stream);

/* Active subset: key[k] = rank[index[k]], val[k] = k (then sorted). */
int gp_tree_active_keys(const uint32_t *index, const uint32_t *rank, uint32_t ni,
                        uint32_t *key, uint32_t *val, void *stream);

/* Field points: ipos[k] = (points[order[k]] - center) * inv_len, islot[k] = order[k]. */
int gp_tree_irecords_field(const double *points, const uint32_t *order, uint32_t m,
                           const double *center, double inv_len, gp_f4 *ipos, uint32_t *islot, void *stream);

/* i-groups that respect the tree: consecutive i-records (key order) are
 * grouped while they fall in the same group cell, the coarsest cell of the
 * last build holding at most cell_max particles (walk.cuh group_cell_of),
 * at most 32 to a group. Record k's key is rkeys[iself[k]] (tree particles)
 * or rkeys[k] (iself NULL); tkeys are the build's sorted keys.
 * Scratch: flag, off, runstart, gflag, goff (ni each); gstart gets
 * ngroups + 1 entries (so it needs ni + 1); *ngroups_host the count.
 * tmp == NULL: *tmp_bytes is set, nothing else done. Synchronises. */
int gp_tree_groups(const uint64_t *rkeys, const uint32_t *iself, uint32_t ni, const gp_cell *cells,
                   const uint64_t *tkeys, uint32_t cell_max, uint32_t *flag,
                   uint32_t *off, uint32_t *runstart, uint32_t *gflag, uint32_t *goff, uint32_t *gstart,
                   void *tmp, size_t *tmp_bytes, uint32_t *scalar, uint32_t *ngroups_host, void *stream);

/* Warp slots the walk uses (resident warps on this GPU); stacks must hold
 * slots * GP_TREE_STACK entries. */
int gp_tree_walk_slots(int mode, uint32_t *slots);

/* The walk (GOTHIC 2.3): one warp per group of 32 i-records (per group
 * and part when a->parts > 1, followed by the in-order reduction of the
 * parts into out and aold). */
int gp_tree_walk(const gp_walk_args *a, void *stream);

/* A cut of the tree for ij-parallel walks: the cells of level `level` and
 * the leaves above it, in key order, into cut[0 .. *count_host). flags and
 * offs hold level_end entries (cells [0, level_end) are examined), keys and
 * ids_tmp 2 * level_end, tmp is CUB storage (tmp == NULL: *tmp_bytes is
 * set, nothing else done). Synchronises. */
int gp_tree_cut(const gp_cell *cells, uint32_t level_end, uint32_t level, uint32_t n,
                uint32_t *flags, uint32_t *offs, uint32_t *keys, uint32_t *ids_tmp, uint32_t *cut,
                void *tmp, size_t *tmp_bytes, uint32_t *scalar, uint32_t *count_host, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* GP_TREE_DEV_H */
