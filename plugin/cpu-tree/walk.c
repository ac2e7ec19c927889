/* walk.c — the group walk and its interaction-list kernels (see walk.h). */
#include "walk.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/kernels.h"
#include "core/mac.h"

#define CT_LIST_CAP 1024   /* entries per list before a flush (multiple of CT_LANES) */
#define CT_STACK_CAP 512   /* depth 21 x 8 children fits easily */

/* SoA list storage; n is the used length, padding up to a lane multiple is
 * written at flush time. */
typedef struct list_f { float x[CT_LIST_CAP], y[CT_LIST_CAP], z[CT_LIST_CAP], m[CT_LIST_CAP];
                        float s[6][CT_LIST_CAP]; int32_t id[CT_LIST_CAP]; uint32_t n; } list_f;
typedef struct list_d { double x[CT_LIST_CAP], y[CT_LIST_CAP], z[CT_LIST_CAP], m[CT_LIST_CAP];
                        double s[6][CT_LIST_CAP]; int32_t id[CT_LIST_CAP]; uint32_t n; } list_d;

struct ct_workspace {
    uint32_t max_group;
    list_f *cf, *pf;          /* cells, particles (single, mixed) */
    list_d *cd, *pd;          /* cells, particles (double)        */
    float *tf;                /* targets relative to the centre: x, y, z (3 * max_group) */
    double *td;
    double *acc;              /* running sums: ax, ay, az, pot (4 * max_group) */
    float *accf;              /* single precision running sums    */
    uint32_t stack[CT_STACK_CAP];
};

ct_workspace *ct_workspace_new(uint32_t max_group)
{
    ct_workspace *ws = calloc(1, sizeof *ws);
    if (!ws) return NULL;
    ws->max_group = max_group;
    ws->cf = aligned_alloc(64, sizeof(list_f));
    ws->pf = aligned_alloc(64, sizeof(list_f));
    ws->cd = aligned_alloc(64, sizeof(list_d));
    ws->pd = aligned_alloc(64, sizeof(list_d));
    ws->tf = malloc(3 * (size_t)max_group * sizeof(float));
    ws->td = malloc(3 * (size_t)max_group * sizeof(double));
    ws->acc = malloc(4 * (size_t)max_group * sizeof(double));
    ws->accf = malloc(4 * (size_t)max_group * sizeof(float));
    if (!ws->cf || !ws->pf || !ws->cd || !ws->pd || !ws->tf || !ws->td || !ws->acc || !ws->accf) {
        ct_workspace_free(ws);
        return NULL;
    }
    return ws;
}

void ct_workspace_free(ct_workspace *ws)
{
    if (!ws) return;
    free(ws->cf); free(ws->pf); free(ws->cd); free(ws->pd);
    free(ws->tf); free(ws->td); free(ws->acc); free(ws->accf);
    free(ws);
}

/* ---- kernels over a list --------------------------------------------------
 * One target against n list entries (n a multiple of CT_LANES, padding
 * entries have m = 0 and s = 0 and contribute exactly 0). Lane l of every
 * block sums into its own partial sum; the lanes are added 0..15 at the end.
 */
#define CT_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))

#define LANE_SUM(A, arr) ({ A s_ = 0; for (int l_ = 0; l_ < CT_LANES; l_++) s_ += arr[l_]; s_; })

/* Block of CT_BLOCK lane-blocks summed in the interaction type T before it
 * is added to the lane sums of type A (Chamomile's blocked accumulation:
 * in mixed mode each double lane sum receives float partial sums of 4
 * terms, which keeps float-to-double conversions off the critical path). */
#define CT_BLOCK 4

#define DEFINE_LIST_KERNELS(T, A, SFX, NAME, LIST)                                             \
    static inline __attribute__((always_inline)) void NAME##_cells_quad(                       \
        const LIST *L, uint32_t n, T xi, T yi, T zi, T eps2, A out[4])                         \
    {                                                                                          \
        A ax[CT_LANES] = { 0 }, ay[CT_LANES] = { 0 }, az[CT_LANES] = { 0 }, ph[CT_LANES] = { 0 }; \
        for (uint32_t j0 = 0; j0 < n; j0 += CT_BLOCK * CT_LANES) {                             \
            T bx[CT_LANES] = { 0 }, by[CT_LANES] = { 0 }, bz[CT_LANES] = { 0 }, bp[CT_LANES] = { 0 }; \
            uint32_t je = j0 + CT_BLOCK * CT_LANES < n ? j0 + CT_BLOCK * CT_LANES : n;         \
            for (uint32_t j1 = j0; j1 < je; j1 += CT_LANES) {                                  \
                _Pragma("omp simd")                                                            \
                for (int l = 0; l < CT_LANES; l++) {                                           \
                    uint32_t j = j1 + (uint32_t)l;                                             \
                    T fx, fy, fz, fp;                                                          \
                    gp_quad6_##SFX(L->x[j] - xi, L->y[j] - yi, L->z[j] - zi, L->m[j],          \
                                   L->s[0][j], L->s[1][j], L->s[2][j], L->s[3][j], L->s[4][j], \
                                   L->s[5][j], eps2, &fx, &fy, &fz, &fp);                      \
                    bx[l] += fx; by[l] += fy; bz[l] += fz; bp[l] += fp;                        \
                }                                                                              \
            }                                                                                  \
            _Pragma("omp simd")                                                                \
            for (int l = 0; l < CT_LANES; l++) {                                               \
                ax[l] += (A)bx[l]; ay[l] += (A)by[l]; az[l] += (A)bz[l]; ph[l] += (A)bp[l];    \
            }                                                                                  \
        }                                                                                      \
        out[0] += LANE_SUM(A, ax); out[1] += LANE_SUM(A, ay);                                  \
        out[2] += LANE_SUM(A, az); out[3] += LANE_SUM(A, ph);                                  \
    }                                                                                          \
    static inline __attribute__((always_inline)) void NAME##_mono(                             \
        const LIST *L, uint32_t n, T xi, T yi, T zi, T eps2, int32_t self, A out[4])           \
    {                                                                                          \
        A ax[CT_LANES] = { 0 }, ay[CT_LANES] = { 0 }, az[CT_LANES] = { 0 }, ph[CT_LANES] = { 0 }; \
        for (uint32_t j0 = 0; j0 < n; j0 += CT_BLOCK * CT_LANES) {                             \
            T bx[CT_LANES] = { 0 }, by[CT_LANES] = { 0 }, bz[CT_LANES] = { 0 }, bp[CT_LANES] = { 0 }; \
            uint32_t je = j0 + CT_BLOCK * CT_LANES < n ? j0 + CT_BLOCK * CT_LANES : n;         \
            for (uint32_t j1 = j0; j1 < je; j1 += CT_LANES) {                                  \
                _Pragma("omp simd")                                                            \
                for (int l = 0; l < CT_LANES; l++) {                                           \
                    uint32_t j = j1 + (uint32_t)l;                                             \
                    T m = L->id[j] == self ? (T)0 : L->m[j];                                   \
                    T fx, fy, fz, fp;                                                          \
                    gp_mono_##SFX(L->x[j] - xi, L->y[j] - yi, L->z[j] - zi, m, eps2,           \
                                  &fx, &fy, &fz, &fp);                                         \
                    bx[l] += fx; by[l] += fy; bz[l] += fz; bp[l] += fp;                        \
                }                                                                              \
            }                                                                                  \
            _Pragma("omp simd")                                                                \
            for (int l = 0; l < CT_LANES; l++) {                                               \
                ax[l] += (A)bx[l]; ay[l] += (A)by[l]; az[l] += (A)bz[l]; ph[l] += (A)bp[l];    \
            }                                                                                  \
        }                                                                                      \
        out[0] += LANE_SUM(A, ax); out[1] += LANE_SUM(A, ay);                                  \
        out[2] += LANE_SUM(A, az); out[3] += LANE_SUM(A, ph);                                  \
    }

DEFINE_LIST_KERNELS(float, float, f, kss, list_f)    /* single: float sums  */
DEFINE_LIST_KERNELS(float, double, f, kmx, list_f)   /* mixed: double sums  */
DEFINE_LIST_KERNELS(double, double, d, kdd, list_d)  /* double              */

/* Pads a list to a lane multiple with entries that contribute exactly 0. */
#define PAD_LIST(L, T)                                                                          \
    do {                                                                                        \
        uint32_t n_ = (L)->n, e_ = (n_ + CT_LANES - 1) / CT_LANES * CT_LANES;                   \
        for (uint32_t j_ = n_; j_ < e_; j_++) {                                                 \
            (L)->x[j_] = (T)1; (L)->y[j_] = (T)1; (L)->z[j_] = (T)1; (L)->m[j_] = 0;            \
            for (int k_ = 0; k_ < 6; k_++) (L)->s[k_][j_] = 0;                                  \
            (L)->id[j_] = -2;                                                                   \
        }                                                                                       \
    } while (0)

/* Evaluates the lists for every target and empties them. */
CT_CLONES static void flush(ct_workspace *ws, const ct_walk_params *p, const ct_group *g,
                            int quad)
{
    uint32_t nt = g->n;
    if (p->prec == CT_DOUBLE) {
        list_d *C = ws->cd, *P = ws->pd;
        uint32_t nc = (C->n + CT_LANES - 1) / CT_LANES * CT_LANES;
        uint32_t np = (P->n + CT_LANES - 1) / CT_LANES * CT_LANES;
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
    uint32_t nc = (C->n + CT_LANES - 1) / CT_LANES * CT_LANES;
    uint32_t np = (P->n + CT_LANES - 1) / CT_LANES * CT_LANES;
    PAD_LIST(C, float);
    PAD_LIST(P, float);
    float eps2 = (float)p->eps2;
    for (uint32_t t = 0; t < nt; t++) {
        float xi = ws->tf[3 * t], yi = ws->tf[3 * t + 1], zi = ws->tf[3 * t + 2];
        int32_t self = g->self ? g->self[t] : -1;
        if (p->prec == CT_MIXED) {
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

/* Float modes handle relative coordinates below this (r^2 stays far from
 * FLT_MAX); a group that meets anything farther, or a cell whose payload
 * does not fit, is redone in double precision: correct, just slower. */
#define CT_FLOAT_RANGE 1e15

static inline void push_cell(ct_workspace *ws, const ct_walk_params *p, const ct_group *g,
                             int quad, const ct_sources *src, uint32_t c, double dx, double dy,
                             double dz)
{
    if (p->prec == CT_DOUBLE) {
        const gp_moments *mo = &src->mom[c];
        list_d *C = ws->cd;
        if (C->n == CT_LIST_CAP) flush(ws, p, g, quad);
        uint32_t j = C->n++;
        C->x[j] = dx; C->y[j] = dy; C->z[j] = dz; C->m[j] = mo->m;
        for (int k = 0; k < 6; k++) C->s[k][j] = quad ? mo->s[k] : 0.0;
        C->id[j] = -1;
    } else {
        const ct_payload_f *pf = &src->payf[c];
        list_f *C = ws->cf;
        if (C->n == CT_LIST_CAP) flush(ws, p, g, quad);
        uint32_t j = C->n++;
        C->x[j] = (float)dx; C->y[j] = (float)dy; C->z[j] = (float)dz; C->m[j] = pf->m;
        for (int k = 0; k < 6; k++) C->s[k][j] = quad ? pf->s[k] : 0.0f;
        C->id[j] = -1;
    }
}

/* Appends a leaf's particles; returns 1 when a relative coordinate is out
 * of the float range the kernels handle (the group is then redone in double). */
static inline int push_particles(ct_workspace *ws, const ct_walk_params *p, const ct_group *g,
                                 int quad, const ct_sources *src, uint32_t begin, uint32_t count)
{
    for (uint32_t i = begin; i < begin + count; i++) {
        double dx = src->x[i] - g->centre[0], dy = src->y[i] - g->centre[1],
               dz = src->z[i] - g->centre[2];
        if (p->prec == CT_DOUBLE) {
            list_d *P = ws->pd;
            if (P->n == CT_LIST_CAP) flush(ws, p, g, quad);
            uint32_t j = P->n++;
            P->x[j] = dx; P->y[j] = dy; P->z[j] = dz; P->m[j] = src->m[i];
            P->id[j] = (int32_t)src->id[i];
        } else {
            if (!(fabs(dx) < CT_FLOAT_RANGE && fabs(dy) < CT_FLOAT_RANGE && fabs(dz) < CT_FLOAT_RANGE))
                return 1;
            list_f *P = ws->pf;
            if (P->n == CT_LIST_CAP) flush(ws, p, g, quad);
            uint32_t j = P->n++;
            P->x[j] = (float)dx; P->y[j] = (float)dy; P->z[j] = (float)dz;
            P->m[j] = (float)src->m[i];
            P->id[j] = (int32_t)src->id[i];
        }
    }
    return 0;
}

/* One walk of group g with parameters p; returns 1 (and leaves the
 * results undefined) when a float mode meets coordinates or payloads out of
 * its range. */
static int walk_once(const ct_sources *src, const ct_walk_params *p, ct_workspace *ws,
                     const ct_group *g, uint64_t *ncell_out, uint64_t *npart_out)
{
    uint32_t nt = g->n;
    int quad = p->quadrupole;
    const int floats = p->prec != CT_DOUBLE;
    memset(ws->acc, 0, 4 * (size_t)nt * sizeof *ws->acc);
    memset(ws->accf, 0, 4 * (size_t)nt * sizeof *ws->accf);
    for (uint32_t t = 0; t < nt; t++) {
        double rx = g->x[t] - g->centre[0], ry = g->y[t] - g->centre[1], rz = g->z[t] - g->centre[2];
        if (floats && !(fabs(rx) < CT_FLOAT_RANGE && fabs(ry) < CT_FLOAT_RANGE && fabs(rz) < CT_FLOAT_RANGE))
            return 1;
        ws->td[3 * t] = rx; ws->td[3 * t + 1] = ry; ws->td[3 * t + 2] = rz;
        ws->tf[3 * t] = (float)rx; ws->tf[3 * t + 1] = (float)ry; ws->tf[3 * t + 2] = (float)rz;
    }
    ws->cf->n = ws->pf->n = ws->cd->n = ws->pd->n = 0;

    uint64_t ncell = 0, npart = 0;
    if (src->n > 0) {
        const double gc[3] = { g->centre[0], g->centre[1], g->centre[2] };
        const double rg = g->radius;
        const int accel = p->mac == GP_MAC_ACCELERATION;
        const double alpha_a = p->alpha * g->amin;
        uint32_t sp = 0;
        ws->stack[sp++] = 0;
        while (sp > 0) {
            uint32_t c = ws->stack[--sp];
            const ct_wcell *wc = &src->cells[c];
            double dx = wc->com[0] - gc[0], dy = wc->com[1] - gc[1], dz = wc->com[2] - gc[2];
            double d2 = dx * dx + dy * dy + dz * dz;
            double rcrit = accel ? gp_mac_rcrit_acceleration(p->G * (double)wc->rcrit, alpha_a)
                                 : (double)wc->rcrit;
            uint32_t nchild = wc->nchild;
            int accept = wc->count > 1 && gp_mac_accept_distance(d2, rg, rcrit) &&
                         gp_mac_box_clear_rel(wc->blo, wc->bhi, -dx, -dy, -dz, rg);
            if (accept && floats && !(d2 < (double)src->payf[c].d2max)) return 1;
            if (accept) {
                push_cell(ws, p, g, quad, src, c, dx, dy, dz);
                ncell++;
            } else if (nchild == 0) {
                if (push_particles(ws, p, g, quad, src, wc->first, wc->count)) return 1;
                npart += wc->count;
            } else {
                /* children pushed in reverse so they are visited in key order */
                for (uint32_t k = nchild; k-- > 0;) ws->stack[sp++] = wc->first + k;
            }
        }
        flush(ws, p, g, quad);
    }
    for (uint32_t t = 0; t < nt; t++) {
        double a0, a1, a2, a3;
        if (p->prec == CT_SINGLE) {
            a0 = ws->accf[4 * t]; a1 = ws->accf[4 * t + 1]; a2 = ws->accf[4 * t + 2]; a3 = ws->accf[4 * t + 3];
        } else {
            a0 = ws->acc[4 * t]; a1 = ws->acc[4 * t + 1]; a2 = ws->acc[4 * t + 2]; a3 = ws->acc[4 * t + 3];
        }
        g->ax[t] = p->G * a0; g->ay[t] = p->G * a1; g->az[t] = p->G * a2;
        if (g->pot) g->pot[t] = p->G * a3;
    }
    *ncell_out = ncell;
    *npart_out = npart;
    return 0;
}

void ct_walk_group(const ct_sources *src, const ct_walk_params *p, ct_workspace *ws,
                   const ct_group *g, uint64_t *pp, uint64_t *pc)
{
    uint64_t ncell = 0, npart = 0;
    if (walk_once(src, p, ws, g, &ncell, &npart)) {
        ct_walk_params pd = *p;
        pd.prec = CT_DOUBLE;
        walk_once(src, &pd, ws, g, &ncell, &npart);
    }
    *pp += npart * g->n;
    *pc += ncell * g->n;
}
