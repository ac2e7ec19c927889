/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_walk.c — the CPU group walk and its interaction-list kernels (see cpu_walk.h). */
#include "octree/cpu_walk.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "octree/cpu_lists.h"
#include "octree/kernels.h"
#include "octree/mac.h"

#define OCT_STACK_CAP 512   /* depth 21 x 8 children fits easily */

struct oct_workspace {
    uint32_t max_group;
    list_f *cf, *pf;          /* cells, particles (single, mixed) */
    list_d *cd, *pd;          /* cells, particles (double)        */
    float *tf;                /* targets relative to the centre: x, y, z (3 * max_group) */
    double *td;
    double *acc;              /* running sums: ax, ay, az, pot (4 * max_group) */
    float *accf;              /* single precision running sums    */
    int cells_q;              /* float lists filled by walk512 or walk256: cells carry Q and et */
    double il;                /* float modes: 2^-e_len, the length scale's inverse */
    float eps2f;              /* float modes: eps^2 in units of 2^(2 e_len) */
    uint32_t stack[OCT_STACK_CAP];
    /* the record of the last walk (oct_workspace_record) */
    int record, rec_ok;
    const oct_wcell *rec_cells;
    const oct_group *rec_g;
    uint32_t *rec_cell, *rec_part, cap_cell, cap_part;
    oct_walk_lists rec;
};

/* C11's aligned_alloc wants a size that is a multiple of the alignment
 * (glibc tolerates others; AddressSanitizer does not). */
static void *alloc64(size_t size)
{
    return aligned_alloc(64, (size + 63) / 64 * 64);
}

oct_workspace *oct_workspace_new(uint32_t max_group)
{
    oct_workspace *ws = calloc(1, sizeof *ws);
    if (!ws) return NULL;
    ws->max_group = max_group;
    ws->cf = alloc64(sizeof(list_f));
    ws->pf = alloc64(sizeof(list_f));
    ws->cd = alloc64(sizeof(list_d));
    ws->pd = alloc64(sizeof(list_d));
    ws->tf = malloc(3 * (size_t)max_group * sizeof(float));
    ws->td = malloc(3 * (size_t)max_group * sizeof(double));
    ws->acc = malloc(4 * (size_t)max_group * sizeof(double));
    ws->accf = malloc(4 * (size_t)max_group * sizeof(float));
    if (!ws->cf || !ws->pf || !ws->cd || !ws->pd || !ws->tf || !ws->td || !ws->acc || !ws->accf) {
        oct_workspace_free(ws);
        return NULL;
    }
    return ws;
}

void oct_workspace_free(oct_workspace *ws)
{
    if (!ws) return;
    free(ws->cf); free(ws->pf); free(ws->cd); free(ws->pd);
    free(ws->tf); free(ws->td); free(ws->acc); free(ws->accf);
    free(ws->rec_cell); free(ws->rec_part);
    free(ws);
}

void oct_workspace_record(oct_workspace *ws, int on)
{
    ws->record = on;
    ws->rec_g = NULL;
}

const oct_walk_lists *oct_walk_recorded(const oct_workspace *ws, const oct_sources *src,
                                        const oct_group *g)
{
    return ws->record && ws->rec_ok && ws->rec_g == g && ws->rec_cells == src->cells ? &ws->rec : NULL;
}

/* Room for `more` entries in a record list; on failure the record is
 * dropped for this walk (rec_ok = 0), never the walk. */
static inline int rec_room(oct_workspace *ws, uint32_t **list, uint32_t *cap, uint32_t n, uint32_t more)
{
    if (n + more <= *cap) return 1;
    uint32_t c = *cap ? *cap : 4096;
    while (c < n + more) c *= 2;
    uint32_t *grown = realloc(*list, (size_t)c * sizeof *grown);
    if (!grown) { ws->rec_ok = 0; return 0; }
    *list = grown;
    *cap = c;
    return 1;
}

static inline void rec_cell(oct_workspace *ws, uint32_t c)
{
    if (ws->record && ws->rec_ok && rec_room(ws, &ws->rec_cell, &ws->cap_cell, ws->rec.ncell, 1))
        ws->rec_cell[ws->rec.ncell++] = c;
}

static inline void rec_leaf(oct_workspace *ws, uint32_t first, uint32_t count)
{
    if (!ws->record || !ws->rec_ok) return;
    const uint32_t n = ws->rec.npart;
    if (!rec_room(ws, &ws->rec_part, &ws->cap_part, n, count)) return;
    uint32_t *o = ws->rec_part + n;
    for (uint32_t k = 0; k < count; k++) o[k] = first + k;
    ws->rec.npart = n + count;
}

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

/* ---- AVX-512 list kernels ---------------------------------------------------
 * The float modes' hot loop, written with intrinsics for x86-64 machines
 * with AVX-512F (chosen once at run time, cpu_lists.h; AVX2 machines use
 * cpu_lists_avx2.c, others the portable loops above). Differences from the
 * portable loops, all for speed:
 *   - 1/sqrt from the hardware estimate (vrsqrt14ps, 14 bits) plus one
 *     Newton step (relative error ~1e-7, float rounding): 5 operations
 *     instead of ~14;
 *   - i-blocking: two targets per pass over the list, so each list entry is
 *     loaded once for both and the two dependency chains overlap;
 *   - one pass for both lists (cells, then particles) into the same lane
 *     sums, added up once per flush;
 *   - float partial sums of OCT_BLOCK512 vectors per lane before they are
 *     added to the double lane sums (mixed) or float lane sums (single).
 * The order of every sum depends only on the list and the target, never on
 * the partner target or the thread: bit-identical whatever OMP_NUM_THREADS.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define OCT_HAVE_X86_SIMD 1
#define K512 __attribute__((target("avx512f,avx512dq,fma"), noinline))
#define K512_INL __attribute__((target("avx512f,avx512dq,fma"), always_inline)) static inline
#define OCT_BLOCK512 16

K512_INL __m512 k512_rinv(__m512 r2, const int soft)
{
    if (soft) {
        /* softened (eps^2 >= FLT_MIN): r2 >= eps^2 > 0, so the guards below
         * change nothing and are skipped (same bits) */
        __m512 y = _mm512_rsqrt14_ps(r2);
        __m512 t = _mm512_mul_ps(_mm512_mul_ps(r2, y), y);
        __m512 h = _mm512_fnmadd_ps(t, _mm512_set1_ps(0.5f), _mm512_set1_ps(1.5f));
        return _mm512_mul_ps(y, h);
    }
    const __m512 tiny = _mm512_set1_ps(1.17549435e-38f);
    __mmask16 pos = _mm512_cmp_ps_mask(r2, _mm512_setzero_ps(), _CMP_GT_OQ);
    __m512 x = _mm512_max_ps(r2, tiny);
    __m512 y = _mm512_maskz_rsqrt14_ps(pos, x);
    __m512 t = _mm512_mul_ps(_mm512_mul_ps(x, y), y);                 /* x y^2 ~ 1 */
    __m512 h = _mm512_fnmadd_ps(t, _mm512_set1_ps(0.5f), _mm512_set1_ps(1.5f));
    return _mm512_mul_ps(y, h);
}

/* Per-target running sums: double lanes (lo, hi halves) for mixed, float
 * lanes for single; flushed from the float block sums every OCT_BLOCK512. */
typedef struct k512_acc { __m512d d[4][2]; __m512 f[4]; } k512_acc;

K512_INL void k512_acc_zero(k512_acc *a)
{
    for (int c = 0; c < 4; c++) {
        a->d[c][0] = a->d[c][1] = _mm512_setzero_pd();
        a->f[c] = _mm512_setzero_ps();
    }
}

K512_INL void k512_acc_add(k512_acc *a, const __m512 b[4], int mixed)
{
    for (int c = 0; c < 4; c++) {
        if (mixed) {
            a->d[c][0] = _mm512_add_pd(a->d[c][0], _mm512_cvtps_pd(_mm512_castps512_ps256(b[c])));
            a->d[c][1] = _mm512_add_pd(a->d[c][1], _mm512_cvtps_pd(_mm512_extractf32x8_ps(b[c], 1)));
        } else {
            a->f[c] = _mm512_add_ps(a->f[c], b[c]);
        }
    }
}

/* Lanes added as a fixed tree (halves, then halves of those: the
 * reduce intrinsics' fixed instruction sequence), then to the target's
 * running total. */
K512_INL void k512_acc_out(const k512_acc *a, int mixed, double *outd, float *outf)
{
    for (int c = 0; c < 4; c++) {
        if (mixed) outd[c] += _mm512_reduce_add_pd(_mm512_add_pd(a->d[c][0], a->d[c][1]));
        else outf[c] += _mm512_reduce_add_ps(a->f[c]);
    }
}

/* Both interactions start alike: the separation d = x_j - x_i of 16 list
 * entries from one target, and the softened 1/r. */
K512_INL __m512 k512_sep(__m512 xj, __m512 yj, __m512 zj, __m512 xi, __m512 yi, __m512 zi,
                         __m512 eps2, const int soft, __m512 *dx, __m512 *dy, __m512 *dz)
{
    *dx = _mm512_sub_ps(xj, xi);
    *dy = _mm512_sub_ps(yj, yi);
    *dz = _mm512_sub_ps(zj, zi);
    __m512 r2 = _mm512_fmadd_ps(*dx, *dx, _mm512_fmadd_ps(*dy, *dy, _mm512_fmadd_ps(*dz, *dz, eps2)));
    return k512_rinv(r2, soft);
}

/* One list entry block j (16 lanes) against one target: monopole. */
K512_INL void k512_mono1(__m512 xj, __m512 yj, __m512 zj, __m512 mj, __m512i idj, __m512 xi,
                         __m512 yi, __m512 zi, __m512i self, __m512 eps2, __m512 b[4],
                         const int soft)
{
    __m512 dx, dy, dz;
    __m512 rinv = k512_sep(xj, yj, zj, xi, yi, zi, eps2, soft, &dx, &dy, &dz);
    __mmask16 notself = _mm512_cmpneq_epi32_mask(idj, self);
    __m512 mr = _mm512_mul_ps(mj, rinv);
    __m512 mr3 = _mm512_mul_ps(mr, _mm512_mul_ps(rinv, rinv));
    /* the self entry has dx = dy = dz = +0 exactly (the same double
     * position, rounded the same way), so it adds +0 to the accelerations
     * (finite mr3: r2 >= eps^2 > 0, or rinv = 0 where r2 = 0); only the
     * potential needs the mask */
    b[0] = _mm512_fmadd_ps(mr3, dx, b[0]);
    b[1] = _mm512_fmadd_ps(mr3, dy, b[1]);
    b[2] = _mm512_fmadd_ps(mr3, dz, b[2]);
    b[3] = _mm512_mask_sub_ps(b[3], notself, b[3], mr);
}

/* The same for a cell with its traceless quadrupole Q = 3 S - tr(S) I (S
 * the second moment; the cell columns store Q, see walk512) and et =
 * eps^2 tr(S): since dQd - et = 3 dSd - tr(S) r^2 (r softened), this is
 * gp_quad6_f's formula exactly, with its trace terms folded in: 6
 * operations fewer per interaction. */
K512_INL void k512_quad1(__m512 xj, __m512 yj, __m512 zj, __m512 mj, const __m512 q[6],
                         __m512 et, __m512 xi, __m512 yi, __m512 zi, __m512 eps2, __m512 b[4],
                         const int soft)
{
    __m512 dx, dy, dz;
    __m512 rinv = k512_sep(xj, yj, zj, xi, yi, zi, eps2, soft, &dx, &dy, &dz);
    __m512 rinv2 = _mm512_mul_ps(rinv, rinv);
    __m512 mr = _mm512_mul_ps(mj, rinv);
    __m512 rinv5 = _mm512_mul_ps(_mm512_mul_ps(rinv, rinv2), rinv2);
    __m512 qdx = _mm512_fmadd_ps(q[0], dx, _mm512_fmadd_ps(q[3], dy, _mm512_mul_ps(q[4], dz)));
    __m512 qdy = _mm512_fmadd_ps(q[3], dx, _mm512_fmadd_ps(q[1], dy, _mm512_mul_ps(q[5], dz)));
    __m512 qdz = _mm512_fmadd_ps(q[4], dx, _mm512_fmadd_ps(q[5], dy, _mm512_mul_ps(q[2], dz)));
    /* dQd - eps^2 tr(S) = 3 dSd - tr(S) r^2 with the softened r */
    __m512 dqd = _mm512_fmadd_ps(dx, qdx, _mm512_fmadd_ps(dy, qdy, _mm512_fmsub_ps(dz, qdz, et)));
    __m512 dqd5 = _mm512_mul_ps(dqd, rinv5);
    /* c = M/r^3 + 2.5 (dQd - eps^2 tr)/r^7 = (M/r + 2.5 dqd5) / r^2 */
    __m512 c = _mm512_mul_ps(_mm512_fmadd_ps(_mm512_set1_ps(2.5f), dqd5, mr), rinv2);
    b[0] = _mm512_fnmadd_ps(rinv5, qdx, _mm512_fmadd_ps(c, dx, b[0]));
    b[1] = _mm512_fnmadd_ps(rinv5, qdy, _mm512_fmadd_ps(c, dy, b[1]));
    b[2] = _mm512_fnmadd_ps(rinv5, qdz, _mm512_fmadd_ps(c, dz, b[2]));
    /* phi = -(M/r + 0.5 (dQd - eps^2 tr)/r^5) */
    b[3] = _mm512_sub_ps(b[3], _mm512_fmadd_ps(_mm512_set1_ps(0.5f), dqd5, mr));
}

/* Targets t0 and t1 (two = 0: t0 alone) against a list (n a multiple of
 * 16): cells (quad: with second moments) or particles (self excluded). */
K512_INL void k512_list(const list_f *L, uint32_t n, int quad, __m512 xa, __m512 ya, __m512 za,
                        __m512 xb, __m512 yb, __m512 zb, __m512i sa, __m512i sb, __m512 eps2,
                        int mixed, k512_acc *A, k512_acc *B, const int two, const int soft)
{
    for (uint32_t j0 = 0; j0 < n; j0 += OCT_BLOCK512 * 16) {
        __m512 ba[4], bb[4];
        for (int c = 0; c < 4; c++) ba[c] = bb[c] = _mm512_setzero_ps();
        uint32_t je = j0 + OCT_BLOCK512 * 16 < n ? j0 + OCT_BLOCK512 * 16 : n;
        if (quad) {
            for (uint32_t j = j0; j < je; j += 16) {
                __m512 xj = _mm512_load_ps(L->x + j), yj = _mm512_load_ps(L->y + j),
                       zj = _mm512_load_ps(L->z + j), mj = _mm512_load_ps(L->m + j);
                __m512 s[6];
                for (int k = 0; k < 6; k++) s[k] = _mm512_load_ps(L->s[k] + j);
                __m512 et = _mm512_load_ps(L->et + j);
                k512_quad1(xj, yj, zj, mj, s, et, xa, ya, za, eps2, ba, soft);
                if (two) k512_quad1(xj, yj, zj, mj, s, et, xb, yb, zb, eps2, bb, soft);
            }
        } else {
            for (uint32_t j = j0; j < je; j += 16) {
                __m512 xj = _mm512_load_ps(L->x + j), yj = _mm512_load_ps(L->y + j),
                       zj = _mm512_load_ps(L->z + j), mj = _mm512_load_ps(L->m + j);
                __m512i idj = _mm512_load_si512((const void *)(L->id + j));
                k512_mono1(xj, yj, zj, mj, idj, xa, ya, za, sa, eps2, ba, soft);
                if (two) k512_mono1(xj, yj, zj, mj, idj, xb, yb, zb, sb, eps2, bb, soft);
            }
        }
        k512_acc_add(A, ba, mixed);
        if (two) k512_acc_add(B, bb, mixed);
    }
}

/* Targets t0 and t1 (two = 0: t0 alone) against the cell list C and the
 * particle list P, in that order, into the same lane sums. */
K512_INL void k512_body(const list_f *C, uint32_t nc, int quad, const list_f *P, uint32_t np,
                        const float *t0, const float *t1, int32_t self0, int32_t self1,
                        float eps2f, int mixed, double *od0, double *od1, float *of0,
                        float *of1, const int two, const int soft)
{
    const __m512 eps2 = _mm512_set1_ps(eps2f);
    const __m512 xa = _mm512_set1_ps(t0[0]), ya = _mm512_set1_ps(t0[1]), za = _mm512_set1_ps(t0[2]);
    const __m512 xb = _mm512_set1_ps(t1[0]), yb = _mm512_set1_ps(t1[1]), zb = _mm512_set1_ps(t1[2]);
    const __m512i none = _mm512_set1_epi32(-3);
    const __m512i sa = _mm512_set1_epi32(self0), sb = _mm512_set1_epi32(self1);
    k512_acc A, B;
    k512_acc_zero(&A);
    k512_acc_zero(&B);
    k512_list(C, nc, quad, xa, ya, za, xb, yb, zb, none, none, eps2, mixed, &A, &B, two, soft);
    k512_list(P, np, 0, xa, ya, za, xb, yb, zb, sa, sb, eps2, mixed, &A, &B, two, soft);
    k512_acc_out(&A, mixed, od0, of0);
    if (two) k512_acc_out(&B, mixed, od1, of1);
}

/* Targets t0 and t1 against both lists; write1 = 0: t0 alone (odd count). */
K512 static void k512_pair(const list_f *C, uint32_t nc, int quad, const list_f *P, uint32_t np,
                           const float *t0, const float *t1, int32_t self0, int32_t self1,
                           float eps2f, int mixed, double *od0, double *od1, float *of0,
                           float *of1, int write1)
{
    if (eps2f >= FLT_MIN) {
        if (write1)
            k512_body(C, nc, quad, P, np, t0, t1, self0, self1, eps2f, mixed, od0, od1, of0, of1, 1, 1);
        else
            k512_body(C, nc, quad, P, np, t0, t0, self0, self0, eps2f, mixed, od0, od0, of0, of0, 0, 1);
    } else {
        if (write1)
            k512_body(C, nc, quad, P, np, t0, t1, self0, self1, eps2f, mixed, od0, od1, of0, of1, 1, 0);
        else
            k512_body(C, nc, quad, P, np, t0, t0, self0, self0, eps2f, mixed, od0, od0, of0, of0, 0, 0);
    }
}

/* Whether the AVX-512 path runs (cpu_lists.h). */
static int k512_available(void)
{
    return oct_simd_level() >= OCT_SIMD_AVX512;
}

/* Float-mode flush body on AVX-512: every target, cells then particles. */
static void flush_f512(oct_workspace *ws, const oct_walk_params *p, const oct_group *g, int quad,
                       uint32_t nc, uint32_t np)
{
    const list_f *C = ws->cf, *P = ws->pf;
    const int mixed = p->prec == OCT_MIXED;
    const float eps2 = ws->eps2f;
    for (uint32_t t = 0; t < g->n; t += 2) {
        uint32_t u = t + 1 < g->n ? t + 1 : t;
        int write1 = u != t;
        int32_t s0 = g->self ? g->self[t] : -1, s1 = g->self ? g->self[u] : -1;
        double *od0 = &ws->acc[4 * t], *od1 = &ws->acc[4 * u];
        float *of0 = &ws->accf[4 * t], *of1 = &ws->accf[4 * u];
        const float *t0 = &ws->tf[3 * t], *t1 = &ws->tf[3 * u];
        k512_pair(C, nc, quad, P, np, t0, t1, s0, s1, eps2, mixed, od0, od1, of0, of1, write1);
    }
}
#endif

/* Evaluates the lists for every target and empties them. */
OCT_CLONES static void flush(oct_workspace *ws, const oct_walk_params *p, const oct_group *g,
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
        if (k512_available())
            flush_f512(ws, p, g, quad, nc, np);
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

/* Float modes handle relative coordinates below this (r^2 stays far from
 * FLT_MAX); a group that meets anything farther, or a cell whose payload
 * does not fit, is redone in double precision: correct, just slower. */
#define OCT_FLOAT_RANGE 1e15

static inline void push_cell(oct_workspace *ws, const oct_walk_params *p, const oct_group *g,
                             int quad, const oct_sources *src, uint32_t c, double dx, double dy,
                             double dz)
{
    if (p->prec == OCT_DOUBLE) {
        const gp_moments *mo = &src->mom[c];
        list_d *C = ws->cd;
        if (C->n == OCT_LIST_CAP) flush(ws, p, g, quad);
        uint32_t j = C->n++;
        C->x[j] = dx; C->y[j] = dy; C->z[j] = dz; C->m[j] = mo->m;
        for (int k = 0; k < 6; k++) C->s[k][j] = quad ? mo->s[k] : 0.0;
        C->id[j] = -1;
    } else {
        const oct_payload_f *pf = &src->payf[c];
        list_f *C = ws->cf;
        if (C->n == OCT_LIST_CAP) flush(ws, p, g, quad);
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
            if (P->n == OCT_LIST_CAP) flush(ws, p, g, quad);
            uint32_t j = P->n++;
            P->x[j] = dx; P->y[j] = dy; P->z[j] = dz; P->m[j] = src->m[i];
            P->id[j] = (int32_t)src->id[i];
        } else {
            dx *= ws->il; dy *= ws->il; dz *= ws->il;
            if (!(fabs(dx) < OCT_FLOAT_RANGE && fabs(dy) < OCT_FLOAT_RANGE && fabs(dz) < OCT_FLOAT_RANGE))
                return 1;
            list_f *P = ws->pf;
            if (P->n == OCT_LIST_CAP) flush(ws, p, g, quad);
            uint32_t j = P->n++;
            P->x[j] = (float)dx; P->y[j] = (float)dy; P->z[j] = (float)dz;
            P->m[j] = (float)src->m[i];
            P->id[j] = (int32_t)src->id[i];
        }
    }
    return 0;
}

#ifdef OCT_HAVE_X86_SIMD
/* The root of a SIMD walk, tested alone as walk_once tests it: -1 out of
 * the float range, 0 accepted (appended to the empty cell list in the
 * SIMD form), 1 a leaf whose particles the caller appends, 2 a cell to
 * open. */
static int simd_root(const oct_sources *src, const oct_walk_params *p, oct_workspace *ws,
                     const oct_group *g, int quad, double gfac)
{
    const oct_wcell *wc = &src->cells[0];
    const oct_cell_columns *col = src->col;
    double d[3], d2;
    const double il = ws->il;
    if (oct_walk_accepts(wc, g->centre, g->radius, p->mac == GP_MAC_ACCELERATION, gfac, p->lcap, d, &d2)) {
        if (!(d2 * il * il < (double)src->payf[0].d2max)) return -1;
        list_f *C = ws->cf;
        uint32_t j = C->n++;
        C->x[j] = (float)(d[0] * il); C->y[j] = (float)(d[1] * il); C->z[j] = (float)(d[2] * il);
        C->m[j] = col->m[0];
        for (int k = 0; k < 6; k++) C->s[k][j] = quad ? col->s[k][0] : 0.0f;
        C->et[j] = quad ? ws->eps2f * col->tr[0] : 0.0f;
        C->id[j] = -1;
        rec_cell(ws, 0);
        return 0;
    }
    return wc->nchild == 0 ? 1 : 2;
}

/* ---- AVX-512 traversal (float modes) -----------------------------------------
 * Visits the same cells and makes the same decisions as the loop in
 * walk_once, but a cell's children are decided together when the cell is
 * opened: one masked load per column brings all of them (they are
 * consecutive), the MAC, the box test and the float-range test run on 8
 * lanes in double (same operations, same answers as the scalar test), and
 * the accepted cells are appended to the cell list with compress-stores,
 * no branch per cell. Opened leaves append their particles 8 at a time;
 * opened internal cells go on the stack. Only the order in which the list
 * is filled differs from the scalar walk (it depends on the tree and the
 * group alone, never on threads). Returns 1 where walk_once would. */
#define K512W __attribute__((target("avx512f,avx512dq,avx512vl,fma")))

K512W static inline int w512_particles(oct_workspace *ws, const oct_walk_params *p,
                                       const oct_group *g, int quad, const oct_sources *src,
                                       uint32_t begin, uint32_t count)
{
    list_f *P = ws->pf;
    if (P->n + count > OCT_LIST_CAP) flush(ws, p, g, quad);
    if (count > OCT_LIST_CAP) return push_particles(ws, p, g, quad, src, begin, count);
    const __m512d gx = _mm512_set1_pd(g->centre[0]), gy = _mm512_set1_pd(g->centre[1]),
                  gz = _mm512_set1_pd(g->centre[2]), range = _mm512_set1_pd(OCT_FLOAT_RANGE),
                  il = _mm512_set1_pd(ws->il);
    uint32_t n = P->n;
    for (uint32_t i = 0; i < count; i += 8) {
        __mmask8 k = count - i >= 8 ? 0xff : (__mmask8)((1u << (count - i)) - 1);
        uint32_t s = begin + i;
        __m512d dx = _mm512_mul_pd(_mm512_sub_pd(_mm512_maskz_loadu_pd(k, src->x + s), gx), il);
        __m512d dy = _mm512_mul_pd(_mm512_sub_pd(_mm512_maskz_loadu_pd(k, src->y + s), gy), il);
        __m512d dz = _mm512_mul_pd(_mm512_sub_pd(_mm512_maskz_loadu_pd(k, src->z + s), gz), il);
        __mmask8 ok = _mm512_cmp_pd_mask(_mm512_abs_pd(dx), range, _CMP_LT_OQ) &
                      _mm512_cmp_pd_mask(_mm512_abs_pd(dy), range, _CMP_LT_OQ) &
                      _mm512_cmp_pd_mask(_mm512_abs_pd(dz), range, _CMP_LT_OQ);
        if ((ok & k) != k) return 1;
        _mm256_mask_storeu_ps(P->x + n + i, k, _mm512_cvtpd_ps(dx));
        _mm256_mask_storeu_ps(P->y + n + i, k, _mm512_cvtpd_ps(dy));
        _mm256_mask_storeu_ps(P->z + n + i, k, _mm512_cvtpd_ps(dz));
        _mm256_mask_storeu_ps(P->m + n + i, k, _mm512_cvtpd_ps(_mm512_maskz_loadu_pd(k, src->m + s)));
        _mm256_mask_storeu_epi32(P->id + n + i, k, _mm256_maskz_loadu_epi32(k, src->id + s));
    }
    P->n = n + count;
    return 0;
}

K512W static int walk512(const oct_sources *src, const oct_walk_params *p, oct_workspace *ws,
                         const oct_group *g, int quad, double gfac, uint64_t *ncell_out,
                         uint64_t *npart_out)
{
    const oct_cell_columns *col = src->col;
    const double rg = g->radius;
    const __m512d gx = _mm512_set1_pd(g->centre[0]), gy = _mm512_set1_pd(g->centre[1]),
                  gz = _mm512_set1_pd(g->centre[2]), vrg = _mm512_set1_pd(rg),
                  vrg2 = _mm512_set1_pd(rg * rg), vgfac = _mm512_set1_pd(gfac),
                  zero = _mm512_setzero_pd();
    const __m256i one = _mm256_set1_epi32(1), lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const int accel = p->mac == GP_MAC_ACCELERATION;
    const double lcap = p->lcap;
    const float eps2f = ws->eps2f;
    const __m256 veps2 = _mm256_set1_ps(eps2f);
    const double il = ws->il;
    const __m512d vil = _mm512_set1_pd(il);
    uint64_t ncell = 0, npart = 0;
    list_f *C = ws->cf;
    uint32_t sp = 0;

    const oct_wcell *root = &src->cells[0];
    switch (simd_root(src, p, ws, g, quad, gfac)) {
    case -1: return 1;
    case 0: ncell++; break;
    case 1:
        if (w512_particles(ws, p, g, quad, src, root->first, root->count)) return 1;
        npart += root->count;
        rec_leaf(ws, root->first, root->count);
        break;
    default: ws->stack[sp++] = 0;
    }
    while (sp > 0) {
        uint32_t c = ws->stack[--sp];
        uint32_t f = col->first[c], nch = col->nchild[c];
        __mmask8 all = (__mmask8)((1u << nch) - 1);
        __m512d dx = _mm512_sub_pd(_mm512_maskz_loadu_pd(all, col->cx + f), gx);
        __m512d dy = _mm512_sub_pd(_mm512_maskz_loadu_pd(all, col->cy + f), gy);
        __m512d dz = _mm512_sub_pd(_mm512_maskz_loadu_pd(all, col->cz + f), gz);
        __m512d d2 = _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(dx, dx), _mm512_mul_pd(dy, dy)),
                                   _mm512_mul_pd(dz, dz));
        __m512d rc = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(all, col->rcrit + f));
        if (accel) {
            rc = _mm512_mul_pd(rc, vgfac);
            if (lcap > 0) {   /* oct_accel_rcrit: at least the box's side x lcap */
                __m512d side = zero;
                for (int a = 0; a < 3; a++)
                    /* (a NaN side keeps the last, as the scalar form does:
                     * max_pd answers its second operand then) */
                    side = _mm512_max_pd(_mm512_sub_pd(_mm512_cvtps_pd(_mm256_maskz_loadu_ps(all, col->bhi[a] + f)),
                                                       _mm512_cvtps_pd(_mm256_maskz_loadu_ps(all, col->blo[a] + f))),
                                         side);
                rc = _mm512_max_pd(rc, _mm512_mul_pd(side, _mm512_set1_pd(lcap)));
            }
        }
        __m512d r = _mm512_add_pd(rc, vrg);
        __mmask8 acc = _mm512_mask_cmp_pd_mask(all, _mm512_mul_pd(r, r), d2, _CMP_LT_OQ);
        __m256i cnt = _mm256_maskz_loadu_epi32(all, col->count + f);
        acc &= _mm256_cmpgt_epu32_mask(cnt, one);
        /* box test: r = group centre - com = -d; e = distance outside [lo, hi] per axis */
        __m512d ex, e2;
        __m512d rx = _mm512_sub_pd(zero, dx), ry = _mm512_sub_pd(zero, dy), rz = _mm512_sub_pd(zero, dz);
        __m512d lo, hi;
        lo = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(all, col->blo[0] + f));
        hi = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(all, col->bhi[0] + f));
        ex = _mm512_max_pd(_mm512_max_pd(_mm512_sub_pd(lo, rx), _mm512_sub_pd(rx, hi)), zero);
        e2 = _mm512_mul_pd(ex, ex);
        lo = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(all, col->blo[1] + f));
        hi = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(all, col->bhi[1] + f));
        ex = _mm512_max_pd(_mm512_max_pd(_mm512_sub_pd(lo, ry), _mm512_sub_pd(ry, hi)), zero);
        e2 = _mm512_add_pd(e2, _mm512_mul_pd(ex, ex));
        lo = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(all, col->blo[2] + f));
        hi = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(all, col->bhi[2] + f));
        ex = _mm512_max_pd(_mm512_max_pd(_mm512_sub_pd(lo, rz), _mm512_sub_pd(rz, hi)), zero);
        e2 = _mm512_add_pd(e2, _mm512_mul_pd(ex, ex));
        acc &= _mm512_cmp_pd_mask(e2, vrg2, _CMP_GT_OQ);

        if (acc) {
            __m512d d2max = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(acc, col->d2max + f));
            __m512d d2s = _mm512_mul_pd(_mm512_mul_pd(d2, vil), vil);
            if (_mm512_mask_cmp_pd_mask(acc, d2s, d2max, _CMP_NLT_UQ)) return 1;
            dx = _mm512_mul_pd(dx, vil); dy = _mm512_mul_pd(dy, vil); dz = _mm512_mul_pd(dz, vil);
            if (C->n + 8 > OCT_LIST_CAP) flush(ws, p, g, quad);
            uint32_t j = C->n;
            /* (8 entries written, na kept: the list has room for 8) */
            _mm256_storeu_ps(C->x + j, _mm256_maskz_compress_ps(acc, _mm512_cvtpd_ps(dx)));
            _mm256_storeu_ps(C->y + j, _mm256_maskz_compress_ps(acc, _mm512_cvtpd_ps(dy)));
            _mm256_storeu_ps(C->z + j, _mm256_maskz_compress_ps(acc, _mm512_cvtpd_ps(dz)));
            _mm256_storeu_ps(C->m + j, _mm256_maskz_compress_ps(acc, _mm256_maskz_loadu_ps(acc, col->m + f)));
            for (int k = 0; k < 6; k++)
                _mm256_storeu_ps(C->s[k] + j, quad ? _mm256_maskz_compress_ps(acc, _mm256_maskz_loadu_ps(acc, col->s[k] + f))
                                                   : _mm256_setzero_ps());
            _mm256_storeu_ps(C->et + j, quad ? _mm256_mul_ps(veps2, _mm256_maskz_compress_ps(acc, _mm256_maskz_loadu_ps(acc, col->tr + f)))
                                             : _mm256_setzero_ps());
            _mm256_storeu_si256((__m256i *)(C->id + j), _mm256_set1_epi32(-1));
            uint32_t na = (uint32_t)__builtin_popcount(acc);
            C->n = j + na;
            ncell += na;
            if (ws->record && ws->rec_ok && rec_room(ws, &ws->rec_cell, &ws->cap_cell, ws->rec.ncell, 8)) {
                __m256i idx = _mm256_add_epi32(_mm256_set1_epi32((int)f), lane);
                _mm256_mask_compressstoreu_epi32(ws->rec_cell + ws->rec.ncell, acc, idx);
                ws->rec.ncell += na;
            }
        }
        __mmask8 open = all & (__mmask8)~acc;
        if (!open) continue;
        __m256i nchild = _mm256_maskz_loadu_epi32(open, col->nchild + f);
        __mmask8 leaf = _mm256_mask_cmpeq_epi32_mask(open, nchild, _mm256_setzero_si256());
        __mmask8 inner = open & (__mmask8)~leaf;
        while (leaf) {
            unsigned l = (unsigned)__builtin_ctz(leaf);
            leaf &= (__mmask8)(leaf - 1);
            uint32_t cnt1 = col->count[f + l];
            if (w512_particles(ws, p, g, quad, src, col->first[f + l], cnt1)) return 1;
            npart += cnt1;
            rec_leaf(ws, col->first[f + l], cnt1);
        }
        if (inner) {
            /* (popped last child first: the order only changes the list order) */
            __m256i idx = _mm256_add_epi32(_mm256_set1_epi32((int)f), lane);
            _mm256_storeu_si256((__m256i *)(ws->stack + sp), _mm256_maskz_compress_epi32(inner, idx));
            sp += (uint32_t)__builtin_popcount(inner);
        }
    }
    flush(ws, p, g, quad);
    *ncell_out = ncell;
    *npart_out = npart;
    return 0;
}

/* ---- AVX2 traversal (float modes) ---------------------------------------------
 * walk512 for CPUs with AVX2 and no AVX-512: the same tests on the same
 * cell columns, a cell's children decided together on two halves of four
 * doubles, leaves first and then the inner children pushed in ascending
 * order, so the lists fill in walk512's order. AVX2 has no compress
 * instruction: the accepted children are packed by a permutation looked up
 * from their 8-bit mask. */
#define A2W __attribute__((target("avx2,fma")))

/* The first k (0..4) of four 64-bit lanes, and of four 32-bit lanes. */
A2W static inline __m256i w256_lanes64(int k)
{
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(k), _mm256_setr_epi64x(0, 1, 2, 3));
}

A2W static inline __m128i w256_lanes32(int k)
{
    return _mm_cmpgt_epi32(_mm_set1_epi32(k), _mm_setr_epi32(0, 1, 2, 3));
}

/* For each 8-bit mask, the indices of its set bits packed to the front,
 * one byte each: the permutation that compresses the accepted lanes. */
#define W256_B(m, l) (((m) >> (l) & 1) ? (uint64_t)(l) << (8 * __builtin_popcount((m) & ((1u << (l)) - 1))) : 0)
#define W256_P(m) (W256_B(m, 0) | W256_B(m, 1) | W256_B(m, 2) | W256_B(m, 3) | \
                   W256_B(m, 4) | W256_B(m, 5) | W256_B(m, 6) | W256_B(m, 7))
#define W256_P4(m) W256_P(m), W256_P((m) + 1), W256_P((m) + 2), W256_P((m) + 3)
#define W256_P16(m) W256_P4(m), W256_P4((m) + 4), W256_P4((m) + 8), W256_P4((m) + 12)
#define W256_P64(m) W256_P16(m), W256_P16((m) + 16), W256_P16((m) + 32), W256_P16((m) + 48)
static const uint64_t w256_pack[256] = { W256_P64(0u), W256_P64(64u), W256_P64(128u), W256_P64(192u) };

/* The first k (0..8) of eight 32-bit lanes. */
A2W static inline __m256i w256_lanes32x8(int k)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

A2W static inline __m256d w256_loadf(const float *a, __m128i lanes)
{
    return _mm256_cvtps_pd(_mm_maskload_ps(a, lanes));
}

A2W static inline int w256_particles(oct_workspace *ws, const oct_walk_params *p,
                                     const oct_group *g, int quad, const oct_sources *src,
                                     uint32_t begin, uint32_t count)
{
    list_f *P = ws->pf;
    /* room for whole vectors: the lanes past count are written and then
     * overwritten by the next entries or the padding (masked stores are
     * slow on AMD) */
    if (P->n + count + 3 > OCT_LIST_CAP) flush(ws, p, g, quad);
    if (count + 3 > OCT_LIST_CAP) return push_particles(ws, p, g, quad, src, begin, count);
    const __m256d gx = _mm256_set1_pd(g->centre[0]), gy = _mm256_set1_pd(g->centre[1]),
                  gz = _mm256_set1_pd(g->centre[2]), range = _mm256_set1_pd(OCT_FLOAT_RANGE),
                  il = _mm256_set1_pd(ws->il), sign = _mm256_set1_pd(-0.0);
    uint32_t n = P->n;
    for (uint32_t i = 0; i < count; i += 4) {
        int k = count - i >= 4 ? 4 : (int)(count - i);
        __m256i l64 = w256_lanes64(k);
        __m128i l32 = w256_lanes32(k);
        uint32_t s = begin + i;
        __m256d dx = _mm256_mul_pd(_mm256_sub_pd(_mm256_maskload_pd(src->x + s, l64), gx), il);
        __m256d dy = _mm256_mul_pd(_mm256_sub_pd(_mm256_maskload_pd(src->y + s, l64), gy), il);
        __m256d dz = _mm256_mul_pd(_mm256_sub_pd(_mm256_maskload_pd(src->z + s, l64), gz), il);
        __m256d ok = _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(_mm256_andnot_pd(sign, dx), range, _CMP_LT_OQ),
                                                 _mm256_cmp_pd(_mm256_andnot_pd(sign, dy), range, _CMP_LT_OQ)),
                                   _mm256_cmp_pd(_mm256_andnot_pd(sign, dz), range, _CMP_LT_OQ));
        int want = (1 << k) - 1;
        if ((_mm256_movemask_pd(ok) & want) != want) return 1;
        _mm_storeu_ps(P->x + n + i, _mm256_cvtpd_ps(dx));
        _mm_storeu_ps(P->y + n + i, _mm256_cvtpd_ps(dy));
        _mm_storeu_ps(P->z + n + i, _mm256_cvtpd_ps(dz));
        _mm_storeu_ps(P->m + n + i, _mm256_cvtpd_ps(_mm256_maskload_pd(src->m + s, l64)));
        _mm_storeu_si128((__m128i *)(P->id + n + i), _mm_maskload_epi32((const int *)(src->id + s), l32));
    }
    P->n = n + count;
    return 0;
}

A2W static int walk256(const oct_sources *src, const oct_walk_params *p, oct_workspace *ws,
                       const oct_group *g, int quad, double gfac, uint64_t *ncell_out,
                       uint64_t *npart_out)
{
    const oct_cell_columns *col = src->col;
    const double rg = g->radius;
    const __m256d gx = _mm256_set1_pd(g->centre[0]), gy = _mm256_set1_pd(g->centre[1]),
                  gz = _mm256_set1_pd(g->centre[2]), vrg = _mm256_set1_pd(rg),
                  vrg2 = _mm256_set1_pd(rg * rg), vgfac = _mm256_set1_pd(gfac),
                  zero = _mm256_setzero_pd();
    const __m128i one = _mm_set1_epi32(1);
    const int accel = p->mac == GP_MAC_ACCELERATION;
    const double lcap = p->lcap;
    const float eps2f = ws->eps2f;
    const double il = ws->il;
    const __m256d vil = _mm256_set1_pd(il);
    uint64_t ncell = 0, npart = 0;
    list_f *C = ws->cf;
    uint32_t sp = 0;

    const oct_wcell *root = &src->cells[0];
    switch (simd_root(src, p, ws, g, quad, gfac)) {
    case -1: return 1;
    case 0: ncell++; break;
    case 1:
        if (w256_particles(ws, p, g, quad, src, root->first, root->count)) return 1;
        npart += root->count;
        rec_leaf(ws, root->first, root->count);
        break;
    default: ws->stack[sp++] = 0;
    }
    while (sp > 0) {
        uint32_t c = ws->stack[--sp];
        uint32_t f = col->first[c], nch = col->nchild[c];
        unsigned acc = 0;
        __m128 ox[2], oy[2], oz[2];   /* the children's scaled offsets, by halves */
        ox[1] = oy[1] = oz[1] = _mm_setzero_ps();
        for (uint32_t h = 0; h < nch; h += 4) {
            const int k = nch - h >= 4 ? 4 : (int)(nch - h);
            const uint32_t b = f + h;
            const __m256i l64 = w256_lanes64(k);
            const __m128i l32 = w256_lanes32(k);
            __m256d dx = _mm256_sub_pd(_mm256_maskload_pd(col->cx + b, l64), gx);
            __m256d dy = _mm256_sub_pd(_mm256_maskload_pd(col->cy + b, l64), gy);
            __m256d dz = _mm256_sub_pd(_mm256_maskload_pd(col->cz + b, l64), gz);
            __m256d d2 = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(dx, dx), _mm256_mul_pd(dy, dy)),
                                       _mm256_mul_pd(dz, dz));
            __m256d rc = w256_loadf(col->rcrit + b, l32);
            if (accel) {
                rc = _mm256_mul_pd(rc, vgfac);
                if (lcap > 0) {   /* oct_accel_rcrit: at least the box's side x lcap */
                    __m256d side = zero;
                    for (int a = 0; a < 3; a++)
                        /* (max_pd answers its second operand for a NaN, as walk512's) */
                        side = _mm256_max_pd(_mm256_sub_pd(w256_loadf(col->bhi[a] + b, l32),
                                                           w256_loadf(col->blo[a] + b, l32)),
                                             side);
                    rc = _mm256_max_pd(rc, _mm256_mul_pd(side, _mm256_set1_pd(lcap)));
                }
            }
            __m256d r = _mm256_add_pd(rc, vrg);
            __m256d ok = _mm256_and_pd(_mm256_castsi256_pd(l64), _mm256_cmp_pd(_mm256_mul_pd(r, r), d2, _CMP_LT_OQ));
            __m128i cnt = _mm_maskload_epi32((const int *)(col->count + b), l32);
            /* counts stay far below 2^31: a signed compare is the unsigned one */
            ok = _mm256_and_pd(ok, _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm_cmpgt_epi32(cnt, one))));
            /* box test: r = group centre - com = -d; e = distance outside [lo, hi] per axis */
            __m256d rx = _mm256_sub_pd(zero, dx), ry = _mm256_sub_pd(zero, dy), rz = _mm256_sub_pd(zero, dz);
            __m256d lo, hi, ex, e2;
            lo = w256_loadf(col->blo[0] + b, l32);
            hi = w256_loadf(col->bhi[0] + b, l32);
            ex = _mm256_max_pd(_mm256_max_pd(_mm256_sub_pd(lo, rx), _mm256_sub_pd(rx, hi)), zero);
            e2 = _mm256_mul_pd(ex, ex);
            lo = w256_loadf(col->blo[1] + b, l32);
            hi = w256_loadf(col->bhi[1] + b, l32);
            ex = _mm256_max_pd(_mm256_max_pd(_mm256_sub_pd(lo, ry), _mm256_sub_pd(ry, hi)), zero);
            e2 = _mm256_add_pd(e2, _mm256_mul_pd(ex, ex));
            lo = w256_loadf(col->blo[2] + b, l32);
            hi = w256_loadf(col->bhi[2] + b, l32);
            ex = _mm256_max_pd(_mm256_max_pd(_mm256_sub_pd(lo, rz), _mm256_sub_pd(rz, hi)), zero);
            e2 = _mm256_add_pd(e2, _mm256_mul_pd(ex, ex));
            ok = _mm256_and_pd(ok, _mm256_cmp_pd(e2, vrg2, _CMP_GT_OQ));
            unsigned bits = (unsigned)_mm256_movemask_pd(ok);
            if (bits) {
                __m256d d2s = _mm256_mul_pd(_mm256_mul_pd(d2, vil), vil);
                __m256d far = _mm256_cmp_pd(d2s, w256_loadf(col->d2max + b, l32), _CMP_NLT_UQ);
                if ((unsigned)_mm256_movemask_pd(far) & bits) return 1;
                acc |= bits << h;
            }
            ox[h / 4] = _mm256_cvtpd_ps(_mm256_mul_pd(dx, vil));
            oy[h / 4] = _mm256_cvtpd_ps(_mm256_mul_pd(dy, vil));
            oz[h / 4] = _mm256_cvtpd_ps(_mm256_mul_pd(dz, vil));
        }
        if (acc) {
            if (C->n + 8 > OCT_LIST_CAP) flush(ws, p, g, quad);
            uint32_t j = C->n;
            /* (8 entries written, na kept: the list has room for 8) */
            const __m256i pk = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)w256_pack[acc]));
            const __m256i l8 = w256_lanes32x8((int)nch);
#define W256_PUT(dst, v) _mm256_storeu_ps((dst) + j, _mm256_permutevar8x32_ps((v), pk))
            W256_PUT(C->x, _mm256_set_m128(ox[1], ox[0]));
            W256_PUT(C->y, _mm256_set_m128(oy[1], oy[0]));
            W256_PUT(C->z, _mm256_set_m128(oz[1], oz[0]));
            W256_PUT(C->m, _mm256_maskload_ps(col->m + f, l8));
            for (int k = 0; k < 6; k++)
                W256_PUT(C->s[k], quad ? _mm256_maskload_ps(col->s[k] + f, l8) : _mm256_setzero_ps());
            W256_PUT(C->et, quad ? _mm256_mul_ps(_mm256_set1_ps(eps2f), _mm256_maskload_ps(col->tr + f, l8))
                                 : _mm256_setzero_ps());
#undef W256_PUT
            _mm256_storeu_si256((__m256i *)(C->id + j), _mm256_set1_epi32(-1));
            uint32_t na = (uint32_t)__builtin_popcount(acc);
            if (ws->record)
                for (unsigned a = acc; a; a &= a - 1) rec_cell(ws, f + (unsigned)__builtin_ctz(a));
            C->n = j + na;
            ncell += na;
        }
        unsigned open = ((1u << nch) - 1) & ~acc;
        for (unsigned o = open; o; o &= o - 1) {
            unsigned l = (unsigned)__builtin_ctz(o);
            if (col->nchild[f + l]) continue;
            uint32_t cnt1 = col->count[f + l];
            if (w256_particles(ws, p, g, quad, src, col->first[f + l], cnt1)) return 1;
            npart += cnt1;
            rec_leaf(ws, col->first[f + l], cnt1);
        }
        /* (popped last child first: the order only changes the list order) */
        for (unsigned o = open; o; o &= o - 1) {
            unsigned l = (unsigned)__builtin_ctz(o);
            if (col->nchild[f + l]) ws->stack[sp++] = f + l;
        }
    }
    flush(ws, p, g, quad);
    *ncell_out = ncell;
    *npart_out = npart;
    return 0;
}

#endif

/* One walk of group g with parameters p; returns 1 (and leaves the
 * results undefined) when a float mode meets coordinates or payloads out of
 * its range. */
static int walk_once(const oct_sources *src, const oct_walk_params *p, oct_workspace *ws,
                     const oct_group *g, uint64_t *ncell_out, uint64_t *npart_out)
{
    uint32_t nt = g->n;
    int quad = p->quadrupole;
    const int floats = p->prec != OCT_DOUBLE;
    memset(ws->acc, 0, 4 * (size_t)nt * sizeof *ws->acc);
    memset(ws->accf, 0, 4 * (size_t)nt * sizeof *ws->accf);
    const double il = ldexp(1.0, -src->e_len);
    ws->il = il;
    ws->eps2f = (float)(p->eps2 * il * il);
    /* softening far beyond the box: out of the float modes' range */
    if (floats && !((double)ws->eps2f < 1e30)) return 1;
    for (uint32_t t = 0; t < nt; t++) {
        double rx = g->x[t] - g->centre[0], ry = g->y[t] - g->centre[1], rz = g->z[t] - g->centre[2];
        ws->td[3 * t] = rx; ws->td[3 * t + 1] = ry; ws->td[3 * t + 2] = rz;
        rx *= il; ry *= il; rz *= il;
        if (floats && !(fabs(rx) < OCT_FLOAT_RANGE && fabs(ry) < OCT_FLOAT_RANGE && fabs(rz) < OCT_FLOAT_RANGE))
            return 1;
        ws->tf[3 * t] = (float)rx; ws->tf[3 * t + 1] = (float)ry; ws->tf[3 * t + 2] = (float)rz;
    }
    ws->cf->n = ws->pf->n = ws->cd->n = ws->pd->n = 0;
    ws->rec.ncell = ws->rec.npart = 0;
    ws->rec_ok = 1;
    ws->rec_g = NULL;

    uint64_t ncell = 0, npart = 0;
    if (src->n > 0) {
        const double gc[3] = { g->centre[0], g->centre[1], g->centre[2] };
        const double rg = g->radius;
        const int accel = p->mac == GP_MAC_ACCELERATION;
        const double gfac = oct_walk_gfac(p, g);
#ifdef OCT_HAVE_X86_SIMD
        ws->cells_q = floats && src->col && oct_simd_level() >= OCT_SIMD_AVX2;
        if (ws->cells_q) {
            int out = k512_available() ? walk512(src, p, ws, g, quad, gfac, &ncell, &npart)
                                       : walk256(src, p, ws, g, quad, gfac, &ncell, &npart);
            if (out) return 1;
            goto sums;
        }
#endif
        uint32_t sp = 0;
        ws->stack[sp++] = 0;
        while (sp > 0) {
            uint32_t c = ws->stack[--sp];
            const oct_wcell *wc = &src->cells[c];
            double d[3], d2;
            int accept = oct_walk_accepts(wc, gc, rg, accel, gfac, p->lcap, d, &d2);
            const double dx = d[0], dy = d[1], dz = d[2];
            uint32_t nchild = wc->nchild;
            if (accept && floats && !(d2 * ws->il * ws->il < (double)src->payf[c].d2max)) return 1;
            if (accept) {
                push_cell(ws, p, g, quad, src, c, dx, dy, dz);
                ncell++;
                rec_cell(ws, c);
            } else if (nchild == 0) {
                if (push_particles(ws, p, g, quad, src, wc->first, wc->count)) return 1;
                npart += wc->count;
                rec_leaf(ws, wc->first, wc->count);
            } else {
                /* children pushed in reverse so they are visited in key order */
                for (uint32_t k = nchild; k-- > 0;) ws->stack[sp++] = wc->first + k;
            }
        }
        flush(ws, p, g, quad);
    }
#ifdef OCT_HAVE_X86_SIMD
sums:;   /* in C11 a label is followed by a statement, never a declaration */
#endif
    /* back to the input's units: a = sum * 2^(e_mass - 2 e_len), phi = sum
     * * 2^(e_mass - e_len) (float modes; double: e_len = 0). One exact
     * multiply each where the factor is a double, else ldexp. */
    const int el = floats ? src->e_len : 0;
    const int ka = src->e_mass - 2 * el, kp = src->e_mass - el;
    const int one_mul = ka >= -1000 && ka <= 1000 && kp >= -1000 && kp <= 1000;
    const double fa = one_mul ? ldexp(1.0, ka) : 1.0, fp = one_mul ? ldexp(1.0, kp) : 1.0;
    for (uint32_t t = 0; t < nt; t++) {
        double a0, a1, a2, a3;
        if (p->prec == OCT_SINGLE) {
            a0 = ws->accf[4 * t]; a1 = ws->accf[4 * t + 1]; a2 = ws->accf[4 * t + 2]; a3 = ws->accf[4 * t + 3];
        } else {
            a0 = ws->acc[4 * t]; a1 = ws->acc[4 * t + 1]; a2 = ws->acc[4 * t + 2]; a3 = ws->acc[4 * t + 3];
        }
        if (one_mul) {
            a0 *= fa; a1 *= fa; a2 *= fa; a3 *= fp;
        } else {
            a0 = ldexp(a0, ka); a1 = ldexp(a1, ka); a2 = ldexp(a2, ka); a3 = ldexp(a3, kp);
        }
        g->ax[t] = p->G * a0; g->ay[t] = p->G * a1; g->az[t] = p->G * a2;
        if (g->pot) g->pot[t] = p->G * a3;
    }
    ws->rec.cell = ws->rec_cell;
    ws->rec.part = ws->rec_part;
    ws->rec_cells = src->cells;
    ws->rec_g = g;
    *ncell_out = ncell;
    *npart_out = npart;
    return 0;
}

void oct_walk_group(const oct_sources *src, const oct_walk_params *p, oct_workspace *ws,
                   const oct_group *g, uint64_t *pp, uint64_t *pc)
{
    uint64_t ncell = 0, npart = 0;
    if (walk_once(src, p, ws, g, &ncell, &npart)) {
        if (src->prepare_records) {
#pragma omp critical(oct_prepare_records)
            src->prepare_records(src->owner);
        }
        oct_walk_params pd = *p;
        pd.prec = OCT_DOUBLE;
        walk_once(src, &pd, ws, g, &ncell, &npart);
    }
    *pp += npart * g->n;
    *pc += ncell * g->n;
}

int oct_walk_layouts(oct_precision prec)
{
#ifdef OCT_HAVE_X86_SIMD
    if (prec != OCT_DOUBLE && oct_simd_level() >= OCT_SIMD_AVX2) return OCT_PREPARE_COLUMNS;
#endif
    return OCT_PREPARE_RECORDS;
}
