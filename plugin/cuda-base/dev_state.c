/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dev_state.c — ABI 1.1's state on the device, host side (dev_state.h).
 */
#include "cuda-base/dev_state.h"
#include "cuda-base/state_dev.h"
#include "base/base_instance.h"
#include "base/base_particles.h"
#include "base/base_state.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static size_t pad8(size_t bytes) { return (bytes + 7) & ~(size_t)7; }

static size_t packed_bytes(size_t n_sub, const uint32_t *index, const size_t *counts, int narrays)
{
    size_t total = index ? pad8(n_sub * sizeof(uint32_t)) : 0;
    for (int k = 0; k < narrays; ++k) total += counts[k] * sizeof(double);
    return total;
}

/* A block step's subset fits the pinned stage: packed there in one copy,
 * its values checked as they are copied (gp_copy_finite). */
static int fits_stage(size_t total) { return total <= 2 * GP_STAGE_CHUNK; }

/* Uploads [index | data...] packed in the pinned stage to ds->in; returns
 * the device pointers of the index (NULL when index is NULL) and data.
 * finite (may be NULL): set to 0 when a value packed in the stage was not
 * finite, and nothing is uploaded; the staged path (!fits_stage) does not
 * look at the values and sets it to 1. */
static gp_status upload_packed(gp_base *b, gp_cuda *c, gp_dstate *ds, gp_hbuf *stage, size_t n_sub,
                               const uint32_t *index, const double *const *arrays, const size_t *counts,
                               int narrays, uint32_t **idx_dev, double **data_dev, int *finite,
                               const char *what)
{
    size_t ibytes = index ? pad8(n_sub * sizeof(uint32_t)) : 0,
           total = packed_bytes(n_sub, index, counts, narrays);
    if (finite) *finite = 1;
    gp_status st = gp_dbuf_reserve(b, &ds->in, total, what);
    if (st != GP_OK) return st;
    double t0 = gp_wtime();
    if (fits_stage(total)) {
        if ((st = gp_hbuf_reserve(b, stage, total, "the pinned staging buffer")) != GP_OK) return st;
        char *h = (char *)stage->ptr;
        if (index) gp_copy_parallel(h, index, n_sub * sizeof(uint32_t));
        size_t off = ibytes;
        int ok = 1;
        for (int k = 0; k < narrays; ++k) {
            ok &= gp_copy_finite((double *)(h + off), arrays[k], counts[k]);
            off += counts[k] * sizeof(double);
        }
        if (!ok && finite) {
            *finite = 0;
            return GP_OK;
        }
        st = gp_cuda_upload(b, c, ds->in.ptr, stage->ptr, total, what);
    } else {
        /* large (a whole set_state): array by array through the staging
         * halves, so the pinned memory stays small */
        char *d = (char *)ds->in.ptr;
        if (index) st = gp_cuda_upload_staged(b, c, stage, d, index, n_sub * sizeof(uint32_t), what);
        size_t off = ibytes;
        for (int k = 0; k < narrays && st == GP_OK; ++k) {
            st = gp_cuda_upload_staged(b, c, stage, d + off, arrays[k], counts[k] * sizeof(double), what);
            off += counts[k] * sizeof(double);
        }
    }
    b->stats.seconds_transfer += gp_wtime() - t0;
    *idx_dev = index ? (uint32_t *)ds->in.ptr : NULL;
    *data_dev = (double *)((char *)ds->in.ptr + ibytes);
    return st;
}

static gp_status alloc_state(gp_base *b, gp_cuda *c, gp_dstate *ds, size_t n)
{
    if (ds->n == n && ds->flag.ptr) return GP_OK;
    gp_status st;
    if ((st = gp_dbuf_reserve(b, &ds->x0, 3 * n * sizeof(double), "the held positions")) != GP_OK ||
        (st = gp_dbuf_reserve(b, &ds->vel, 3 * n * sizeof(double), "the held velocities")) != GP_OK ||
        (st = gp_dbuf_reserve(b, &ds->acc, 3 * n * sizeof(double), "the held accelerations")) != GP_OK ||
        (st = gp_dbuf_reserve(b, &ds->t, n * sizeof(double), "the held times")) != GP_OK ||
        (st = gp_dbuf_reserve(b, &ds->flag, n, "the state flags")) != GP_OK ||
        (st = gp_dbuf_reserve(b, &ds->third, n, "the third-order flags")) != GP_OK ||
        (st = gp_dbuf_reserve(b, &ds->owed_at, n * sizeof(uint32_t), "the owed predict's marks")) != GP_OK)
        return st;
    int e = (int)cudaMemsetAsync(ds->flag.ptr, 0, n, (cudaStream_t)c->stream);
    if ((st = gp_cuda_check(b, e, "clearing the state flags")) != GP_OK) return st;
    e = (int)cudaMemsetAsync(ds->owed_at.ptr, 0, n * sizeof(uint32_t), (cudaStream_t)c->stream);
    if ((st = gp_cuda_check(b, e, "clearing the owed predict's marks")) != GP_OK) return st;
    ds->n = n;
    ds->any = 0;
    ds->owed = 0;
    ds->epoch = 0;
    return GP_OK;
}

gp_status gp_dstate_clear(gp_base *b, gp_cuda *c, gp_dstate *ds)
{
    ds->owed = 0; /* positions given anew */
    if (!ds->any) return GP_OK;
    if (ds->n != b->p.n) { /* n changed: the buffers are resized at the next set_state */
        ds->n = 0;
        ds->any = 0;
        return GP_OK;
    }
    int e = (int)cudaMemsetAsync(ds->flag.ptr, 0, ds->n, (cudaStream_t)c->stream);
    ds->any = 0;
    ds->owed = 0;
    return gp_cuda_check(b, e, "clearing the state flags");
}

void gp_dstate_free(gp_dstate *ds)
{
    gp_dbuf_free(&ds->x0); gp_dbuf_free(&ds->vel); gp_dbuf_free(&ds->acc);
    gp_dbuf_free(&ds->t); gp_dbuf_free(&ds->flag); gp_dbuf_free(&ds->in); gp_dbuf_free(&ds->bad);
    gp_dbuf_free(&ds->third); gp_dbuf_free(&ds->jerk); gp_dbuf_free(&ds->owed_at);
    ds->owed = 0;
    ds->n = 0;
    ds->any = 0;
}

gp_state_dev_ptrs gp_dstate_ptrs(const gp_dstate *ds)
{
    gp_state_dev_ptrs p = {(double *)ds->x0.ptr, (double *)ds->vel.ptr, (double *)ds->acc.ptr,
                           (double *)ds->jerk.ptr, (double *)ds->t.ptr, (uint8_t *)ds->flag.ptr,
                           (uint8_t *)ds->third.ptr, ds->owed ? (uint32_t *)ds->owed_at.ptr : NULL, ds->epoch};
    return p;
}

gp_status gp_dstate_set(gp_base *b, gp_cuda *c, gp_dstate *ds, gp_hbuf *stage, double *pos_dev, int host_copy,
                        size_t n_sub, const uint32_t *index, const double *pos, const double *vel,
                        const double *acc, const double *jerk, const double *t)
{
    double t0 = gp_wtime();
    const double *arrays[5] = {pos, vel, acc, t, jerk};
    size_t counts[5] = {3 * n_sub, 3 * n_sub, 3 * n_sub, n_sub, 3 * n_sub};
    const int narrays = jerk ? 5 : 4;
    /* a subset that fits the stage has its values checked as they are
     * packed (one pass over them, not two); the rest first, here */
    const int packed = fits_stage(packed_bytes(n_sub, index, counts, narrays));
    gp_status st = packed ? gp_state_check_args(b, n_sub, index, pos, vel, acc, t)
                 : jerk   ? gp_state_check_jerk(b, n_sub, index, pos, vel, acc, jerk, t)
                          : gp_state_check(b, n_sub, index, pos, vel, acc, t);
    if (st != GP_OK || n_sub == 0) return st;
    double t1 = gp_wtime();
    if ((st = gp_cuda_enter(b, c)) != GP_OK) return st;
    if ((st = alloc_state(b, c, ds, b->p.n)) != GP_OK) return st;
    if (jerk && (st = gp_dbuf_reserve(b, &ds->jerk, 3 * ds->n * sizeof(double), "the held jerks")) != GP_OK)
        return st;
    uint32_t *idx_dev;
    double *data;
    int finite;
    if ((st = upload_packed(b, c, ds, stage, n_sub, index, arrays, counts, narrays, &idx_dev, &data, &finite,
                            "copying the state to the GPU")) != GP_OK) return st;
    if (!finite) { /* nothing was uploaded; the full check says which value */
        st = jerk ? gp_state_check_jerk(b, n_sub, index, pos, vel, acc, jerk, t)
                  : gp_state_check(b, n_sub, index, pos, vel, acc, t);
        return st != GP_OK ? st
                           : gp_fail(b, GP_ERR_INVALID_ARGUMENT,
                                     "set_state: a value read as not finite while it was copied and as "
                                     "finite when checked again (was another thread writing the arrays?); "
                                     "nothing was stored: call again once the arrays hold their values");
    }
    double t2 = gp_wtime();
    int e = gp_state_dev_scatter(idx_dev, (uint32_t)n_sub, data, data + 3 * n_sub, data + 6 * n_sub,
                                 jerk ? data + 10 * n_sub : NULL, data + 9 * n_sub, gp_dstate_ptrs(ds), pos_dev,
                                 c->stream);
    /* no wait: what reads the state comes after it on the stream, and a
     * device fault surfaces at the next wait (the values were checked) */
    if ((st = gp_cuda_check(b, e, "storing the state on the GPU")) != GP_OK) return st;
    ds->any = 1;
    ds->index_dev = idx_dev;
    double t3 = gp_wtime();
    if (host_copy) {
        double *hp = b->p.pos;
        for (size_t k = 0; k < n_sub; ++k)
            memcpy(&hp[3 * (index ? (size_t)index[k] : k)], &pos[3 * k], 3 * sizeof(double));
    }
    /* where a block step's set_state spends its time, for a device run */
    gp_log(b, GP_LOG_DEBUG,
           "set_state n_sub=%zu: checks %.3f ms, packing (values checked) + upload %.3f ms, "
           "scatter launched %.3f ms, host copy of the positions %s%.3f ms",
           n_sub, 1e3 * (t1 - t0), 1e3 * (t2 - t1), 1e3 * (t3 - t2), host_copy ? "" : "(skipped, stale) ",
           1e3 * (gp_wtime() - t3));
    return GP_OK;
}

gp_status gp_dstate_velocities(gp_base *b, gp_cuda *c, gp_dstate *ds, double *vel_dev)
{
    size_t n = b->p.n;
    int e = ds->any ? gp_state_dev_velocity(NULL, (uint32_t)n, ds->t_pred, gp_dstate_ptrs(ds), vel_dev, c->stream)
                    : (int)cudaMemsetAsync(vel_dev, 0, 3 * n * sizeof(double), (cudaStream_t)c->stream);
    return gp_cuda_check(b, e, "computing the velocities");
}

/* 3 doubles per particle of a subset, computed on the device into ds->in
 * after the index list (uploaded when there is one) by fill, then copied
 * to dst; the transfer is counted. fill gets the index on the device
 * (NULL: particles 0 .. n_sub - 1) and returns a CUDA error code. */
typedef int (*subset_fill)(const gp_dstate *ds, const void *arg, const uint32_t *index_dev, uint32_t n_sub,
                           double *out, void *stream);

static gp_status subset_to_host(gp_base *b, gp_cuda *c, gp_dstate *ds, gp_hbuf *stage, size_t n_sub,
                                const uint32_t *index, double *dst, subset_fill fill, const void *arg,
                                const char *what, const char *doing)
{
    double t0 = gp_wtime();
    char label[96];
    snprintf(label, sizeof label, "%s asked for", what);
    size_t ibytes = index ? pad8(n_sub * sizeof(uint32_t)) : 0;
    gp_status st = gp_dbuf_reserve(b, &ds->in, ibytes + 3 * n_sub * sizeof(double), label);
    if (st != GP_OK) return st;
    /* the download's wait below covers the index list's copy too */
    if (index && (st = gp_cuda_send(b, c, ds->in.ptr, index, n_sub * sizeof(uint32_t),
                                    "copying the index list to the GPU")) != GP_OK) return st;
    double t1 = gp_wtime();
    double *out = (double *)((char *)ds->in.ptr + ibytes);
    int e = fill(ds, arg, index ? (const uint32_t *)ds->in.ptr : NULL, (uint32_t)n_sub, out, c->stream);
    if ((st = gp_cuda_check(b, e, doing)) != GP_OK) return st;
    snprintf(label, sizeof label, "copying %s from the GPU", what);
    st = gp_cuda_download_staged(b, c, stage, dst, out, 3 * n_sub * sizeof(double), label);
    double t2 = gp_wtime();
    b->stats.seconds_transfer += t2 - t0;
    gp_log(b, GP_LOG_DEBUG, "%s of %zu particles: index upload %.3f ms, on the GPU + download %.3f ms", what, n_sub,
           1e3 * (t1 - t0), 1e3 * (t2 - t1));
    return st;
}

static int fill_velocities(const gp_dstate *ds, const void *arg, const uint32_t *index_dev, uint32_t n_sub,
                           double *out, void *stream)
{
    (void)arg;
    return gp_state_dev_velocity(index_dev, n_sub, ds->t_pred, gp_dstate_ptrs(ds), out, stream);
}

static int fill_positions(const gp_dstate *ds, const void *arg, const uint32_t *index_dev, uint32_t n_sub,
                          double *out, void *stream)
{
    if (ds->owed) { /* the subset's owed predictions first */
        int e = gp_state_dev_owed(index_dev, n_sub, ds->t_pred, 0, gp_dstate_ptrs(ds), ds->owed_pos, stream);
        if (e) return e;
    }
    return gp_state_dev_gather((const double *)arg, index_dev, n_sub, out, stream);
}

gp_status gp_dstate_get_velocities(gp_base *b, gp_cuda *c, gp_dstate *ds, gp_hbuf *stage,
                                   size_t n_sub, const uint32_t *index, double *vel)
{
    gp_status st = gp_check_subset(b, "get_velocities", n_sub, index);
    if (st != GP_OK || n_sub == 0) return st;
    if (!vel)
        return gp_fail(b, GP_ERR_INVALID_ARGUMENT,
                       "get_velocities was given a NULL vel array; pass room for 3*%zu doubles", n_sub);
    if (!ds->any) { /* no particle has a state: none moves */
        memset(vel, 0, 3 * n_sub * sizeof *vel);
        return GP_OK;
    }
    if ((st = gp_cuda_enter(b, c)) != GP_OK) return st;
    return subset_to_host(b, c, ds, stage, n_sub, index, vel, fill_velocities, NULL, "the velocities",
                          "computing the velocities");
}

/* predict's arguments, as plugin/base's gp_state_predict checks them */
static gp_status check_predict(gp_base *b, double t)
{
    if (!b->p.have)
        return gp_fail(b, GP_ERR_BAD_STATE, "predict was called before set_particles; call set_particles first");
    if (!isfinite(t))
        return gp_fail(b, GP_ERR_INVALID_ARGUMENT, "predict was given a time that is %s; pass a finite time",
                       isnan(t) ? "NaN" : "infinite");
    return GP_OK;
}

gp_status gp_dstate_predict(gp_base *b, gp_cuda *c, gp_dstate *ds, double *pos_dev, double t, int *moved)
{
    *moved = 0;
    gp_status st = check_predict(b, t);
    if (st != GP_OK) return st;
    if (!ds->any) return GP_OK;
    if ((st = gp_cuda_enter(b, c)) != GP_OK) return st;
    /* an owed predict first, so that an overflow below is undone to it */
    if ((st = gp_dstate_settle(b, c, ds)) != GP_OK) return st;
    if ((st = gp_dbuf_reserve(b, &ds->bad, 64, "the overflow flag")) != GP_OK) return st;
    uint32_t n = (uint32_t)ds->n;
    int e = gp_state_dev_predict(n, t, gp_dstate_ptrs(ds), pos_dev, (int *)ds->bad.ptr, c->stream);
    if ((st = gp_cuda_check(b, e, "predicting the positions")) != GP_OK) return st;
    int flags[2] = {0, 0}; /* a position, a velocity overflowed */
    double t0 = gp_wtime();
    st = gp_cuda_download(b, c, flags, ds->bad.ptr, sizeof flags, "reading the prediction's overflow flags");
    int bad = flags[0] || flags[1];
    b->stats.seconds_transfer += gp_wtime() - t0;
    if (st != GP_OK) return st;
    e = gp_state_dev_finish(n, bad, ds->t_pred, gp_dstate_ptrs(ds), pos_dev, c->stream);
    if ((st = gp_cuda_check(b, e, "finishing the prediction")) != GP_OK) return st;
    if (bad) {
        if ((st = gp_cuda_sync(b, c, "undoing the prediction")) != GP_OK) return st;
        return gp_fail(b, GP_ERR_INVALID_ARGUMENT,
                       "predict: predicting to t = %.17g overflows the %s of a particle (a time far from "
                       "the particles' own times, or huge velocities or accelerations); nothing was moved", t,
                       flags[0] ? "position" : "velocity");
    }
    ds->t_pred = t;
    *moved = 1;
    return GP_OK;
}

gp_status gp_dstate_defer(gp_base *b, gp_cuda *c, gp_dstate *ds, double *pos_dev, double t)
{
    gp_status st = check_predict(b, t);
    if (st != GP_OK) return st;
    if (!ds->any) return GP_OK;
    if ((st = gp_cuda_enter(b, c)) != GP_OK) return st;
    if (ds->epoch == UINT32_MAX) { /* epochs start afresh (once in 2^32 predicts) */
        if ((st = gp_dstate_settle(b, c, ds)) != GP_OK) return st;
        int e = (int)cudaMemsetAsync(ds->owed_at.ptr, 0, ds->n * sizeof(uint32_t), (cudaStream_t)c->stream);
        if ((st = gp_cuda_check(b, e, "clearing the owed predict's marks")) != GP_OK) return st;
        ds->epoch = 0;
    }
    ds->epoch++;
    ds->owed = 1;
    ds->owed_pos = pos_dev;
    ds->t_pred = t;
    return GP_OK;
}

gp_status gp_dstate_settle(gp_base *b, gp_cuda *c, gp_dstate *ds)
{
    if (!ds->owed) return GP_OK;
    int e = gp_state_dev_owed(NULL, (uint32_t)ds->n, ds->t_pred, 1, gp_dstate_ptrs(ds), ds->owed_pos, c->stream);
    gp_status st = gp_cuda_check(b, e, "paying the owed predict");
    if (st == GP_OK) ds->owed = 0;
    return st;
}

gp_status gp_dstate_current(gp_base *b, gp_cuda *c, gp_dstate *ds, const uint32_t *index_dev, size_t n_sub)
{
    if (!ds->owed || n_sub == 0) return GP_OK;
    int e = gp_state_dev_owed(index_dev, (uint32_t)n_sub, ds->t_pred, 0, gp_dstate_ptrs(ds), ds->owed_pos,
                              c->stream);
    return gp_cuda_check(b, e, "predicting the subset's owed positions");
}

gp_status gp_dstate_get(gp_base *b, gp_cuda *c, gp_dstate *ds, gp_hbuf *stage, const double *pos_dev,
                        size_t n_sub, const uint32_t *index, double *pos)
{
    gp_status st = gp_check_subset(b, "get_positions", n_sub, index);
    if (st != GP_OK || n_sub == 0) return st;
    if (!pos)
        return gp_fail(b, GP_ERR_INVALID_ARGUMENT,
                       "get_positions was given a NULL pos array; pass room for 3*%zu doubles", n_sub);
    if ((st = gp_cuda_enter(b, c)) != GP_OK) return st;
    if (!index) { /* all of them: straight from the device positions */
        if ((st = gp_dstate_settle(b, c, ds)) != GP_OK) return st;
        double t0 = gp_wtime();
        st = gp_cuda_download_staged(b, c, stage, pos, pos_dev, 3 * n_sub * sizeof(double),
                                     "copying the positions from the GPU");
        b->stats.seconds_transfer += gp_wtime() - t0;
        return st;
    }
    return subset_to_host(b, c, ds, stage, n_sub, index, pos, fill_positions, pos_dev, "the positions",
                          "gathering the positions");
}

gp_status gp_dstate_masses(gp_base *b, gp_cuda *c, gp_dstate *ds, gp_hbuf *stage, double *mass_dev,
                           size_t n_sub, const uint32_t *index, const double *mass)
{
    gp_status st = gp_masses_update(b, n_sub, index, mass);
    if (st != GP_OK || n_sub == 0) return st;
    if ((st = gp_cuda_enter(b, c)) != GP_OK) return st;
    const double *arrays[1] = {mass};
    size_t counts[1] = {n_sub};
    uint32_t *idx_dev;
    double *data;
    if ((st = upload_packed(b, c, ds, stage, n_sub, index, arrays, counts, 1, &idx_dev, &data, NULL,
                            "copying the masses to the GPU")) != GP_OK) return st;
    int e = gp_state_dev_masses(idx_dev, (uint32_t)n_sub, data, mass_dev, c->stream);
    if ((st = gp_cuda_check(b, e, "storing the masses on the GPU")) != GP_OK) return st;
    return gp_cuda_sync(b, c, "storing the masses on the GPU");
}
