/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_walk_portable.c — the walk on any CPU: its visit of the traversal
 * (oct_walk_accepts one cell at a time, lists filled from the cells'
 * records), the portable list kernels, and the flush that picks the list
 * kernels the CPU has (see cpu_walk.h, cpu_lists.h). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "octree/cpu_lists.h"
#include "octree/cpu_traverse.h"
#include "octree/cpu_walk.h"
#include "octree/cpu_walk_ws.h"
#include "octree/kernels.h"

/* ---- kernels over a list --------------------------------------------------
 * One target against n list entries (n a multiple of OCT_LANES, padding
 * entries have m = 0 and s = 0 and contribute exactly 0). Lane l of every
 * block sums into its own partial sum; the lanes are added 0..15 at the end.
 */
#define OCT_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))

#define LANE_SUM(A, arr) ({ A s_ = 0; for (int l_ = 0; l_ < OCT_LANES; l_++) s_ += arr[l_]; s_; })

/* Block of OCT_BLOCK lane-blocks summed in the interaction type T before it
 * is added to the lane sums of type A (Chamomile's blocked accumulation:
 * in mixed mode each double lane sum receives float partial sums of 4
 * terms, which keeps float-to-double conversions off the critical path). */
#define OCT_BLOCK 4

/* The blocked lane sum both list kernels run: the statements in ... set
 * T fx, fy, fz, fp for entry j of lane l; out[0..3] get the lane sums. */
#define BLOCKED_LANE_SUM(T, A, n, out, ...)                                                    \
    do {                                                                                       \
        A ax[OCT_LANES] = { 0 }, ay[OCT_LANES] = { 0 }, az[OCT_LANES] = { 0 }, ph[OCT_LANES] = { 0 }; \
        for (uint32_t j0 = 0; j0 < n; j0 += OCT_BLOCK * OCT_LANES) {                             \
            T bx[OCT_LANES] = { 0 }, by[OCT_LANES] = { 0 }, bz[OCT_LANES] = { 0 }, bp[OCT_LANES] = { 0 }; \
            uint32_t je = j0 + OCT_BLOCK * OCT_LANES < n ? j0 + OCT_BLOCK * OCT_LANES : n;         \
            for (uint32_t j1 = j0; j1 < je; j1 += OCT_LANES) {                                  \
                _Pragma("omp simd")                                                            \
                for (int l = 0; l < OCT_LANES; l++) {                                           \
                    uint32_t j = j1 + (uint32_t)l;                                             \
                    T fx, fy, fz, fp;                                                          \
                    __VA_ARGS__                                                                \
                    bx[l] += fx; by[l] += fy; bz[l] += fz; bp[l] += fp;                        \
                }                                                                              \
            }                                                                                  \
            _Pragma("omp simd")                                                                \
            for (int l = 0; l < OCT_LANES; l++) {                                               \
                ax[l] += (A)bx[l]; ay[l] += (A)by[l]; az[l] += (A)bz[l]; ph[l] += (A)bp[l];    \
            }                                                                                  \
        }                                                                                      \
        out[0] += LANE_SUM(A, ax); out[1] += LANE_SUM(A, ay);                                  \
        out[2] += LANE_SUM(A, az); out[3] += LANE_SUM(A, ph);                                  \
    } while (0)

#define DEFINE_LIST_KERNELS(T, A, SFX, NAME, LIST)                                             \
    static inline __attribute__((always_inline)) void NAME##_cells_quad(                       \
        const LIST *L, uint32_t n, T xi, T yi, T zi, T eps2, A out[4])                         \
    {                                                                                          \
        BLOCKED_LANE_SUM(T, A, n, out,                                                         \
            gp_quad6_##SFX(L->x[j] - xi, L->y[j] - yi, L->z[j] - zi, L->m[j],                  \
                           L->s[0][j], L->s[1][j], L->s[2][j], L->s[3][j], L->s[4][j],         \
                           L->s[5][j], eps2, &fx, &fy, &fz, &fp););                            \
    }                                                                                          \
    static inline __attribute__((always_inline)) void NAME##_mono(                             \
        const LIST *L, uint32_t n, T xi, T yi, T zi, T eps2, int32_t self, A out[4])           \
    {                                                                                          \
        BLOCKED_LANE_SUM(T, A, n, out,                                                         \
            T m = L->id[j] == self ? (T)0 : L->m[j];                                           \
            gp_mono_##SFX(L->x[j] - xi, L->y[j] - yi, L->z[j] - zi, m, eps2,                   \
                          &fx, &fy, &fz, &fp););                                               \
    }

DEFINE_LIST_KERNELS(float, float, f, kss, list_f)    /* single: float sums  */
DEFINE_LIST_KERNELS(float, double, f, kmx, list_f)   /* mixed: double sums  */
DEFINE_LIST_KERNELS(double, double, d, kdd, list_d)  /* double              */

/* Pads a list to a lane multiple with entries that contribute exactly 0. */
#define PAD_LIST(L, T)                                                                          \
    do {                                                                                        \
        uint32_t n_ = (L)->n, e_ = (n_ + OCT_LANES - 1) / OCT_LANES * OCT_LANES;                   \
        for (uint32_t j_ = n_; j_ < e_; j_++) {                                                 \
            (L)->x[j_] = (T)1; (L)->y[j_] = (T)1; (L)->z[j_] = (T)1; (L)->m[j_] = 0;            \
            for (int k_ = 0; k_ < 6; k_++) (L)->s[k_][j_] = 0;                                  \
            (L)->id[j_] = -2;                                                                   \
        }                                                                                       \
    } while (0)

OCT_CLONES static void walk_flush(oct_workspace *ws, const oct_walk_params *p, const oct_group *g,
                                  int quad)
{
    uint32_t nt = g->n;
    if (p->prec == OCT_DOUBLE) {
        list_d *C = ws->cd, *P = ws->pd;
        uint32_t nc = (C->n + OCT_LANES - 1) / OCT_LANES * OCT_LANES;
        uint32_t np = (P->n + OCT_LANES - 1) / OCT_LANES * OCT_LANES;
        PAD_LIST(C, double);
        PAD_LIST(P, double);
        for (uint32_t t = 0; t < nt; t++) {
            double *out = &ws->acc[4 * t];
            double xi = ws->td[3 * t], yi = ws->td[3 * t + 1], zi = ws->td[3 * t + 2];
            if (nc) {
                if (quad) kdd_cells_quad(C, nc, xi, yi, zi, p->eps2, out);
                else kdd_mono(C, nc, xi, yi, zi, p->eps2, -3, out);
            }
            if (np) kdd_mono(P, np, xi, yi, zi, p->eps2, g->self ? g->self[t] : -1, out);
        }
        C->n = P->n = 0;
        return;
    }
    list_f *C = ws->cf, *P = ws->pf;
    uint32_t nc = (C->n + OCT_LANES - 1) / OCT_LANES * OCT_LANES;
    uint32_t np = (P->n + OCT_LANES - 1) / OCT_LANES * OCT_LANES;
    PAD_LIST(C, float);
    PAD_LIST(P, float);
    float eps2 = ws->eps2f;
#ifdef OCT_HAVE_X86_SIMD
    if (ws->cells_q) {
        for (uint32_t j = C->n; j < nc; j++) C->et[j] = 0;
        if (oct_simd_level() >= OCT_SIMD_AVX512)
            oct_avx512_flush(C, nc, quad, P, np, ws->tf, g->self, nt, eps2, p->prec == OCT_MIXED,
                             ws->acc, ws->accf);
        else
            oct_avx2_flush(C, nc, quad, P, np, ws->tf, g->self, nt, eps2, p->prec == OCT_MIXED,
                           ws->acc, ws->accf);
        C->n = P->n = 0;
        return;
    }
#endif
    if (oct_simd_level() >= OCT_SIMD_AVX2) {
        /* the portable walk's lists (a tree without columns) */
        if (quad) oct_avx2_cells_to_q(C, nc, eps2);
        oct_avx2_flush(C, nc, quad, P, np, ws->tf, g->self, nt, eps2, p->prec == OCT_MIXED,
                       ws->acc, ws->accf);
        C->n = P->n = 0;
        return;
    }
    for (uint32_t t = 0; t < nt; t++) {
        float xi = ws->tf[3 * t], yi = ws->tf[3 * t + 1], zi = ws->tf[3 * t + 2];
        int32_t self = g->self ? g->self[t] : -1;
        if (p->prec == OCT_MIXED) {
            double *out = &ws->acc[4 * t];
            if (nc) {
                if (quad) kmx_cells_quad(C, nc, xi, yi, zi, eps2, out);
                else kmx_mono(C, nc, xi, yi, zi, eps2, -3, out);
            }
            if (np) kmx_mono(P, np, xi, yi, zi, eps2, self, out);
        } else {
            float *out = &ws->accf[4 * t];
            if (nc) {
                if (quad) kss_cells_quad(C, nc, xi, yi, zi, eps2, out);
                else kss_mono(C, nc, xi, yi, zi, eps2, -3, out);
            }
            if (np) kss_mono(P, np, xi, yi, zi, eps2, self, out);
        }
    }
    C->n = P->n = 0;
}

/* The other walk files flush through this plain function: clang emits a
 * target_clones function's dispatcher only in its own file, so an extern
 * clone would not link there. One call per full list. */
void oct_walk_flush(oct_workspace *ws, const oct_walk_params *p, const oct_group *g, int quad)
{
    walk_flush(ws, p, g, quad);
}

static inline void push_cell(oct_workspace *ws, const oct_walk_params *p, const oct_group *g,
                             int quad, const oct_sources *src, uint32_t c, double dx, double dy,
                             double dz)
{
    if (p->prec == OCT_DOUBLE) {
        const gp_moments *mo = &src->mom[c];
        list_d *C = ws->cd;
        if (C->n == OCT_LIST_CAP) walk_flush(ws, p, g, quad);
        uint32_t j = C->n++;
        C->x[j] = dx; C->y[j] = dy; C->z[j] = dz; C->m[j] = mo->m;
        for (int k = 0; k < 6; k++) C->s[k][j] = quad ? mo->s[k] : 0.0;
        C->id[j] = -1;
    } else {
        const oct_payload_f *pf = &src->payf[c];
        list_f *C = ws->cf;
        if (C->n == OCT_LIST_CAP) walk_flush(ws, p, g, quad);
        uint32_t j = C->n++;
        const double il = ws->il;
        C->x[j] = (float)(dx * il); C->y[j] = (float)(dy * il); C->z[j] = (float)(dz * il);
        C->m[j] = pf->m;
        for (int k = 0; k < 6; k++) C->s[k][j] = quad ? pf->s[k] : 0.0f;
        C->id[j] = -1;
    }
}

/* Appends a leaf's particles; returns 1 when a relative coordinate is out
 * of the float range the kernels handle (the group is then redone in double). */
static inline int push_particles(oct_workspace *ws, const oct_walk_params *p, const oct_group *g,
                                 int quad, const oct_sources *src, uint32_t begin, uint32_t count)
{
    for (uint32_t i = begin; i < begin + count; i++) {
        double dx = src->x[i] - g->centre[0], dy = src->y[i] - g->centre[1],
               dz = src->z[i] - g->centre[2];
        if (p->prec == OCT_DOUBLE) {
            list_d *P = ws->pd;
            if (P->n == OCT_LIST_CAP) walk_flush(ws, p, g, quad);
            uint32_t j = P->n++;
            P->x[j] = dx; P->y[j] = dy; P->z[j] = dz; P->m[j] = src->m[i];
            P->id[j] = (int32_t)src->id[i];
        } else {
            dx *= ws->il; dy *= ws->il; dz *= ws->il;
            if (!(fabs(dx) < OCT_FLOAT_RANGE && fabs(dy) < OCT_FLOAT_RANGE && fabs(dz) < OCT_FLOAT_RANGE))
                return 1;
            list_f *P = ws->pf;
            if (P->n == OCT_LIST_CAP) walk_flush(ws, p, g, quad);
            uint32_t j = P->n++;
            P->x[j] = (float)dx; P->y[j] = (float)dy; P->z[j] = (float)dz;
            P->m[j] = (float)src->m[i];
            P->id[j] = (int32_t)src->id[i];
        }
    }
    return 0;
}

int oct_push_particles(oct_workspace *ws, const oct_walk_params *p, const oct_group *g, int quad,
                       const oct_sources *src, uint32_t begin, uint32_t count)
{
    return push_particles(ws, p, g, quad, src, begin, count);
}

/* The traversal's hooks: one cell a batch, decided from its record. */
static inline __attribute__((always_inline)) int portable_decide(void *ctx, uint32_t c, uint32_t n)
{
    (void)n;
    const oct_walk_ctx *w = ctx;
    const oct_sources *src = w->src;
    oct_workspace *ws = w->ws;
    double d[3], d2;
    if (!oct_walk_accepts(&src->cells[c], w->g->centre, w->g->radius, w->accel, w->gfac, w->p->lcap,
                          d, &d2))
        return 0;
    if (w->floats && !(d2 * ws->il * ws->il < (double)src->payf[c].d2max)) return -1;
    push_cell(ws, w->p, w->g, w->quad, src, c, d[0], d[1], d[2]);
    oct_rec_cell(ws, c);
    return 1;
}

static inline __attribute__((always_inline)) int portable_leaf(void *ctx, uint32_t first, uint32_t count)
{
    const oct_walk_ctx *w = ctx;
    if (push_particles(w->ws, w->p, w->g, w->quad, w->src, first, count)) return 1;
    oct_rec_leaf(w->ws, first, count);
    return 0;
}

int oct_walk_portable(oct_walk_ctx *w, uint64_t *ncell, uint64_t *npart)
{
    /* a copy no flush can reach: its members stay in registers */
    oct_walk_ctx x = *w;
    return oct_traverse(x.src, x.ws->stack, OCT_BATCH_CELL, 0, portable_decide, portable_leaf, &x,
                        ncell, npart);
}
