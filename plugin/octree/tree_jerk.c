/* SPDX-License-Identifier: Apache-2.0 */
/* tree_jerk.c — the jerk of a tree walk (see tree_jerk.h). */
#include "octree/tree_jerk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_instance.h"
#include "base/base_state.h"
#include "octree/cpu_traverse.h"
#include "octree/mac.h"

#define JERK_LANES 16   /* lists padded to 16: the float kernels' lanes, twice the double ones' */

/* A leaf from its sources: the mass-weighted velocity (the plain mean when
 * massless), dS/dt about the com and that velocity, and the first moments
 * q = sum m (x - com), w = sum m (v - u), which rounding leaves nonzero and
 * the parent's dS/dt needs (cell_combine). */
static void leaf_of(const gp_cell *cl, const double *com, const double *x, const double *y,
                    const double *z, const double *m, const double *vx, const double *vy,
                    const double *vz, double *o, double *qw)
{
    const uint32_t b = cl->begin, e = cl->begin + cl->count;
    double M = 0, px = 0, py = 0, pz = 0, sx = 0, sy = 0, sz = 0;
    for (uint32_t k = b; k < e; k++) {
        M += m[k];
        px += m[k] * vx[k]; py += m[k] * vy[k]; pz += m[k] * vz[k];
        sx += vx[k]; sy += vy[k]; sz += vz[k];
    }
    if (M > 0) {
        o[0] = px / M; o[1] = py / M; o[2] = pz / M;
    } else {
        double n = cl->count ? (double)cl->count : 1.0;
        o[0] = sx / n; o[1] = sy / n; o[2] = sz / n;
    }
    double d[6] = { 0, 0, 0, 0, 0, 0 }, q[6] = { 0, 0, 0, 0, 0, 0 };
    for (uint32_t k = b; k < e; k++) {
        double ax = x[k] - com[0], ay = y[k] - com[1], az = z[k] - com[2];
        double ux = vx[k] - o[0], uy = vy[k] - o[1], uz = vz[k] - o[2];
        d[0] += m[k] * (2.0 * ax * ux); d[1] += m[k] * (2.0 * ay * uy);
        d[2] += m[k] * (2.0 * az * uz); d[3] += m[k] * (ax * uy + ux * ay);
        d[4] += m[k] * (ax * uz + ux * az); d[5] += m[k] * (ay * uz + uy * az);
        q[0] += m[k] * ax; q[1] += m[k] * ay; q[2] += m[k] * az;
        q[3] += m[k] * ux; q[4] += m[k] * uy; q[5] += m[k] * uz;
    }
    for (int k = 0; k < 6; k++) { o[3 + k] = d[k]; qw[k] = q[k]; }
}

/* An internal cell from its children (done before it), exactly as the sums
 * over its sources: with X = x - com_c, U = v - u_c, dx = com_c - com and
 * du = u_c - u, sum m (x - com)_a (v - u)_b over a child is
 * S'_ab + dx_a w_b + q_a du_b + M_c dx_a du_b. Carrying q and w (the
 * children's rounding: their com and velocity are not exactly their
 * sources' means) keeps the error at rounding of the cell's own scale,
 * where dropping them lost digits in small cells far from the origin. */
static void cell_combine(const gp_host_tree *st, uint32_t c, double *cv, double *qw)
{
    const gp_cell *cl = &st->cells[c];
    const double *com = st->mom[c].com;
    double M = 0, p[3] = { 0, 0, 0 }, sm[3] = { 0, 0, 0 };
    for (uint32_t h = cl->child; h < cl->child + cl->nchild; h++) {
        const double mc = st->mom[h].m, nc = (double)st->cells[h].count, *u = &cv[OCT_JERK_CELL * (size_t)h];
        M += mc;
        for (int a = 0; a < 3; a++) { p[a] += mc * u[a]; sm[a] += nc * u[a]; }
    }
    double *o = &cv[OCT_JERK_CELL * (size_t)c], *oq = &qw[OCT_JERK_SCRATCH * (size_t)c];
    for (int a = 0; a < 3; a++)
        o[a] = M > 0 ? p[a] / M : sm[a] / (cl->count ? (double)cl->count : 1.0);
    double d[6] = { 0, 0, 0, 0, 0, 0 }, q[6] = { 0, 0, 0, 0, 0, 0 };
    static const int ia[6] = { 0, 1, 2, 0, 0, 1 }, ib[6] = { 0, 1, 2, 1, 2, 2 };
    for (uint32_t h = cl->child; h < cl->child + cl->nchild; h++) {
        const double mc = st->mom[h].m, *u = &cv[OCT_JERK_CELL * (size_t)h], *hq = &qw[OCT_JERK_SCRATCH * (size_t)h];
        const double dx[3] = { st->mom[h].com[0] - com[0], st->mom[h].com[1] - com[1],
                               st->mom[h].com[2] - com[2] };
        const double du[3] = { u[0] - o[0], u[1] - o[1], u[2] - o[2] };
        for (int k = 0; k < 6; k++) {
            const int a = ia[k], b = ib[k];
            d[k] += u[3 + k] + (dx[a] * hq[3 + b] + hq[a] * du[b]) + (dx[b] * hq[3 + a] + hq[b] * du[a]) +
                    mc * (dx[a] * du[b] + dx[b] * du[a]);
        }
        for (int a = 0; a < 3; a++) { q[a] += hq[a] + mc * dx[a]; q[3 + a] += hq[3 + a] + mc * du[a]; }
    }
    for (int k = 0; k < 6; k++) { o[3 + k] = d[k]; oq[k] = q[k]; }
}

void oct_cell_velocities(const gp_host_tree *st, const double *x, const double *y,
                         const double *z, const double *m, const double *vx, const double *vy,
                         const double *vz, int threads, double *qw, double *cv)
{
    /* bottom-up, a level at a time (children before parents): O(n) over the
     * sources once, not once per level; each cell from the same inputs in
     * the same order whatever the threads */
#pragma omp parallel num_threads(threads) if (st->ncells > 4096)
    for (int level = (int)st->nlevels - 1; level >= 0; level--) {
#pragma omp for schedule(dynamic, 64)
        for (uint32_t c = st->level_start[level]; c < st->level_start[level + 1]; c++) {
            const gp_cell *cl = &st->cells[c];
            if (cl->nchild == 0)
                leaf_of(cl, st->mom[c].com, x, y, z, m, vx, vy, vz, &cv[OCT_JERK_CELL * (size_t)c],
                        &qw[OCT_JERK_SCRATCH * (size_t)c]);
            else
                cell_combine(st, c, cv, qw);
        }
    }
}

int oct_jerk_sources_make(const oct_tree *t, const uint32_t *pid, const gp_particles *p,
                          int threads, double **buf, oct_jerk_sources *js)
{
    const uint32_t ns = t->nsrc, nc = ns ? t->st.ncells : 0;
    /* the velocities, the cells' numbers, then oct_cell_velocities' scratch */
    double *b = malloc((3 * (size_t)ns + (OCT_JERK_CELL + OCT_JERK_SCRATCH) * (size_t)nc + 1) * sizeof *b);
    *buf = b;
    if (!b) return -1;
    double *vx = b, *vy = vx + ns, *vz = vy + ns, *cv = vz + ns;
#pragma omp parallel for schedule(static) num_threads(threads) if (ns > 65536)
    for (uint32_t k = 0; k < ns; k++) {
        size_t i = pid ? pid[k] : t->order[t->sid[k]];
        double v[3];
        gp_state_velocity(p, i, v);
        vx[k] = v[0]; vy[k] = v[1]; vz[k] = v[2];
    }
    if (nc)
        oct_cell_velocities(&t->st, t->sx, t->sy, t->sz, t->sm, vx, vy, vz, threads,
                            cv + OCT_JERK_CELL * (size_t)nc, cv);
    *js = (oct_jerk_sources){ vx, vy, vz, cv };
    return 0;
}

/* The interaction lists of one group, cells and particles apart:
 * position, velocity and mass, with a cell's S and dS/dt or a particle's
 * id, each padded to whole lanes with massless entries (a particle list's
 * s and sd columns are left unfilled: its kernel never reads them). */
#define JERK_LIST(T, NAME)                                                                      \
    typedef struct NAME {                                                                       \
        T *x, *y, *z, *vx, *vy, *vz, *m, *s[6], *sd[6];                                         \
        int32_t *id;                                                                            \
        uint32_t n, cap;                                                                        \
    } NAME;
JERK_LIST(double, jerk_list)   /* double: absolute, input units */
JERK_LIST(float, jerk_list_f)  /* float modes: about the group, scaled */

/* A growable array of indices. */
typedef struct index_list { uint32_t *k, n, cap; } index_list;

struct oct_jerk_workspace {
    index_list ci, pi;          /* what the walk sums: cells, source particles */
    jerk_list cells, parts;
    jerk_list_f cf, pf;
    oct_batch stack[OCT_STACK_CAP];
};

oct_jerk_workspace *oct_jerk_workspace_new(void)
{
    return calloc(1, sizeof(oct_jerk_workspace));
}

#define LIST_FREE(L)                                                                           \
    do {                                                                                       \
        free((L)->x); free((L)->y); free((L)->z);                                              \
        free((L)->vx); free((L)->vy); free((L)->vz); free((L)->m);                              \
        for (int k_ = 0; k_ < 6; k_++) { free((L)->s[k_]); free((L)->sd[k_]); }                 \
        free((L)->id);                                                                         \
    } while (0)

void oct_jerk_workspace_free(oct_jerk_workspace *ws)
{
    if (!ws) return;
    free(ws->ci.k); free(ws->pi.k);
    LIST_FREE(&ws->cells); LIST_FREE(&ws->parts);
    LIST_FREE(&ws->cf); LIST_FREE(&ws->pf);
    free(ws);
}

static int index_reserve(index_list *L, uint32_t need)
{
    if (need <= L->cap) return 0;
    uint32_t cap = L->cap ? L->cap : 1024;
    while (cap < need) cap *= 2;
    uint32_t *k = realloc(L->k, (size_t)cap * sizeof *k);
    if (!k) return -1;
    L->k = k;
    L->cap = cap;
    return 0;
}

/* Room for n entries padded to whole lanes in list L of element type T
 * (contents not kept). Returns 0, or -1 when out of memory. */
#define LIST_RESERVE(L, T, need)                                                               \
    ({                                                                                         \
        int rr_ = 0;                                                                           \
        uint32_t need_ = (need);                                                               \
        if (need_ > (L)->cap) {                                                                \
            uint32_t cap_ = (L)->cap ? (L)->cap : 1024;                                        \
            while (cap_ < need_) cap_ *= 2;                                                    \
            LIST_FREE(L);                                                                      \
            memset((L), 0, sizeof *(L));                                                       \
            T **cols_[] = { &(L)->x, &(L)->y, &(L)->z, &(L)->vx, &(L)->vy, &(L)->vz, &(L)->m,  \
                            &(L)->s[0], &(L)->s[1], &(L)->s[2], &(L)->s[3], &(L)->s[4],        \
                            &(L)->s[5], &(L)->sd[0], &(L)->sd[1], &(L)->sd[2], &(L)->sd[3],    \
                            &(L)->sd[4], &(L)->sd[5] };                                        \
            for (size_t k_ = 0; k_ < sizeof cols_ / sizeof *cols_; k_++)                       \
                if (!(*cols_[k_] = malloc((size_t)cap_ * sizeof(T)))) rr_ = -1;                \
            if (!((L)->id = malloc((size_t)cap_ * sizeof(int32_t)))) rr_ = -1;                 \
            if (rr_ == 0) (L)->cap = cap_;                                                     \
        }                                                                                      \
        rr_;                                                                                   \
    })

static uint32_t padded(uint32_t n)
{
    return (n + JERK_LANES - 1) / JERK_LANES * JERK_LANES;
}

/* The cells and particles the force walk of g sums, as indices: the
 * portable walk's traversal (cpu_traverse.h, one cell a batch) with its
 * test (oct_walk_accepts). */
typedef struct gather_ctx {
    const oct_sources *src;
    const oct_group *g;
    oct_jerk_workspace *ws;
    int accel;
    double gfac, lcap;
} gather_ctx;

static inline __attribute__((always_inline)) int gather_cell(void *ctx, uint32_t c, uint32_t n)
{
    (void)n;
    const gather_ctx *x = ctx;
    double d[3], d2;
    if (!oct_walk_accepts(&x->src->cells[c], x->g->centre, x->g->radius, x->accel, x->gfac, x->lcap, d,
                          &d2))
        return 0;
    index_list *C = &x->ws->ci;
    if (index_reserve(C, C->n + 1)) return -1;
    C->k[C->n++] = c;
    return 1;
}

static inline __attribute__((always_inline)) int gather_leaf(void *ctx, uint32_t first, uint32_t count)
{
    const gather_ctx *x = ctx;
    index_list *P = &x->ws->pi;
    if (index_reserve(P, P->n + count)) return 1;
    for (uint32_t k = first; k < first + count; k++) P->k[P->n++] = k;
    return 0;
}

/* Returns 0, or -1 when out of memory. */
static int gather(const oct_sources *src, const oct_walk_params *p, oct_jerk_workspace *ws,
                  const oct_group *g)
{
    ws->ci.n = ws->pi.n = 0;
    if (src->n == 0) return 0;
    gather_ctx x = { src, g, ws, p->mac == GP_MAC_ACCELERATION, oct_walk_gfac(p, g), p->lcap };
    uint64_t ncell = 0, npart = 0;
    return oct_traverse(src, ws->stack, OCT_BATCH_CELL, 0, gather_cell, gather_leaf, &x, &ncell, &npart)
               ? -1 : 0;
}

/* The entries E (cells and particles, as indices) as lists of T:
 * positions about c times il, velocities about u, S times il^2 and dS/dt
 * times il (double: c = u = 0, il = 1). FLOAT: returns 1 when a value
 * leaves the float kernels' range. Returns -1 when out of memory. */
#define FILL_LISTS(T, CL, PL, FLOAT)                                                           \
    ({                                                                                         \
        int rc_ = 0;                                                                           \
        if (LIST_RESERVE(CL, T, padded(E->ncell)) || LIST_RESERVE(PL, T, padded(E->npart)))    \
            rc_ = -1;                                                                          \
        const double il2 = il * il, R = FLOAT ? JERK_FLOAT_RANGE : HUGE_VAL;                   \
        int bad_ = 0;                                                                          \
        const int q_ = p->quadrupole;                                                          \
        for (uint32_t j = 0; j < E->ncell && !rc_; j++) {                                      \
            uint32_t c = E->cell[j];                                                           \
            const double *com = src->cells[c].com, *cv = &js->cv[OCT_JERK_CELL * (size_t)c];   \
            double x = (com[0] - gc[0]) * il, y = (com[1] - gc[1]) * il,                       \
                   z = (com[2] - gc[2]) * il;                                                  \
            double vx = cv[0] - u[0], vy = cv[1] - u[1], vz = cv[2] - u[2];                    \
            bad_ |= !(fabs(x) < R && fabs(y) < R && fabs(z) < R && fabs(vx) < R &&             \
                      fabs(vy) < R && fabs(vz) < R);                                           \
            (CL)->x[j] = (T)x; (CL)->y[j] = (T)y; (CL)->z[j] = (T)z;                           \
            (CL)->vx[j] = (T)vx; (CL)->vy[j] = (T)vy; (CL)->vz[j] = (T)vz;                     \
            (CL)->m[j] = (T)src->mom[c].m;                                                     \
            for (int k = 0; k < 6; k++) {                                                      \
                double sk = q_ ? src->mom[c].s[k] * il2 : 0.0, dk = q_ ? cv[3 + k] * il : 0.0; \
                bad_ |= !(fabs(sk) < R * R && fabs(dk) < R * R);                               \
                (CL)->s[k][j] = (T)sk;                                                         \
                (CL)->sd[k][j] = (T)dk;                                                        \
            }                                                                                  \
            (CL)->id[j] = -3;                                                                  \
        }                                                                                      \
        for (uint32_t j = 0; j < E->npart && !rc_; j++) {                                      \
            uint32_t k = E->part[j];                                                           \
            double x = (src->x[k] - gc[0]) * il, y = (src->y[k] - gc[1]) * il,                 \
                   z = (src->z[k] - gc[2]) * il;                                               \
            double vx = js->vx[k] - u[0], vy = js->vy[k] - u[1], vz = js->vz[k] - u[2];        \
            bad_ |= !(fabs(x) < R && fabs(y) < R && fabs(z) < R && fabs(vx) < R &&             \
                      fabs(vy) < R && fabs(vz) < R);                                           \
            (PL)->x[j] = (T)x; (PL)->y[j] = (T)y; (PL)->z[j] = (T)z;                           \
            (PL)->vx[j] = (T)vx; (PL)->vy[j] = (T)vy; (PL)->vz[j] = (T)vz;                     \
            (PL)->m[j] = (T)src->m[k];                                                         \
            (PL)->id[j] = (int32_t)src->id[k];                                                 \
        }                                                                                      \
        /* whole lanes: padding is massless and away from the group (adds 0) */                \
        for (int w = 0; w < 2 && !rc_; w++) {                                                  \
            __typeof__(CL) L_ = w ? (PL) : (CL);                                               \
            uint32_t n_ = w ? E->npart : E->ncell;                                             \
            for (uint32_t j = n_; j < padded(n_); j++) {                                       \
                L_->x[j] = L_->y[j] = L_->z[j] = (T)1;                                         \
                L_->vx[j] = L_->vy[j] = L_->vz[j] = L_->m[j] = 0;                              \
                for (int k = 0; k < 6 && !w; k++) L_->s[k][j] = L_->sd[k][j] = 0;              \
                L_->id[j] = -2;                                                                \
            }                                                                                  \
            L_->n = padded(n_);                                                                \
        }                                                                                      \
        rc_ ? rc_ : bad_;                                                                      \
    })

/* Beyond this (in units of 2^e_len, or of velocity) a float list would lose
 * the group: the double kernels take it (as the force walk's float modes
 * hand such a group to double). */
#define JERK_FLOAT_RANGE 1e15

static int fill_double(const oct_sources *src, const oct_jerk_sources *js,
                       const oct_walk_params *p, oct_jerk_workspace *ws, const oct_walk_lists *E)
{
    const double gc[3] = { 0, 0, 0 }, u[3] = { 0, 0, 0 }, il = 1.0;
    return FILL_LISTS(double, &ws->cells, &ws->parts, 0);
}

static int fill_float(const oct_sources *src, const oct_jerk_sources *js,
                      const oct_walk_params *p, oct_jerk_workspace *ws, const oct_walk_lists *E,
                      const double gc[3], const double u[3], double il)
{
    return FILL_LISTS(float, &ws->cf, &ws->pf, 1);
}

/* One target against a list: every entry's monopole jerk (a particle skips
 * the target itself), and for a cell (CELLS) the time derivative of the
 * quadrupole force of kernels.h, a_q(d, S) = -3 S d / r^5 + (7.5 dSd / r^7
 * - 1.5 tr S / r^5) d: through d (d' = v) and through S (S' = dS/dt, which
 * enters linearly). T the arithmetic, LN its lanes; BLK lane-blocks are
 * summed in T before they join the double lane sums (the mixed walk's
 * blocked sums), lanes added in a fixed order at the end: the same bits
 * whatever the threads. */
#define JERK_KERNEL(T, SQRT, LN, BLK, CELLS)                                                       \
    do {                                                                                           \
        const T *restrict X = L->x, *restrict Y = L->y, *restrict Z = L->z;                        \
        const T *restrict VX = L->vx, *restrict VY = L->vy, *restrict VZ = L->vz;                  \
        const T *restrict M = L->m;                                                                \
        const T *restrict S0 = L->s[0], *restrict S1 = L->s[1], *restrict S2 = L->s[2];            \
        const T *restrict S3 = L->s[3], *restrict S4 = L->s[4], *restrict S5 = L->s[5];            \
        const T *restrict D0 = L->sd[0], *restrict D1 = L->sd[1], *restrict D2 = L->sd[2];         \
        const T *restrict D3 = L->sd[3], *restrict D4 = L->sd[4], *restrict D5 = L->sd[5];         \
        const int32_t *restrict id = L->id;                                                        \
        double jx[LN] = { 0 }, jy[LN] = { 0 }, jz[LN] = { 0 };                                    \
        for (uint32_t j0 = 0; j0 < L->n; j0 += BLK * LN) {                                         \
            T bx[LN] = { 0 }, by[LN] = { 0 }, bz[LN] = { 0 };                                      \
            uint32_t je = j0 + BLK * LN < L->n ? j0 + BLK * LN : L->n;                             \
            for (uint32_t j1 = j0; j1 < je; j1 += LN) {                                            \
                _Pragma("omp simd")                                                                \
                for (int l = 0; l < LN; l++) {                                                     \
                    size_t j = (size_t)j1 + (size_t)l; /* contiguous: vector loads */              \
                    T dx = X[j] - xi, dy = Y[j] - yi, dz = Z[j] - zi;                              \
                    T r2 = dx * dx + dy * dy + dz * dz + eps2;                                     \
                    /* the self term and zero distances add nothing, without branches */          \
                    T keep = (T)((r2 > 0) & (id[j] != self));                                      \
                    T rinv = keep / SQRT(r2 > 0 ? r2 : (T)1);                                      \
                    T rinv2 = rinv * rinv;                                                         \
                    T mr3 = M[j] * rinv * rinv2;                                                   \
                    T dvx = VX[j] - vxi, dvy = VY[j] - vyi, dvz = VZ[j] - vzi;                     \
                    T dv = dx * dvx + dy * dvy + dz * dvz;                                         \
                    T rv3 = (T)3 * dv * rinv2;                                                     \
                    T fx = mr3 * (dvx - rv3 * dx);                                                 \
                    T fy = mr3 * (dvy - rv3 * dy);                                                 \
                    T fz = mr3 * (dvz - rv3 * dz);                                                 \
                    if (CELLS) {                                                                   \
                        T rinv5 = rinv * rinv2 * rinv2, rinv7 = rinv5 * rinv2;                     \
                        T rinv9 = rinv7 * rinv2;                                                   \
                        /* through d: S and tr S fixed */                                          \
                        T tr = S0[j] + S1[j] + S2[j];                                              \
                        T sdx = S0[j] * dx + S3[j] * dy + S4[j] * dz;                              \
                        T sdy = S3[j] * dx + S1[j] * dy + S5[j] * dz;                              \
                        T sdz = S4[j] * dx + S5[j] * dy + S2[j] * dz;                              \
                        T svx = S0[j] * dvx + S3[j] * dvy + S4[j] * dvz;                           \
                        T svy = S3[j] * dvx + S1[j] * dvy + S5[j] * dvz;                           \
                        T svz = S4[j] * dvx + S5[j] * dvy + S2[j] * dvz;                           \
                        T dsd = dx * sdx + dy * sdy + dz * sdz;                                    \
                        T vsd = dvx * sdx + dvy * sdy + dvz * sdz;                                 \
                        T c = (T)7.5 * dsd * rinv7 - (T)1.5 * tr * rinv5;                          \
                        T cdot = (T)15 * vsd * rinv7 +                                             \
                                 ((T)7.5 * tr * rinv7 - (T)52.5 * dsd * rinv9) * dv;               \
                        T w = (T)15 * dv * rinv7, q = (T)3 * rinv5;                                \
                        fx += cdot * dx + c * dvx + w * sdx - q * svx;                             \
                        fy += cdot * dy + c * dvy + w * sdy - q * svy;                             \
                        fz += cdot * dz + c * dvz + w * sdz - q * svz;                             \
                        /* through S: a_q(d, dS/dt) */                                             \
                        T trd = D0[j] + D1[j] + D2[j];                                             \
                        T ddx = D0[j] * dx + D3[j] * dy + D4[j] * dz;                              \
                        T ddy = D3[j] * dx + D1[j] * dy + D5[j] * dz;                              \
                        T ddz = D4[j] * dx + D5[j] * dy + D2[j] * dz;                              \
                        T dd = dx * ddx + dy * ddy + dz * ddz;                                     \
                        T cd = (T)7.5 * dd * rinv7 - (T)1.5 * trd * rinv5;                         \
                        fx += cd * dx - q * ddx;                                                   \
                        fy += cd * dy - q * ddy;                                                   \
                        fz += cd * dz - q * ddz;                                                   \
                    }                                                                              \
                    bx[l] += fx; by[l] += fy; bz[l] += fz;                                         \
                }                                                                                  \
            }                                                                                      \
            _Pragma("omp simd")                                                                    \
            for (int l = 0; l < LN; l++) {                                                         \
                jx[l] += (double)bx[l]; jy[l] += (double)by[l]; jz[l] += (double)bz[l];            \
            }                                                                                      \
        }                                                                                          \
        for (int w = LN / 2; w > 0; w /= 2)                                                        \
            for (int l = 0; l < w; l++) {                                                          \
                jx[l] += jx[l + w]; jy[l] += jy[l + w]; jz[l] += jz[l + w];                        \
            }                                                                                      \
        out[0] += jx[0]; out[1] += jy[0]; out[2] += jz[0];                                         \
    } while (0)

/* The kernels, each with CELLS a constant so that the lane loop
 * vectorises; AVX2 and AVX-512 clones chosen at load time. out[] is added
 * to. Double: lists as gathered. Float: lists and target about the group
 * centre in units of 2^e_len, velocities about the group's mean. */
#define JERK_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#define JERK_ARGS(T, LIST)                                                                     \
    const LIST *L, T xi, T yi, T zi, T vxi, T vyi, T vzi, int32_t self, T eps2, double out[3]
JERK_CLONES static void jerk_cells_d(JERK_ARGS(double, jerk_list))
{
    JERK_KERNEL(double, sqrt, 8, 1, 1);
}
JERK_CLONES static void jerk_particles_d(JERK_ARGS(double, jerk_list))
{
    JERK_KERNEL(double, sqrt, 8, 1, 0);
}
JERK_CLONES static void jerk_cells_f(JERK_ARGS(float, jerk_list_f))
{
    JERK_KERNEL(float, sqrtf, 16, 4, 1);
}
JERK_CLONES static void jerk_particles_f(JERK_ARGS(float, jerk_list_f))
{
    JERK_KERNEL(float, sqrtf, 16, 4, 0);
}

/* The float modes' jerk of g's targets, unscaled (times 2^(e_mass -
 * 3 e_len) gives the sum); returns 1 where a value leaves the float range
 * (the caller then takes the double kernels), -1 when out of memory. */
static int jerk_group_float(const oct_sources *src, const oct_jerk_sources *js,
                            const oct_walk_params *p, oct_jerk_workspace *ws, const oct_walk_lists *E,
                            const oct_group *g, const double *tv, double *jerk)
{
    const double il = ldexp(1.0, -src->e_len);
    double u[3] = { 0, 0, 0 };
    for (uint32_t t = 0; t < g->n; t++)
        for (int d = 0; d < 3; d++) u[d] += tv[3 * t + d];
    for (int d = 0; d < 3; d++) u[d] /= g->n ? (double)g->n : 1.0;
    int rc = fill_float(src, js, p, ws, E, g->centre, u, il);
    if (rc) return rc;
    const float eps2 = (float)(p->eps2 * il * il);
    if (!((double)eps2 < 1e30)) return 1;
    for (uint32_t t = 0; t < g->n; t++) {
        double x = (g->x[t] - g->centre[0]) * il, y = (g->y[t] - g->centre[1]) * il,
               z = (g->z[t] - g->centre[2]) * il;
        double vx = tv[3 * t] - u[0], vy = tv[3 * t + 1] - u[1], vz = tv[3 * t + 2] - u[2];
        double *o = &jerk[3 * t];
        o[0] = o[1] = o[2] = 0;
        int32_t self = g->self ? g->self[t] : -1;
        jerk_cells_f(&ws->cf, (float)x, (float)y, (float)z, (float)vx, (float)vy, (float)vz, -1,
                     eps2, o);
        jerk_particles_f(&ws->pf, (float)x, (float)y, (float)z, (float)vx, (float)vy, (float)vz,
                         self, eps2, o);
        if (!(isfinite(o[0]) && isfinite(o[1]) && isfinite(o[2]))) return 1;
    }
    return 0;
}

int oct_jerk_group(const oct_sources *src, const oct_jerk_sources *js, const oct_walk_params *p,
                   oct_jerk_workspace *ws, const oct_group *g, const oct_walk_lists *lists,
                   const double *tv, double *jerk)
{
    /* the force walk's record, read in place; else the same traversal again */
    oct_walk_lists walked;
    const oct_walk_lists *E = lists;
    if (!E) {
        if (gather(src, p, ws, g)) return -1;
        walked = (oct_walk_lists){ .cell = ws->ci.k, .part = ws->pi.k, .ncell = ws->ci.n, .npart = ws->pi.n };
        E = &walked;
    }
    /* masses are in units of 2^e_mass (oct_sources), float lengths in 2^e_len */
    if (p->prec != OCT_DOUBLE) {
        int rc = jerk_group_float(src, js, p, ws, E, g, tv, jerk);
        if (rc < 0) return -1;
        if (rc == 0) {
            const double scale = p->G * ldexp(1.0, src->e_mass - 3 * src->e_len);
            for (uint32_t k = 0; k < 3 * g->n; k++) jerk[k] *= scale;
            return 0;
        }
    }
    if (fill_double(src, js, p, ws, E) < 0) return -1;
    const double scale = p->G * ldexp(1.0, src->e_mass);
    for (uint32_t t = 0; t < g->n; t++) {
        double o[3] = { 0, 0, 0 };
        int32_t self = g->self ? g->self[t] : -1;
        jerk_cells_d(&ws->cells, g->x[t], g->y[t], g->z[t], tv[3 * t], tv[3 * t + 1], tv[3 * t + 2],
                     -1, p->eps2, o);
        jerk_particles_d(&ws->parts, g->x[t], g->y[t], g->z[t], tv[3 * t], tv[3 * t + 1],
                         tv[3 * t + 2], self, p->eps2, o);
        for (int d = 0; d < 3; d++) jerk[3 * t + d] = scale * o[d];
    }
    return 0;
}
